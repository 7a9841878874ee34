package shellparse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// fixture is a directory tree with stub executables, so corpus results do
// not depend on what the machine has installed:
//
//	R/trusted    stubs of everyday tools (trusted)
//	R/trusted2   linkedtool -> R/project/bin/linkedtool-real (into the project),
//	             cellartool -> R/cellar/cellartool (outside, like Homebrew)
//	R/untrusted  shadowtool (also in trusted), onlyuntrusted
//	R/project    the project and cwd; bin/projtool, tools/reltool
//	R/home       $HOME
//
// PATH = R/project/bin : tools (relative) : R/untrusted : R/trusted : R/trusted2
type fixture struct {
	root string
	env  Env
	repl *strings.Replacer
}

// stubNames are the everyday tools the trusted stub directory holds.
var stubNames = strings.Fields(`go gofmt git gh npm npx node yarn pnpm bun deno ls cat grep rg
find sed gsed awk gawk head tail wc make cargo rustc rustup python python3 python3.12 pip pip3
pytest uv poetry docker kubectl curl wget mkdir rmdir rm cp mv touch chmod chown ln tar zip unzip
gzip gunzip ssh scp sftp rsync sqlite3 man diff jq tree which du df ps sort uniq cut tr tee xxd
file stat date basename dirname realpath readlink staticcheck golangci-lint eslint prettier tsc
jest vitest sh bash dash zsh fish perl ruby php lua tclsh env sudo doas xargs timeout nohup nice
ionice time watch parallel stdbuf setsid script flock chroot busybox strace vim less more
printf echo test [ pwd true false kill type cd umask ulimit exit wait : dirs help popd pushd times
shadowtool reltool projtool nl fmt od hexdump md5sum sha256sum base64 column comm join paste
split csplit expand unexpand fold rev tac shuf seq yes sleep id whoami uname hostname env2
java javac mvn gradle dotnet swift clang gcc cc ld nproc free uptime lsof netstat ss ping dig
htop top kill pkill pgrep killall mktemp install patch svn hg bzr cmake ninja meson bazel
tox nox black ruff mypy flake8 isort pre-commit terraform ansible helm az aws gcloud openssl
gpg ssh-keygen git-lfs code cursor rake bundle gem composer mix elixir erl iex julia Rscript
lldb gdb valgrind osascript python3.12-dbg python3.11m perl5.36.0 node18 pypy3.9
ipython ts-node tsx dc open xdg-open openvt nc ncat socat psql mysql cmake sftp`)

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		bash = "/bin/sh"
	}
	// The stub records "$0", "$#" and each argument, NUL-terminated.
	// With LG_RECORD_DIR, each process records in a file of its own: the
	// parts of a pipeline run at once.
	stub := "#!" + bash + "\n" + `if [ -n "$LG_RECORD_DIR" ]; then LG_RECORD=$LG_RECORD_DIR/$$; fi; if [ -n "$LG_RECORD" ]; then { printf '%s\0' "$0" "$#"; if [ $# -gt 0 ]; then printf '%s\0' "$@"; fi; } >> "$LG_RECORD"; fi` + "\n"
	mk := func(rel string, mode os.FileMode) {
		testfs.Write(tb, filepath.Join(root, rel), []byte(stub), mode)
	}
	for _, n := range stubNames {
		mk(filepath.Join("trusted", n), 0o755)
	}
	mk("trusted/notexec", 0o644)
	mk("untrusted/shadowtool", 0o755)
	mk("untrusted/onlyuntrusted", 0o755)
	mk("project/bin/projtool", 0o755)
	mk("project/bin/linkedtool-real", 0o755)
	mk("project/tools/reltool", 0o755)
	mk("cellar/cellartool", 0o755)
	for _, l := range []struct{ link, target string }{
		{"trusted2/linkedtool", "../project/bin/linkedtool-real"},
		{"trusted2/cellartool", filepath.Join(root, "cellar/cellartool")},
	} {
		if err := os.MkdirAll(filepath.Join(root, "trusted2"), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Symlink(l.target, filepath.Join(root, l.link)); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range []string{"project/go.mod", "project/input.txt", "home/.keep", "empty/.keep", "runs/.keep"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644); err != nil {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	j := func(s string) string { return filepath.Join(root, s) }
	return &fixture{
		root: root,
		env: Env{
			Cwd:        j("project"),
			ProjectDir: j("project"),
			Home:       j("home"),
			Path:       strings.Join([]string{j("project/bin"), "tools", j("untrusted"), j("trusted"), j("trusted2")}, string(os.PathListSeparator)),
			Trusted:    []string{j("trusted"), j("trusted2")},
		},
		repl: strings.NewReplacer("@T@", j("trusted"), "@U@", j("untrusted"), "@P@", j("project"), "@H@", j("home"), "@R@", root),
	}
}

// row is one equivalence row of the corpus: several spellings, one result.
type row struct {
	file    string
	line    int
	verdict Verdict
	tags    map[string]bool
	argv    []string // expected argv values, placeholders expanded
	glob    []int    // expected indices of glob words (nil: not checked)
	exe     string   // expected executable, relative to the fixture root
	redir   []Redirect
	assigns []Assign
	warn    int // expected number of warnings; -1: not checked
	reason  string
	inputs  []string
}

// loadCorpus reads testdata/shell/*.txt. Format:
//
//	# comment
//	@ VERDICT [TAG...]
//	> argv ["go","test"]      expected argv (JSON)
//	> glob [1]                indices of glob words
//	> exe trusted/go          expected executable below the fixture root
//	> redir [{"op":">","target":"x","writes":true}]
//	> assigns [{"name":"LANG","value":"C"}]
//	> warn 1                  expected number of warnings
//	> reason text             substring of the reason
//	an input
//	q:"a Go-quoted input\n"
func loadCorpus(tb testing.TB) []row {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "shell", "*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatal("no corpus files in testdata/shell")
	}
	var rows []row
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var cur *row
		n := 0
		flush := func() {
			if cur != nil {
				if len(cur.inputs) == 0 {
					tb.Fatalf("%s:%d: row without inputs", f, cur.line)
				}
				rows = append(rows, *cur)
			}
		}
		for sc.Scan() {
			n++
			line := sc.Text()
			switch {
			case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "@ "):
				flush()
				fields := strings.Fields(line[2:])
				cur = &row{file: filepath.Base(f), line: n, verdict: Verdict(fields[0]), tags: map[string]bool{}, warn: -1}
				switch cur.verdict {
				case Simple, Chained, Indirect, PathShadowed, Unparseable:
				default:
					tb.Fatalf("%s:%d: unknown verdict %q", f, n, fields[0])
				}
				for _, t := range fields[1:] {
					cur.tags[t] = true
				}
			case strings.HasPrefix(line, "> "):
				if cur == nil || len(cur.inputs) > 0 {
					tb.Fatalf("%s:%d: expectation outside a row header", f, n)
				}
				key, val, _ := strings.Cut(line[2:], " ")
				var err error
				switch key {
				case "argv":
					err = json.Unmarshal([]byte(val), &cur.argv)
				case "glob":
					err = json.Unmarshal([]byte(val), &cur.glob)
				case "exe":
					cur.exe = val
				case "redir":
					err = json.Unmarshal([]byte(val), &cur.redir)
				case "assigns":
					err = json.Unmarshal([]byte(val), &cur.assigns)
				case "warn":
					cur.warn, err = strconv.Atoi(val)
				case "reason":
					cur.reason = val
				default:
					err = fmt.Errorf("unknown key %q", key)
				}
				if err != nil {
					tb.Fatalf("%s:%d: %v", f, n, err)
				}
			default:
				if cur == nil {
					tb.Fatalf("%s:%d: input before a row header", f, n)
				}
				in := line
				if rest, ok := strings.CutPrefix(line, "q:"); ok {
					in, err = strconv.Unquote(rest)
					if err != nil {
						tb.Fatalf("%s:%d: %v", f, n, err)
					}
				}
				cur.inputs = append(cur.inputs, in)
			}
		}
		if err := sc.Err(); err != nil {
			tb.Fatal(err)
		}
		flush()
		fh.Close()
	}
	return rows
}
