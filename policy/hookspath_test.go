package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// HooksPaths reads core.hooksPath from the repository's config and the
// user's, makes each absolute (relative to the working tree's top, ~/ the
// home), follows [include] at any depth, and names no path for a file
// that is missing or a line that git would refuse.
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
	want := []string{filepath.Join(proj, "tools", "git hooks"), filepath.Join(home, ".hooks"), "/opt/hooks", "/deeper", "/from-default-xdg"}
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

// hooksPathHomes are homes (files below the home; proj is a repository on
// branch main) where a hooksPath is set only in an included file, each
// way git includes: deep, conditional, relative to the including file.
var hooksPathHomes = map[string]map[string]string{
	"include at depth 3": {
		".gitconfig": "[include]\n\tpath = a.inc\n",
		"a.inc":      "[include]\n\tpath = conf/b.inc\n",
		"conf/b.inc": "[include]\n\tpath = c.inc\n",
		"conf/c.inc": "[core]\n\thooksPath = ~/deep-hooks\n",
	},
	"includeIf gitdir from the user's": {
		".gitconfig": "[includeIf \"gitdir:~/proj/\"]\n\tpath = ~/work.inc\n",
		"work.inc":   "[core]\n\thooksPath = /srv/work-hooks\n",
	},
	"includeIf onbranch from the repository's, relative": {
		"proj/.git/config": "[core]\n\trepositoryformatversion = 0\n[includeIf \"onbranch:main\"]\n\tpath = ../hooks.inc\n",
		"proj/hooks.inc":   "[core]\n\thooksPath = tools/hooks\n",
	},
	"includeIf from the XDG file, at git's depth of 10": {
		".config/git/config": "[includeIf \"gitdir/i:~/PROJ/\"]\n\tpath = d1\n",
		".config/git/d1":     "[include]\n\tpath = d2\n", ".config/git/d2": "[include]\n\tpath = d3\n",
		".config/git/d3": "[include]\n\tpath = d4\n", ".config/git/d4": "[include]\n\tpath = d5\n",
		".config/git/d5": "[include]\n\tpath = d6\n", ".config/git/d6": "[include]\n\tpath = d7\n",
		".config/git/d7": "[include]\n\tpath = d8\n", ".config/git/d8": "[include]\n\tpath = d9\n",
		".config/git/d9": "[include]\n\tpath = d10\n", ".config/git/d10": "[core]\n\thooksPath = ~/ten\n",
	},
}

