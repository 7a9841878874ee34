package policy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestEnvrcLoads: what a project's .envrc loads (direnv's source_env,
// dotenv, use nix and flake, bash's source, a script it runs) is found,
// and followed; a search path, a watched file, an assignment and a path
// outside the project are not (controls).
func TestEnvrcLoads(t *testing.T) {
	proj := realDir(t, t.TempDir())
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(`# the team's
source_env_if_exists .envrc.local
dotenv_if_exists
if has nix; then use nix; fi
use flake ./nix
PATH_add bin
watch_file package.json
./scripts/setup.sh --quiet
source_env ../shared   # outside
export FOO=bar/baz
layout python3
dotenv .env.dev; source "tools/env.sh"
`), 0o644)
	testfs.Write(t, filepath.Join(proj, ".envrc.local"), []byte("source_env_if_exists more/.envrc.more\n"), 0o644)
	got := EnvrcLoads(proj)
	want := []string{".envrc.local", ".env", "shell.nix", "default.nix", "nix", "nix/flake.nix", "nix/flake.lock", "scripts/setup.sh", ".env.dev", "tools/env.sh", "more/.envrc.more", "scripts"}
	for _, w := range want {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("EnvrcLoads = %q, want %s in it", got, w)
		}
	}
	for _, p := range got {
		rel, _ := filepath.Rel(proj, p)
		if !slices.Contains(want, rel) && !strings.HasSuffix(rel, "/.envrc") {
			t.Errorf("control: EnvrcLoads holds %s", rel)
		}
	}
	if c := (Places{Imports: got}).Prepare().Classify(filepath.Join(proj, ".env")); c.Tier != ExecConfig {
		t.Errorf("Classify(.env) = %+v, want executable configuration", c)
	}
}

