package confine

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

func TestArgsRoundTrip(t *testing.T) {
	for _, s := range []Spec{
		{Cap: policy.Capability{}, Project: "/p", Cwd: "/p/src", Exe: "/usr/bin/git", Argv: []string{"git", "log", "-1"}},
		{Cap: policy.Capability{Write: true, Network: true}, Project: "/p", Cwd: "/p", Exe: "/usr/local/go/bin/go", Argv: []string{"go", "test", "--", "./..."},
			Redirects: []Redirect{{Fd: 1, Op: ">", Path: "/p/out log"}, {Fd: 2, Op: "dup", Dup: 1}, {Fd: 0, Op: "<", Path: "/p/in"},
				{Fd: 3, Op: "close"}, {Fd: 1, Op: ">", Path: "/p/a", Append: true}, {Fd: 4, Op: "<>", Path: "/p/rw"}}},
		{Cap: policy.Capability{Write: true, Git: true}, Project: "/p", Cwd: "/p", Exe: "/usr/bin/git", Argv: []string{"git", "--", "-rf"}},
	} {
		args := s.Args()
		if args[0] != Subcommand {
			t.Fatalf("args start with %q", args[0])
		}
		got, err := Parse(args[1:])
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--cap", "read-only", "--project", "/p", "--", "/bin/ls", "ls"},                                          // no --cwd
		{"--cap", "root", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"},                                // unknown capability
		{"--cap", "read-only", "--cap", "project-write", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"}, // twice
		{"--cap", "read-only", "--project", "p", "--cwd", "/p", "--", "/bin/ls", "ls"},                            // relative
		{"--cap", "read-only", "--project", "/p/../q", "--cwd", "/p", "--", "/bin/ls", "ls"},                      // not clean
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--", "ls", "ls"},                                // relative program
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--", "/bin/ls"},                                 // no argv0
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--redirect", "1>rel", "--", "/bin/ls", "ls"},
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--redirect", ">/x", "--", "/bin/ls", "ls"},
		{"--cap", "read-only", "--project", "/p", "--cwd", "/p", "--bogus", "x", "--", "/bin/ls", "ls"},
		{"--cap", "read-only+git", "--project", "/p", "--cwd", "/p", "--", "/bin/ls", "ls"},
	} {
		if _, err := Parse(args); err == nil {
			t.Errorf("%q parsed", args)
		}
	}
}

// TestMainHelp: exec --help, -h and help print the usage and exit 0, no
// arguments print it and fail; a flag without its value still says so
// (the usability run's --help answered "--help needs a value").
func TestMainHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "usage: loopguard-confine exec --cap"},
		{[]string{"-h"}, 0, "usage: loopguard-confine exec --cap"},
		{[]string{"help"}, 0, "usage: loopguard-confine exec --cap"},
		{nil, ExitFailed, "usage: loopguard-confine exec --cap"},
		{[]string{"--cap"}, ExitFailed, "the program was not run: --cap needs a value"},
	} {
		var out strings.Builder
		if code := Main(c.args, &out); code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("Main(%q): %d %q, want %d and %q", c.args, code, out.String(), c.code, c.want)
		}
	}
}

// TestPlanKeepsGuardFilesReadOnly: the guard's own binaries inside a
// project (a clone of loopguard that built bin/loopguard-hook) get no write
// rule under project-write; the rest of the directory does. (A project that
// holds the guard's state is refused whole: NewPlan's own check.)
func TestPlanKeepsGuardFilesReadOnly(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	testfs.Tree(t, proj, []byte("x"), 0o644, "bin/loopguard", "bin/loopguard-hook", "bin/other", "src/a.go", "README.md")
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(),
		Places: policy.Places{Home: filepath.Join(root, "home"), Self: filepath.Join(proj, "bin", "loopguard-hook")}}
	if err := os.MkdirAll(e.TempDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Spec{Cap: policy.Capability{Write: true}, Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	writable := func(path string) bool {
		for _, d := range p.WriteDirs {
			if path == d || strings.HasPrefix(path, d+"/") {
				return true
			}
		}
		return slices.Contains(p.WriteFiles, path)
	}
	for _, f := range []string{"bin/loopguard", "bin/loopguard-hook", "bin"} {
		if writable(filepath.Join(proj, f)) {
			t.Errorf("%s is writable: %+v", f, p)
		}
	}
	for _, f := range []string{"bin/other", "src/a.go", "src", "README.md"} {
		if !writable(filepath.Join(proj, f)) {
			t.Errorf("%s is not writable (control): %+v", f, p)
		}
	}
}

// TestPlanLinkedGitDirs: a worktree's .git file brings its git directory
// and the common one into the plan (writable under +git); a .git file
// naming a directory that is not a git directory (~/.ssh) brings nothing.
func TestPlanLinkedGitDirs(t *testing.T) {
	root := t.TempDir()
	main := filepath.Join(root, "main", ".git")
	wt := filepath.Join(main, "worktrees", "wt")
	for _, f := range []string{filepath.Join(main, "HEAD"), filepath.Join(main, "objects", "x"), filepath.Join(wt, "HEAD"), filepath.Join(root, "home", ".ssh", "id_rsa")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(), Places: policy.Places{Home: filepath.Join(root, "home")}}
	if err := os.MkdirAll(e.TempDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gitFile string
		want    []string
	}{
		{"gitdir: " + wt + "\n", []string{wt, main}},
		{"gitdir: " + filepath.Join(root, "home", ".ssh") + "\n", nil},
	} {
		proj := filepath.Join(root, "proj")
		if err := os.MkdirAll(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, ".git"), []byte(c.gitFile), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(Spec{Cap: policy.Capability{Write: true, Git: true}, Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}}, e)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{wt, main, filepath.Join(root, "home", ".ssh")} {
			if got, want := slices.Contains(p.WriteDirs, d), slices.Contains(c.want, d); got != want {
				t.Errorf("%q: %s writable %v, want %v", c.gitFile, d, got, want)
			}
		}
	}
}