// TestHooksPathsAsGit: the hooksPath git uses in the repository (git -C
// proj config --type=path --get core.hooksPath), set only in an included
// file, is among HooksPaths'. The control: the same home with no include
// (path renamed), where git sees no hooksPath and HooksPaths names none.
func TestHooksPathsAsGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for name, files := range hooksPathHomes {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			home := realDir(t, t.TempDir())
			proj := filepath.Join(home, "proj")
			cmd := exec.Command(git, "init", "-q", "-b", "main", proj)
			cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			write := func(include bool) {
				for f, body := range files {
					if !include {
						body = strings.ReplaceAll(body, "path =", "notpath =")
					}
					testfs.Write(t, filepath.Join(home, filepath.FromSlash(f)), []byte(body), 0o644)
				}
			}
			gitHooks := func() string {
				cmd := exec.Command(git, "-C", proj, "config", "--type=path", "--get", "core.hooksPath")
				cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
				out, err := cmd.Output()
				if err != nil {
					return ""
				}
				d := strings.TrimSuffix(string(out), "\n")
				if !filepath.IsAbs(d) {
					d = filepath.Join(proj, d)
				}
				return d
			}
			write(true)
			d := gitHooks()
			if d == "" {
				t.Fatal("git sees no hooksPath: the test tests nothing")
			}
			if got := HooksPaths(proj, home, nil); !slices.Contains(got, d) {
				t.Errorf("git runs hooks from %s; HooksPaths = %q", d, got)
			}
			write(false)
			if g := gitHooks(); g != "" {
				t.Fatalf("control: git still sees %s", g)
			}
			if got := HooksPaths(proj, home, nil); slices.Contains(got, d) || len(got) != 0 {
				t.Errorf("control: no include, yet HooksPaths = %q", got)
			}
		})
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
func realDir(t testing.TB, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A configuration file the user's or the repository's configuration
// includes from inside the working tree is executable configuration,
// whether it is there yet or not (an attack run wrote the src/inc.cfg a
// user's includeIf gitdir: named, with core.fsmonitor, and the user's git
// status ran it); one included from outside is not given (the home's).
func TestHooksPathsIncludedFromTheTree(t *testing.T) {
	root := realDir(t, t.TempDir())
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	testfs.Write(t, filepath.Join(proj, ".git", "config"), []byte("[include]\n\tpath = ../conf/repo.inc\n"), 0o644)
	testfs.Write(t, filepath.Join(home, ".gitconfig"), []byte("[includeIf \"gitdir:"+proj+"/\"]\n\tpath = "+proj+"/src/inc.cfg\n[include]\n\tpath = mine.inc\n"), 0o644)
	testfs.Write(t, filepath.Join(home, "mine.inc"), []byte("[user]\n\tname = u\n"), 0o644)
	got := HooksPaths(proj, home, nil)
	for _, p := range []string{filepath.Join(proj, "src", "inc.cfg"), filepath.Join(proj, "conf", "repo.inc")} {
		if !slices.Contains(got, p) {
			t.Errorf("HooksPaths = %q, want %s (included from inside the tree, not there yet) in it", got, p)
		}
	}
	for _, p := range []string{filepath.Join(home, "mine.inc"), filepath.Join(proj, ".git", "config")} {
		if slices.Contains(got, p) {
			t.Errorf("control: HooksPaths = %q holds %s", got, p)
		}
	}
	if c := (Places{Home: home, HooksPaths: got}).Prepare().Classify(filepath.Join(proj, "src", "inc.cfg")); c.Tier != ExecConfig {
		t.Errorf("Classify(src/inc.cfg) = %+v, want executable configuration", c)
	}
}

// TestHooksPathsPrograms: a script of the working tree that a setting of
// git's configuration runs (core.fsmonitor, a filter's clean, a ! alias,
// a diff driver's textconv naming it as python3's argument) is executable
// configuration; a setting that runs a program on PATH, or is no program,
// names none (controls). Real git is the oracle that the fsmonitor and
// the filter run from the tree.
func TestHooksPathsPrograms(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := realDir(t, t.TempDir())
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	run := func(args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = proj, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	testfs.Write(t, filepath.Join(home, ".gitconfig"), []byte("[alias]\n\tlint = !sh scripts/lint.sh --fix\n\tst = status\n[core]\n\teditor = vim\n\tpager = less -R\n[user]\n\tname = ./not-a-program\n"), 0o644)
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	testfs.Write(t, filepath.Join(proj, ".git", "config"), []byte("[core]\n\tfsmonitor = ./tools/fsmon.sh\n[filter \"strip\"]\n\tclean = ./tools/clean.sh\n[diff \"nb\"]\n\ttextconv = python3 conv.py\n"), 0o644)
	mark := filepath.Join(root, "ran")
	testfs.Write(t, filepath.Join(proj, "tools", "fsmon.sh"), []byte("#!/bin/sh\necho fsmonitor >> "+mark+"\nexit 1\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "tools", "clean.sh"), []byte("#!/bin/sh\necho clean >> "+mark+"\ncat\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, ".gitattributes"), []byte("*.txt filter=strip\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644)
	run("status", "--short")
	run("add", "a.txt")
	if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "fsmonitor") || !strings.Contains(string(b), "clean") {
		t.Fatalf("the oracle: git ran %q of the tree's scripts, want the fsmonitor's and the filter's", b)
	}
	got := HooksPaths(proj, home, nil)
	// And their directories: a script's neighbours, which it imports.
	for _, rel := range []string{"tools/fsmon.sh", "tools/clean.sh", "scripts/lint.sh", "conv.py", "tools", "scripts"} {
		if !slices.Contains(got, filepath.Join(proj, rel)) {
			t.Errorf("HooksPaths = %q, want %s in it", got, rel)
		}
	}
	for _, p := range got {
		if rel, _ := filepath.Rel(proj, p); !slices.Contains([]string{"tools/fsmon.sh", "tools/clean.sh", "scripts/lint.sh", "conv.py", "tools", "scripts"}, rel) {
			t.Errorf("control: HooksPaths holds %s", p)
		}
	}
	if c := (Places{Home: home, HooksPaths: got}).Prepare().Classify(filepath.Join(proj, "tools", "fsmon.sh")); c.Tier != ExecConfig {
		t.Errorf("Classify(tools/fsmon.sh) = %+v, want executable configuration", c)
	}
}

// TestHooksPathsProgramForms: the forty-third attack run's forms of a
// setting that runs the tree's code, each in a directory of its own: a
// module run by python -m, a directory run by python, a path after an
// expansion, a script inside sh -c's text, a script's neighbour (what it
// imports), and interactive.diffFilter. Real git is the oracle for the
// fsmonitor's module and the filter's sh -c.
func TestHooksPathsProgramForms(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := realDir(t, t.TempDir())
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	mark := filepath.Join(root, "ran")
	testfs.Write(t, filepath.Join(home, ".gitconfig"), []byte(`[core]
	fsmonitor = python3 -m fsm.mon
[alias]
	lint = !python3 al
	fmt = "!sh \"$(git rev-parse --show-toplevel)/fm/fmt.sh\""
[filter "fx"]
	clean = sh -c 'cl/clean.sh "$1"' -- %f
[diff "cv"]
	textconv = python3 cv/conv.py
[interactive]
	diffFilter = ./df/df.sh
`), 0o644)
	for rel, body := range map[string]string{
		"fsm/__init__.py": "", "fsm/mon.py": "open('" + mark + "', 'a').write('fsmonitor\\n')\nraise SystemExit(1)\n",
		"al/__main__.py": "", "fm/fmt.sh": "", "cv/conv.py": "import convlib\n", "cv/convlib.py": "", "df/df.sh": "",
		"cl/clean.sh": "#!/bin/sh\necho clean >> " + mark + "\ncat \"$1\"\n", ".gitattributes": "*.txt filter=fx\n", "a.txt": "a\n",
	} {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		testfs.Write(t, filepath.Join(proj, rel), []byte(body), mode)
	}
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = proj, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		_ = cmd.Run()
	}
	run("init", "-q", "-b", "main")
	run("status", "--short")
	run("add", "a.txt")
	if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "fsmonitor") || !strings.Contains(string(b), "clean") {
		t.Fatalf("the oracle: git ran %q of the tree's code, want the fsmonitor's module and the filter's script", b)
	}
	got := HooksPaths(proj, home, nil)
	for _, rel := range []string{"fsm", "al", "fm/fmt.sh", "cl/clean.sh", "cv", "df/df.sh"} {
		if !slices.Contains(got, filepath.Join(proj, rel)) {
			t.Errorf("HooksPaths = %q, want %s in it", got, rel)
		}
	}
}

// TestHooksPathsProgramFormsMore: the forty-fourth attack run's forms (a
// path variable before python's -m, -m joined to its module, a git
// alias's option naming a program) are found; a bare program name, which
// the shell finds on PATH (credential.helper = store, core.editor =
// subl), protects no directory of that name (controls, with store/ and
// subl/ in the tree).
func TestHooksPathsProgramFormsMore(t *testing.T) {
	root := realDir(t, t.TempDir())
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	testfs.Write(t, filepath.Join(home, ".gitconfig"), []byte(`[credential]
	helper = store
[core]
	editor = subl --wait
[alias]
	dd = difftool -y --extcmd=./dt.sh
[filter "b"]
	clean = PYTHONPATH=tools python3 -m conv
[filter "c"]
	clean = python3 -mtools2.conv
`), 0o644)
	for _, rel := range []string{".git/HEAD", "store/index.js", "subl/main.go", "tools/conv.py", "tools2/conv.py"} {
		testfs.Write(t, filepath.Join(proj, rel), nil, 0o644)
	}
	got := HooksPaths(proj, home, nil)
	for _, rel := range []string{"dt.sh", "tools", "tools2"} {
		if !slices.Contains(got, filepath.Join(proj, rel)) {
			t.Errorf("HooksPaths = %q, want %s in it", got, rel)
		}
	}
	// (Not code --wait's code/: code is a module of Python's standard
	// library, which the filters' python -m would import from the top.)
	for _, rel := range []string{"store", "subl"} {
		if slices.Contains(got, filepath.Join(proj, rel)) {
			t.Errorf("control: HooksPaths = %q holds %s", got, rel)
		}
	}
}