// TestEnvrcLoadsAsDirenv: direnv itself is the oracle that an allowed
// .envrc's source_env_if_exists and dotenv_if_exists load files it never
// asked about, and EnvrcLoads finds both.
func TestEnvrcLoadsAsDirenv(t *testing.T) {
	direnv, err := exec.LookPath("direnv")
	if err != nil {
		t.Skip("direnv is not installed (scripts/deps installs it)")
	}
	home := realDir(t, t.TempDir())
	proj := filepath.Join(home, "proj")
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte("source_env_if_exists .envrc.local\ndotenv_if_exists\n"), 0o644)
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + home + "/.config", "XDG_DATA_HOME=" + home + "/.local/share"}
	run := func(args ...string) string {
		cmd := exec.Command(direnv, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("direnv %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("allow", proj)
	// Written after the allowance: direnv loads them all the same.
	testfs.Write(t, filepath.Join(proj, ".envrc.local"), []byte("export FROM_LOCAL=ran\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, ".env"), []byte("FROM_DOTENV=ran\n"), 0o644)
	if got := run("exec", proj, "sh", "-c", "echo $FROM_LOCAL $FROM_DOTENV"); got != "ran ran" {
		t.Fatalf("the oracle: direnv loaded %q, want both files' variables", got)
	}
	wantLoads(t, EnvrcLoads(proj), proj, []string{".envrc.local", ".env"}, nil)
}

// TestEnvrcLoadsForms: the forty-third attack run's forms of a .envrc
// that loads the tree's files: a line continued, a file an inner command
// reads (export $(grep ... .env.shared | xargs)), a program an eval's
// command substitution runs, and a script's neighbour that it imports.
// direnv is the oracle that each runs.
func TestEnvrcLoadsForms(t *testing.T) {
	direnvDo, proj, mark := direnvProject(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(`source_env_if_exists \
  .envrc.cont
export $(grep -v '^#' .env.shared | xargs)
eval "$(./gen/genenv)"
`+python+` py/envgen.py >/dev/null
`), 0o644)
	testfs.Write(t, filepath.Join(proj, ".envrc.cont"), []byte("echo cont >> "+mark+"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, ".env.shared"), []byte("FROM_SHARED=ran\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "gen", "genenv"), []byte("#!/bin/sh\necho 'echo genenv >> "+mark+"'\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "py", "envgen.py"), []byte("import helper\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "py", "helper.py"), []byte("open('"+mark+"', 'a').write('helper\\n')\n"), 0o644)
	direnvDo("allow", proj)
	if got := direnvDo("exec", proj, "sh", "-c", "echo $FROM_SHARED"); got != "ran" {
		t.Fatalf("the oracle: .env.shared's variable is %q", got)
	}
	if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "cont") || !strings.Contains(string(b), "genenv") || !strings.Contains(string(b), "helper") {
		t.Fatalf("the oracle: direnv ran %q, want the continued line's, the eval's and the import's", b)
	}
	wantLoads(t, EnvrcLoads(proj), proj, []string{".envrc.cont", ".env.shared", "gen/genenv", "py"}, nil)
}

// TestEnvrcLoadsFormsMore: the forty-fourth attack run's loop over a
// glob (for f in .envrc.d/*.sh; do source_env "$f"; done) protects the
// glob's directory; what an everyday .envrc reads into one variable, or
// a virtual environment it sources, protects that file alone, not
// package.json, config/ or .venv/bin/ (controls).
func TestEnvrcLoadsFormsMore(t *testing.T) {
	proj := realDir(t, t.TempDir())
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(`for f in .envrc.d/*.sh; do source_env "$f"; done
export NODE_VERSION=$(sed -n 's/.*"node": "\(.*\)".*/\1/p' package.json)
export RAILS_MASTER_KEY=$(cat config/master.key)
source .venv/bin/activate
`), 0o644)
	for _, rel := range []string{".envrc.d/base.sh", "package.json", "config/master.key", "config/routes.rb", ".venv/bin/activate", ".venv/bin/pip"} {
		testfs.Write(t, filepath.Join(proj, rel), nil, 0o644)
	}
	wantLoads(t, EnvrcLoads(proj), proj, []string{".envrc.d", "config/master.key", ".venv/bin/activate"}, []string{"package.json", "config", ".venv/bin", ".venv"})
}

// TestEnvrcLoadsComments: a path in a comment is none a command takes
// (the twenty-fourth session's false positive: "export A=1 # see
// tools/x.sh" protected tools/x.sh); a # inside a word or quotes begins
// none. direnv is the oracle for what runs.
func TestEnvrcLoadsComments(t *testing.T) {
	direnvDo, proj, mark := direnvProject(t)
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(`# source_env secrets/.loader
export A=1 # see tools/x.sh
source_env_if_exists .envrc.local  # the team's
echo "#" ; source_env 'a b#c'
source_env d#e; dotenv_if_exists f\ #g
dotenv_if_exists .env.${STAGE:-dev}
echo $'\' #'; source_env lib/e.sh
`), 0o644)
	for _, name := range []string{".envrc.local", "a b#c", "d#e", "tools/x.sh", "secrets/.loader", "lib/e.sh"} {
		testfs.Write(t, filepath.Join(proj, name), []byte("echo '"+name+"' >> "+mark+"\n"), 0o644)
	}
	testfs.Write(t, filepath.Join(proj, "f #g"), []byte("LOADED_FG=1\n"), 0o644) // dotenv's
	testfs.Write(t, filepath.Join(proj, ".env.dev"), []byte("LOADED_STAGE=1\n"), 0o644)
	direnvDo("allow", proj)
	if got := direnvDo("exec", proj, "sh", "-c", "echo $LOADED_FG $LOADED_STAGE"); got != "1 1" {
		t.Fatalf("the oracle: 'f #g' and .env.dev loaded %q", got)
	}
	b, _ := os.ReadFile(mark)
	ran := string(b)
	got := EnvrcLoads(proj)
	for _, name := range []string{".envrc.local", "a b#c", "d#e", "f #g", ".env.dev", "lib/e.sh"} {
		if !strings.Contains(ran, name) && name != "f #g" && name != ".env.dev" { // dotenv's: its variable, above
			t.Fatalf("the oracle: direnv ran %q, not %s", ran, name)
		}
		if !slices.Contains(got, filepath.Join(proj, name)) {
			t.Errorf("EnvrcLoads = %q, want %s in it", got, name)
		}
	}
	for _, name := range []string{"tools/x.sh", "secrets/.loader", "tools", "secrets"} {
		if strings.Contains(ran, name) {
			t.Fatalf("the oracle: direnv ran %s", name)
		}
		if slices.Contains(got, filepath.Join(proj, name)) {
			t.Errorf("control: EnvrcLoads = %q holds %s, named in a comment", got, name)
		}
	}
}

// TestUncommented: a # begins a comment only where bash's does: not in
// quotes, not escaped, not inside a word, and a substitution is copied
// whole (its own comments are judged when its commands are read), so a
// quote inside it does not end the quotes around it.
func TestUncommented(t *testing.T) {
	for _, c := range [][2]string{
		{"a # b\nc", "a \nc"},
		{"# x\ny", "\ny"},
		{`echo "a # b" c#d 'e # f' \# g`, `echo "a # b" c#d 'e # f' \# g`},
		{`eval "$(echo "x # y")"; source ./evil.sh # z`, `eval "$(echo "x # y")"; source ./evil.sh `},
		{"a `b # c` d # e", "a `b # c` d "},
		{"x;# y\nz", "x;\nz"},
		{"$(a\n# b\nc) d", "$(a\n# b\nc) d"},
		{`echo $'\' #'; source tools/e.sh # x`, `echo $'\' #'; source tools/e.sh `},
	} {
		if got := uncommented(c[0]); got != c[1] {
			t.Errorf("uncommented(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	// Through the reader: the command after the substitution is read.
	proj := t.TempDir()
	if got := commandPaths(`eval "$(echo "x # y")"; source ./evil.sh`, proj, proj, envrc); !slices.Contains(got, filepath.Join(proj, "evil.sh")) {
		t.Errorf("commandPaths = %q, want evil.sh in it", got)
	}
}

// direnvProject is a direnv oracle's setup (the test skipped without
// direnv): the project proj in a home of the test's own (its links
// resolved) and a marker's path mark beside it, neither made; and do,
// which runs direnv in proj with that home as its HOME and configuration
// and gives its output, trimmed.
func direnvProject(t *testing.T) (do func(args ...string) string, proj, mark string) {
	t.Helper()
	direnv, err := exec.LookPath("direnv")
	if err != nil {
		t.Skip("direnv is not installed (scripts/deps installs it)")
	}
	home := realDir(t, t.TempDir())
	proj = filepath.Join(home, "proj")
	mark = filepath.Join(home, "ran")
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + home + "/.config", "XDG_DATA_HOME=" + home + "/.local/share"}
	return func(args ...string) string {
		cmd := exec.Command(direnv, args...)
		cmd.Dir, cmd.Env = proj, env
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}, proj, mark
}

// TestEnvrcLoadsVariables: the sixty-third attack run's .envrc forms: a
// path through a variable the .envrc gave a value (API=svc/api;
// source_env_if_exists $API/dev.sh, which was taken for dev.sh at the
// top), and an exported variable that makes a program load a file
// (export BASH_ENV=$PWD/..., which each bash the user's shell starts
// sources). direnv and bash are the oracle that each runs; controls: an
// exported search path (PYTHONPATH=$PWD/src) protects the start-up files
// Python reads there, not src/, and a variable no program loads from
// (FOO) nothing.
func TestEnvrcLoadsVariables(t *testing.T) {
	direnvDo, proj, mark := direnvProject(t)
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(`API=svc/api
source_env_if_exists $API/dev.sh
export BASH_ENV=$PWD/svc/api/bashenv.sh
export GIT_SSH_COMMAND="$PWD/tools/ssh.sh -v" FOO=$PWD/src/foo.txt
export PYTHONPATH=$PWD/src
`), 0o644)
	testfs.Write(t, filepath.Join(proj, "svc", "api", "dev.sh"), []byte("echo dev >> "+mark+"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "svc", "api", "bashenv.sh"), []byte("echo bashenv >> "+mark+"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "dev.sh"), []byte("echo top >> "+mark+"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "src", "app.py"), nil, 0o644)
	direnvDo("allow", proj)
	direnvDo("exec", proj, "bash", "-c", "true")
	if b, _ := os.ReadFile(mark); string(b) != "dev\nbashenv\n" {
		t.Fatalf("the oracle: direnv and bash ran %q, want svc/api/dev.sh's and bashenv.sh's lines alone", b)
	}
	wantLoads(t, EnvrcLoads(proj), proj, []string{"svc/api/dev.sh", "svc/api/bashenv.sh", "tools/ssh.sh", "src/sitecustomize.py", "src/usercustomize.py"}, []string{"dev.sh", "src", "src/app.py", "src/foo.txt"})
}

// TestEnvrcLoadsVariableForms: the sixty-fourth attack run's ways a
// .envrc names the file it sources through its own variables: a variable
// that is the whole word, a default whose variable has a value, a
// function read before the assignment it uses, a value a sourced file
// sets, a variable made of another, and an exported BASH_ENV from a
// variable. direnv (and bash) are the oracle that each loads
// svc/api/dev.sh; control: main.go, beside it, is named by none.
func TestEnvrcLoadsVariableForms(t *testing.T) {
	for _, c := range []struct{ name, envrc, shared string }{
		{"the whole word", "ENVFILE=svc/api/dev.sh\nsource_env \"$ENVFILE\"\n", ""},
		{"a default", "API=svc/api\nsource_env ${API:-x}/dev.sh\n", ""},
		{"braces", "API=svc/api\nsource_env ${API}/dev.sh\n", ""},
		{"a function first", "f() { source_env $API/dev.sh; }\nAPI=svc/api\nf\n", ""},
		{"a sourced file's value", "source_env .envrc.shared\nsource_env $API/dev.sh\n", "API=svc/api\n"},
		{"one of another", "A=svc\nB=$A/api\nsource_env $B/dev.sh\n", ""},
		{"BASH_ENV from a variable", "ENVSH=$PWD/svc/api/dev.sh\nexport BASH_ENV=$ENVSH\n", ""},
		// The sixty-fifth attack run's.
		{"an export in a function", "setup() { export BASH_ENV=$PWD/svc/api/dev.sh; }\nsetup\n", ""},
		{"builtin export", "builtin export BASH_ENV=$PWD/svc/api/dev.sh\n", ""},
		{"an empty value's default", "API=\nsource_env ${API:-svc/api}/dev.sh\n", ""},
		{"an alternative", "API=1\nsource_env ${API:+svc/api}/dev.sh\n", ""},
		{"a suffix taken off", "API=svc/api/\nsource_env ${API%/}/dev.sh\n", ""},
		{"appended", "API=svc\nAPI+=/api\nsource_env $API/dev.sh\n", ""},
		{"a case's branch", "case x in *) API=svc/api;; esac\nsource_env $API/dev.sh\n", ""},
		{"a function's assignment", "setapi() { API=svc/api; }\nsetapi\nsource_env $API/dev.sh\n", ""},
		{"a prefix assignment after", "API=svc/api\nAPI=svc/decoy source_env $API/dev.sh\n", ""},
		{"a subshell's assignment after", "API=svc/api\n(API=svc/decoy)\nsource_env $API/dev.sh\n", ""},
		{"unset", "API=svc/decoy\nunset API\nsource_env ${API:-svc/api}/dev.sh\n", ""},
		{"eval", "eval API=svc/api\nsource_env $API/dev.sh\n", ""},
		{"an assigning default", ": ${API:=svc/api}\nsource_env $API/dev.sh\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			direnvDo, proj, mark := direnvProject(t)
			testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(c.envrc), 0o644)
			if c.shared != "" {
				testfs.Write(t, filepath.Join(proj, ".envrc.shared"), []byte(c.shared), 0o644)
			}
			testfs.Write(t, filepath.Join(proj, "svc", "api", "dev.sh"), []byte("echo dev >> "+mark+"\n"), 0o644)
			testfs.Write(t, filepath.Join(proj, "svc", "api", "main.go"), nil, 0o644)
			direnvDo("allow", proj)
			direnvDo("exec", proj, "bash", "-c", "true")
			if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "dev") {
				t.Fatalf("the oracle: direnv ran %q, want svc/api/dev.sh's line", b)
			}
			wantLoads(t, EnvrcLoads(proj), proj, []string{"svc/api/dev.sh"}, []string{"svc/api/main.go"})
		})
	}
}

// TestEnvrcLoadsInterpreterOptions: an exported interpreter options
// variable loads the files its options name (the sixty-fifth attack
// run's): node's --require=FILE, perl's -I DIR with -M MODULE. node and
// perl, under direnv, are the oracle (node's required file is read as a
// script, with its directory, whose neighbours it may require); control:
// another file there is not named itself.
func TestEnvrcLoadsInterpreterOptions(t *testing.T) {
	direnvDo, proj, mark := direnvProject(t)
	testfs.Write(t, filepath.Join(proj, ".envrc"), []byte("export NODE_OPTIONS=--require=$PWD/tools/hook.js\nexport PERL5OPT=\"-I$PWD/tools -Mhook\"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "tools", "hook.js"), []byte("require('fs').appendFileSync('"+mark+"', 'node\\n')\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "tools", "hook.pm"), []byte("package hook; open(my $f, '>>', '"+mark+"'); print $f \"perl\\n\"; 1;\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "tools", "other.js"), nil, 0o644)
	direnvDo("allow", proj)
	want := []string{}
	for prog, args := range map[string][]string{"node": {"-e", "0"}, "perl": {"-e", "1"}} {
		if path, err := exec.LookPath(prog); err == nil {
			direnvDo(append([]string{"exec", proj, path}, args...)...)
			want = append(want, prog)
		}
	}
	if len(want) == 0 {
		t.Skip("neither node nor perl is installed")
	}
	b, _ := os.ReadFile(mark)
	for _, w := range want {
		if !strings.Contains(string(b), w) {
			t.Fatalf("the oracle: %s ran %q", w, b)
		}
	}
	wantLoads(t, EnvrcLoads(proj), proj, []string{"tools/hook.js", "tools/hook.pm"}, []string{"tools/other.js", "tools/hook"})
}

// wantLoads fails t where got (EnvrcLoads of proj) lacks one of want or
// holds one of not (the controls), each relative to proj.
func wantLoads(t *testing.T, got []string, proj string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("EnvrcLoads = %q, want %s in it", got, w)
		}
	}
	for _, n := range not {
		if slices.Contains(got, filepath.Join(proj, n)) {
			t.Errorf("control: EnvrcLoads = %q holds %s", got, n)
		}
	}
}

// TestEnvrcExpansionsBounded: the variables a path is read through are
// walked a bounded number of steps, however many values each was given
// (the seventy-second attack run's .envrc of nine variables of eight
// values each, none ending in a path, was 8^9 steps: 28 s, every call to
// the hook's deadline). Allocations are the deterministic measure: a
// chain of six variables costs no more than twice one of four (eight
// times, unbounded). Control: a path through a variable is still read.
func TestEnvrcExpansionsBounded(t *testing.T) {
	write := func(levels int) string {
		dir := t.TempDir()
		var b strings.Builder
		for i := 1; i < levels; i++ {
			for j := range 8 {
				fmt.Fprintf(&b, "A%d=$A%d/v%d\n", i, i+1, j)
			}
		}
		for j := range 8 {
			fmt.Fprintf(&b, "A%d=$NOPE/v%d\n", levels, j)
		}
		b.WriteString("source_env $A1/x\nS=scripts\nsource_env $S/env.sh\n")
		if err := os.WriteFile(filepath.Join(dir, ".envrc"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	four, six := write(4), write(6)
	if got := EnvrcLoads(six); !slices.Contains(got, filepath.Join(six, "scripts", "env.sh")) {
		t.Errorf("control: source_env $S/env.sh after S=scripts: loads %v, want scripts/env.sh among them", got)
	}
	a4 := testing.AllocsPerRun(3, func() { EnvrcLoads(four) })
	a6 := testing.AllocsPerRun(3, func() { EnvrcLoads(six) })
	if a6 > 2*a4 {
		t.Errorf("six variables of eight values allocate %.0f times, four %.0f: the walk is not bounded", a6, a4)
	}
}

// TestEnvrcLoadsDevboxPixi: a .envrc that runs devbox's or pixi's shell
// hook loads that tool's manifest, and what the manifest runs on every cd
// (devbox.json's shell.init_hook, pixi's activation scripts and its
// environment's activate.d): the eighty-third attack run found them off
// every list (from devbox's envrcContent.tmpl and pixi's documented
// direnv set-up; neither is installed here). Control: a .envrc that runs
// neither protects neither manifest.
func TestEnvrcLoadsDevboxPixi(t *testing.T) {
	for _, c := range []struct {
		envrc     string
		want, not []string
	}{
		{`eval "$(devbox generate direnv --print-envrc)"` + "\n",
			[]string{"devbox.json", "devbox.lock", "devbox.d", "scripts/init.sh", "tools/more.sh"}, []string{"pixi.toml", "pyproject.toml", "scripts/act.sh"}},
		{"watch_file pixi.lock\neval \"$(pixi shell-hook)\"\n",
			[]string{"pixi.toml", "pixi.lock", "pyproject.toml", ".pixi", "scripts/act.sh", "scripts/linux.sh", "scripts/two.sh"}, []string{"devbox.json", "scripts/init.sh", "scripts/other.sh"}},
		{"export A=1\n", nil, []string{"devbox.json", "pixi.toml", "pyproject.toml", "scripts/init.sh", "scripts/act.sh"}},
	} {
		proj := realDir(t, t.TempDir())
		testfs.Write(t, filepath.Join(proj, ".envrc"), []byte(c.envrc), 0o644)
		testfs.Write(t, filepath.Join(proj, "devbox.json"), []byte(`{"packages": ["go@1.22"], "shell": {"init_hook": ["source ./scripts/init.sh", "bash tools/more.sh"]}}`), 0o644)
		testfs.Write(t, filepath.Join(proj, "pixi.toml"), []byte(`[project]
name = "x"
scripts = ["scripts/other.sh"]

[activation]
scripts = ["scripts/act.sh"]

[target.linux-64.activation]
scripts = [
  "scripts/linux.sh",
  'scripts/two.sh',
]
`), 0o644)
		for _, rel := range []string{"scripts/init.sh", "tools/more.sh", "scripts/act.sh", "scripts/linux.sh", "scripts/two.sh", "scripts/other.sh", "pyproject.toml"} {
			testfs.Write(t, filepath.Join(proj, rel), nil, 0o644)
		}
		wantLoads(t, EnvrcLoads(proj), proj, c.want, c.not)
	}
}
