package gitconfig

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// gitConfigSamples are configuration files as people write them, and the
// corners of git's syntax.
var gitConfigSamples = map[string]string{
	"everyday": `# ~/.gitconfig
[user]
	name = Ada Lovelace
	email = ada@example.com
[core]
	editor = vim
	excludesFile = ~/.gitignore_global
	attributesFile = ~/.gitattributes_global
	pager = less -FRX
[alias]
	st = status -sb
	lg = log --graph --pretty=format:'%h %s' --abbrev-commit
	co = checkout
[include]
	path = ~/.gitconfig.local
[includeIf "gitdir:~/work/"]
	path = ~/.gitconfig-work
[pull]
	rebase = true
`,
	"quoting": `[core]
	excludesfile = "~/with space/ignore" ; a comment
	hooksPath = ~/.githooks # another
[alias]
	s = "!f() { echo \"a;b#c\"; }; f"
	t = !echo   many    spaces   
	u = one\
two
	v = tab\there\nnewline\bback
[Section "Sub.Case"]
	Key = "quoted \\ backslash"
	bare
[old.Style]
	KEY=value
[sec "with \"quote\" and \\ back"] k = v
	key-with-dash = 1
`,
	"crlf and bom": "\ufeff[user]\r\n\tname = X\r\n[include]\r\n\tpath = .gitconfig.d/more\r\n",
	"includeIf kinds": `[includeIf "gitdir:~/src/"]
	path = src.inc
[includeIf "gitdir/i:~/SRC/"]
	path = ~/.config/git/src-i.inc
[includeIf "onbranch:main"]
	path = branch.inc
[includeIf "hasconfig:remote.*.url:https://github.com/**"]
	path = ~/.gitconfig-github
[include]
	path
	path = "~/.gitconfig.d/colors"
`,
	"bad line stops": `[user]
	name = ok
this is not a config line
[include]
	path = ~/never
`,
	"header with key": `[core] excludesFile = ~/x
[include] path = ~/y
`,
	"NUL in a value, a subsection, a comment": "[core]\n\thooksPath = a\x00b\n\teditor = \"v\x00\\\"i\"\n" +
		"[sec \"a\x00b\"]\n\tkey = x\n# c\x00d\n[user]\n\tname = n\n",
	"NUL in a key": "[core]\n\thooks\x00Path = x\n",
}

