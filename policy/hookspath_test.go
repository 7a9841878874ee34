package policy

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// gitConfigCases are configuration files and the core.hooksPath values git
// reads from them; bad is a file git refuses ("bad config line"), which
// names no hooksPath.
var gitConfigCases = []struct {
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
}

// The reader gives the values git gives (checked against the real git when
// there is one), and refuses what git refuses.
func TestParseGitConfigHooksPath(t *testing.T) {
	git, _ := exec.LookPath("git")
	dir := t.TempDir()
	for _, c := range gitConfigCases {
		vars, ok := parseGitConfig(c.text)
		var got []string
		for _, v := range vars {
			if v.name == "core.hookspath" && v.hasValue {
				got = append(got, v.value)
			}
		}
		if ok == c.bad || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q ok=%v, want %q bad=%v", c.name, got, ok, c.want, c.bad)
		}
		if git == "" {
			continue
		}
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		testfs.Write(t, f, []byte(c.text), 0o644)
		cmd := exec.Command(git, "config", "--file", f, "--get-all", "core.hooksPath")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
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

// FuzzParseGitConfig: any text is read or refused, never a panic.
func FuzzParseGitConfig(f *testing.F) {
	for _, c := range gitConfigCases {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parseGitConfig(text)
	})
}

// HooksPaths reads core.hooksPath from the repository's config and the
// user's, makes each absolute (relative to the working tree's top, ~/ the
// home), follows [include] one level, and names no path for a file that
// is missing or that git would refuse.
func TestHooksPaths(t *testing.T) {
	root := realDir(t, t.TempDir())
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	xdg := filepath.Join(root, "xdg")
	write := func(p, body string) { testfs.Write(t, p, []byte(body), 0o644) }
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	if got := HooksPaths(proj, home, getenv); len(got) != 0 {
		t.Errorf("no configuration at all: %q", got)
	}
	write(filepath.Join(proj, ".git", "config"), "[core]\n\tbare = false\n\thooksPath = \"tools/git hooks\"\n")
	write(filepath.Join(home, ".gitconfig"), "[Core]\n\tHooksPath = ~/.hooks\n[include]\n\tpath = more.inc\n")
	write(filepath.Join(home, "more.inc"), "[core]\nhooksPath = /opt/hooks\n[include]\npath = deeper.inc\n")
	write(filepath.Join(home, "deeper.inc"), "[core]\nhooksPath = /deeper\n")
	write(filepath.Join(home, ".config", "git", "config"), "[core]\nhooksPath = /from-default-xdg\n")
	want := []string{filepath.Join(proj, "tools", "git hooks"), filepath.Join(home, ".hooks"), "/opt/hooks", "/from-default-xdg"}
	if got := HooksPaths(proj, home, getenv); !slices.Equal(got, want) {
		t.Errorf("HooksPaths = %q, want %q", got, want)
	}
	// From a directory inside the repository: relative to its top.
	sub := filepath.Join(proj, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := HooksPaths(sub, home, getenv); !slices.Contains(got, filepath.Join(proj, "tools", "git hooks")) {
		t.Errorf("from %s: %q", sub, got)
	}
	// $XDG_CONFIG_HOME replaces ~/.config for git; $GIT_CONFIG_GLOBAL is
	// read too.
	env["XDG_CONFIG_HOME"] = xdg
	env["GIT_CONFIG_GLOBAL"] = filepath.Join(root, "global")
	write(filepath.Join(xdg, "git", "config"), "[core]\nhooksPath = rel\n")
	write(filepath.Join(root, "global"), "[core]\nhooksPath = /global\n")
	got := HooksPaths(proj, home, getenv)
	for _, p := range []string{filepath.Join(proj, "rel"), "/global"} {
		if !slices.Contains(got, p) {
			t.Errorf("HooksPaths = %q, want %s in it", got, p)
		}
	}
	if slices.Contains(got, "/from-default-xdg") {
		t.Errorf("with $XDG_CONFIG_HOME set, ~/.config/git/config is read: %q", got)
	}
	// A file git would refuse names nothing; the others still count.
	write(filepath.Join(proj, ".git", "config"), "[core]\nhooksPath = \"unclosed\n")
	if got := HooksPaths(proj, home, getenv); slices.Contains(got, filepath.Join(proj, "unclosed")) || !slices.Contains(got, "/global") {
		t.Errorf("malformed .git/config: %q", got)
	}
	// A bare key (git: "missing value") or an empty value names nothing.
	write(filepath.Join(proj, ".git", "config"), "[core]\nhooksPath\n[core]\nhooksPath =\n")
	if got := HooksPaths(proj, home, getenv); slices.Contains(got, proj) || slices.Contains(got, filepath.Join(proj, "pre-commit")) {
		t.Errorf("bare or empty hooksPath: %q", got)
	}
	// Nothing readable, nothing named, no panic.
	if got := HooksPaths("", "", nil); len(got) != 0 {
		t.Errorf("HooksPaths with nothing: %q", got)
	}
	if got := HooksPaths("relative", "also-relative", nil); len(got) != 0 {
		t.Errorf("HooksPaths with relative paths: %q", got)
	}
}

// hooksPath = "." (the working tree's top) or the home: the hook names in
// it are hooks, the project is not executable configuration as a whole. A
// linked worktree's .git file leads to the common directory's config. A
// link is judged as written and as resolved.
func TestHooksPathsTopAndWorktree(t *testing.T) {
	root := realDir(t, t.TempDir())
	home := filepath.Join(root, "home")
	main := filepath.Join(root, "main")
	wt := filepath.Join(root, "wt")
	testfs.Write(t, filepath.Join(main, ".git", "config"), []byte("[core]\nhooksPath = .\n"), 0o644)
	testfs.Write(t, filepath.Join(main, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644)
	testfs.Write(t, filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o644)
	for _, p := range []string{main, wt} {
		got := HooksPaths(p, home, nil)
		if !slices.Contains(got, filepath.Join(p, "pre-commit")) || slices.Contains(got, p) {
			t.Errorf("hooksPath = . in %s: %q", p, got)
		}
		pl := Places{Home: home, HooksPaths: got}.Prepare()
		if pr := pl.Classify(filepath.Join(p, "pre-commit")); pr.Tier != ExecConfig {
			t.Errorf("Classify(%s/pre-commit) = %+v", p, pr)
		}
		if pr := pl.Classify(filepath.Join(p, "main.go")); pr.Protected() {
			t.Errorf("control: Classify(%s/main.go) = %+v", p, pr)
		}
	}
	// A link: both the link and where it leads.
	real := filepath.Join(root, "shared-hooks")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(main, "hooks-link")); err != nil {
		t.Fatal(err)
	}
	testfs.Write(t, filepath.Join(main, ".git", "config"), []byte("[core]\nhooksPath = hooks-link\n"), 0o644)
	got := HooksPaths(main, home, nil)
	if !slices.Equal(got, []string{filepath.Join(main, "hooks-link"), real}) {
		t.Errorf("HooksPaths through a link = %q", got)
	}
}

// A path core.hooksPath names is executable configuration wherever it is,
// and what is in it; a sibling is not (the control). Without HooksPaths
// the same directory is ordinary.
func TestHooksPathsClassified(t *testing.T) {
	pl := Places{Home: "/home/u", HooksPaths: []string{"/p/tools/hooks", "/home/u/.hooks"}}.Prepare()
	for _, p := range []string{"/p/tools/hooks", "/p/tools/hooks/pre-commit", "/home/u/.hooks/post-checkout"} {
		if got := pl.Classify(p); got.Tier != ExecConfig {
			t.Errorf("Classify(%s) = %+v", p, got)
		}
	}
	for _, p := range []string{"/p/tools/hooks-old/x", "/p/tools/README.md", "/p/tools"} {
		if got := pl.Classify(p); got.Protected() {
			t.Errorf("control: Classify(%s) = %+v", p, got)
		}
	}
	if got := (Places{Home: "/home/u"}).Classify("/p/tools/hooks/pre-commit"); got.Protected() {
		t.Errorf("control: without HooksPaths: %+v", got)
	}
	if got := pl.GlobProtection("/p/tools/*/pre-commit"); got.Tier != ExecConfig {
		t.Errorf("GlobProtection(/p/tools/*/pre-commit) = %+v", got)
	}
}

// realDir is dir with its links resolved (a macOS temp dir is a link).
func realDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