// TestPlanGoStatNoFollow: the module cache's directory a launch in a Go
// module may write its stats in is opened without following a link
// (Plan.NoFollow), as its plan asks, beside a worktree's git directories
// (readProject kept only theirs until 2026-12-07).
func TestPlanGoStatNoFollow(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	mods := filepath.Join(root, "home", "go", "pkg", "mod")
	for _, d := range []string{filepath.Join(mods, "cache", "download"), proj, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module example.com/proj\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), GoModCache: mods, UID: os.Getuid(), Places: policy.Places{Home: filepath.Join(root, "home")}}
	p, err := NewPlan(Spec{Cap: policy.Capability{}, Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Discard()
	if p.GoStatDir == "" || !slices.Contains(p.NoFollow, p.GoStatDir) {
		t.Errorf("the stat directory %q is not opened without following a link: %q", p.GoStatDir, p.NoFollow)
	}
}

// TestPlanLeavesOutCoveredReads: a read rule inside another read rule
// (a program's own /usr/bin under /usr; /bin, /lib, /sbin where they are
// links into /usr) is left out, since it adds nothing and costs each
// launch three system calls; a program's directory outside the system
// directories keeps its rule (control).
func TestPlanLeavesOutCoveredReads(t *testing.T) {
	root := t.TempDir()
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(), Places: policy.Places{Home: filepath.Join(root, "home")}}
	proj := filepath.Join(root, "proj")
	tools := filepath.Join(root, "tools", "bin")
	for _, d := range []string{e.TempDir, proj, tools} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(exe string) Plan {
		t.Helper()
		p, err := NewPlan(Spec{Project: proj, Cwd: proj, Exe: exe, Argv: []string{filepath.Base(exe)}}, e)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := plan("/usr/bin/git")
	if !slices.Contains(p.ReadDirs, "/usr") || slices.Contains(p.ReadDirs, "/usr/bin") {
		t.Errorf("/usr/bin under /usr: %q", p.ReadDirs)
	}
	for _, d := range []string{"/bin", "/lib", "/sbin", "/lib64"} {
		if t2, err := os.Readlink(d); err == nil && strings.HasPrefix(filepath.Join("/", t2), "/usr/") && slices.Contains(p.ReadDirs, d) {
			t.Errorf("%s links to %s, inside /usr, and kept its rule: %q", d, t2, p.ReadDirs)
		}
	}
	if p := plan(filepath.Join(tools, "tool")); !slices.Contains(p.ReadDirs, tools) {
		t.Errorf("control: %s lost its rule: %q", tools, p.ReadDirs)
	}
}

// TestPlanHomeThroughLink: a home reached through a link (/home ->
// /var/home) is judged by its real path too: a project at the home's real
// path, or at a secret's there, is refused as it is by the home's own
// path (the ninety-first attack run read every secret of such a home
// from a project at its real path). Control: a project in it runs.
func TestPlanHomeThroughLink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(root, "var-home"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(real, ".ssh"), filepath.Join(real, "src", "app"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	places := policy.Places{Home: link}
	e := Env{Home: link, TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(), Places: places}
	for _, c := range []struct {
		project string
		want    string
	}{{real, "holds the home directory"}, {filepath.Join(real, ".ssh"), "must stay unreadable"}, {filepath.Join(real, "src", "app"), ""}} {
		p, err := NewPlan(Spec{Cap: policy.JailCapability, Project: c.project, Cwd: c.project, Exe: "/bin/true", Argv: []string{"true"}}, e)
		if err == nil {
			_ = p.Discard()
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (control): %v", c.project, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s, the home %s through a link: %v, want %q", c.project, link, err, c.want)
		}
	}
}