// TestParseAsGit: every sample reads as git 2.39 reads it (git config
// --list -z --file), key for key and value for value; a sample git rejects
// is read up to its bad line.
func TestParseAsGit(t *testing.T) {
	git := requireGit(t)
	dir := t.TempDir()
	for name, body := range gitConfigSamples {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		testfs.Write(t, f, []byte(body), 0o644)
		cmd := exec.Command(git, "config", "--list", "-z", "--no-includes", "--file", f)
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.Output()
		gitFailed := err != nil
		got, perr := Parse([]byte(body))
		if gitFailed != (perr != nil) {
			t.Errorf("%s: git failed %v, the parser's error %v", name, err, perr)
		}
		if gitFailed {
			// git prints nothing of a file it rejects: the parser
			// must at least not read past the bad line.
			for _, e := range got {
				if e.Name == "include.path" && e.Value == "~/never" {
					t.Errorf("%s: read past the bad line: %v", name, got)
				}
			}
			continue
		}
		var want []Entry
		for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
			k, v, hasValue := strings.Cut(string(rec), "\n")
			want = append(want, Entry{Name: k, Value: v, Bare: !hasValue})
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

func requireGit(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	return git
}

// hooksPathCases are files and the core.hooksPath values git reads from
// them; bad is a file git refuses ("bad config line"), whose settings
// from the bad line on Parse does not give.
var hooksPathCases = []struct {
	name, text string
	want       []string
	bad        bool
}{
	{"plain", "[core]\n\thooksPath = .githooks\n", []string{".githooks"}, false},
	{"case of section and key", "[CORE]\nHooksPATH=tools/hooks\n", []string{"tools/hooks"}, false},
	{"quoted, with a comment", "[core]\n  hooksPath = \"my hooks\" # the team's\n", []string{"my hooks"}, false},
	{"quoted comment characters", "[core]\nhooksPath = \"a;b#c\"\n", []string{"a;b#c"}, false},
	{"semicolon comment", "[core]\nhooksPath = x ; y\n", []string{"x"}, false},
	{"inner whitespace kept, outer dropped", "[core]\nhooksPath =   a \t b   \n", []string{"a   b"}, false},
	{"escapes", "[core]\nhooksPath = \"a\\\"b\\\\c\"\n", []string{"a\"b\\c"}, false},
	{"continued line", "[core]\nhooksPath = one\\\ntwo\n", []string{"onetwo"}, false},
	{"home", "[core]\nhooksPath = ~/hooks\n", []string{"~/hooks"}, false},
	{"same line as the header", "[core] hooksPath = x\n", []string{"x"}, false},
	{"CRLF", "[core]\r\nhooksPath = x\r\n", []string{"x"}, false},
	{"BOM", "\ufeff[core]\nhooksPath = x\n", []string{"x"}, false},
	{"no final newline", "[core]\nhooksPath = x", []string{"x"}, false},
	{"several", "[core]\nhooksPath = a\n[user]\nname = u\n[core]\nhooksPath = b\n", []string{"a", "b"}, false},
	{"two quoted parts", "[core]\nhooksPath = \"a\" \"b\"\n", []string{"a b"}, false},
	{"a backslash at the end", "[core]\nhooksPath = x\\", []string{"x"}, false},
	{"no space after the header", "[core]hooksPath=x\n", []string{"x"}, false},
	{"a comment after the header", "[core];c\nhooksPath=x\n", []string{"x"}, false},
	{"vertical tab and form feed are not space", "[core]\nhooksPath = \va\fb\v\n", []string{"\va\fb\v"}, false},
	{"old subsection syntax", "[core.X]\nhooksPath = x\n", nil, false},
	{"a key with a dash", "[core]\nhooks-path = x\n", nil, false},
	{"a subsection is another section", "[core \"x\"]\nhooksPath = y\n[core.x]\nhooksPath = z\n", nil, false},
	{"another key", "[core]\nhooksPathx = y\nfsmonitor = false\n", nil, false},
	{"comments only", "# [core]\n; hooksPath = x\n\n", nil, false},
	{"empty", "", nil, false},
	{"unclosed quote", "[core]\nhooksPath = \"x\n", nil, true},
	{"unknown escape", "[core]\nhooksPath = a\\qb\n", nil, true},
	{"key before any section", "hooksPath = x\n[core]\nhooksPath = y\n", []string{"y"}, false},
	{"unclosed header", "[core\nhooksPath = x\n", nil, true},
	{"junk after the key", "[core]\nhooksPath x\n", nil, true},
	{"key starting with a digit", "[core]\n1x = y\nhooksPath = x\n", nil, true},
	{"subsection not quoted", "[core x]\nhooksPath = x\n", nil, true},
	{"subsection line break", "[core \"x\n\"]\nhooksPath = x\n", nil, true},
	{"a NUL ends the value", "[core]\nhooksPath = a\x00b\n", []string{"a"}, false},
	{"set before a bad line", "[core]\nhooksPath = a\n[core\nhooksPath = b\n", []string{"a"}, true},
}

// TestParseHooksPathAsGit: Parse gives each case's core.hooksPath values,
// and refuses what the case says git refuses; where git is installed,
// git reads the same values (git config --get-all).
func TestParseHooksPathAsGit(t *testing.T) {
	git, _ := exec.LookPath("git")
	dir := t.TempDir()
	for _, c := range hooksPathCases {
		entries, err := Parse([]byte(c.text))
		var got []string
		for _, e := range entries {
			if e.Name == "core.hookspath" && !e.Bare {
				got = append(got, e.Value)
			}
		}
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q err=%v, want %q bad=%v", c.name, got, err, c.want, c.bad)
		}
		if git == "" {
			continue
		}
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		testfs.Write(t, f, []byte(c.text), 0o644)
		cmd := exec.Command(git, "config", "--file", f, "--get-all", "core.hooksPath")
		cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
		out, err := cmd.Output()
		var gitVals []string
		var ee *exec.ExitError
		switch {
		case err == nil:
			gitVals = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		case errors.As(err, &ee) && ee.ExitCode() == 1: // no such key
		case errors.As(err, &ee) && ee.ExitCode() == 128: // bad config
			if !c.bad {
				t.Errorf("%s: git refuses the file, the case says it is good", c.name)
			}
			continue
		default:
			t.Fatalf("git config: %v", err)
		}
		if c.bad {
			t.Errorf("%s: git reads the file (%q), the case says it is bad", c.name, gitVals)
		} else if !slices.Equal(gitVals, c.want) {
			t.Errorf("%s: git reads %q, the case says %q", c.name, gitVals, c.want)
		}
	}
}

// FuzzParse: any bytes are read or refused, never a panic.
func FuzzParse(f *testing.F) {
	seeds := 0
	for _, c := range hooksPathCases {
		f.Add([]byte(c.text))
		seeds++
	}
	for _, s := range gitConfigSamples {
		f.Add([]byte(s))
		seeds++
	}
	if seeds == 0 {
		f.Fatal("no seeds")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Parse(data)
	})
}
