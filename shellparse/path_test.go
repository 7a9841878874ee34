package shellparse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// pathTree builds real directories for PATH tests and returns the root.
func pathTree(t *testing.T, files ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		mode := os.FileMode(0o755)
		if name, ok := strings.CutSuffix(f, ":noexec"); ok {
			f, mode = name, 0o644
		}
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		testfs.Write(t, p, []byte("#!/bin/sh\n"), mode)
	}
	return root
}

func pathOf(dirs ...string) string { return strings.Join(dirs, string(os.PathListSeparator)) }

func wantVerdict(t *testing.T, cmd string, env Env, want Verdict, reason string) Result {
	t.Helper()
	res := Analyze(cmd, env)
	if res.Verdict != want {
		t.Errorf("%q with PATH=%s: %s (%s), want %s", cmd, env.Path, res.Verdict, res.Reason, want)
	} else if reason != "" && !strings.Contains(res.Reason, reason) {
		t.Errorf("%q: reason %q does not contain %q", cmd, res.Reason, reason)
	}
	return res
}

func TestPathShadowingBinaryEarlierInPath(t *testing.T) {
	r := pathTree(t, "evil/git", "sys/git", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("sys")}}

	env.Path = pathOf(j("evil"), j("sys"))
	res := wantVerdict(t, "git status", env, PathShadowed, "it shadows "+j("sys/git"))
	if res.Executables["git"] != j("evil/git") {
		t.Errorf("executables[git] = %q, want the shadowing %s", res.Executables["git"], j("evil/git"))
	}
	// Control: the trusted one first.
	env.Path = pathOf(j("sys"), j("evil"))
	res = wantVerdict(t, "git status", env, Simple, "")
	if res.Executable != j("sys/git") {
		t.Errorf("executable %q, want %q", res.Executable, j("sys/git"))
	}
}

func TestPathSkipsNonExecutablesAndDirectories(t *testing.T) {
	r := pathTree(t, "a/git:noexec", "b/git/", "sys/git", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("sys")}, Path: pathOf(j("a"), j("b"), j("sys"))}
	if res := wantVerdict(t, "git status", env, Simple, ""); res.Executable != j("sys/git") {
		t.Errorf("executable %q, want %q", res.Executable, j("sys/git"))
	}
}

func TestPathRelativeEntry(t *testing.T) {
	r := pathTree(t, "proj/bin/git", "proj/git", "sys/git", "other/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("sys")}}
	for _, p := range []string{pathOf("bin", j("sys")), pathOf(".", j("sys")), pathOf("", j("sys")), ":" + j("sys"), j("sys") + "::", pathOf("./bin", j("sys"))} {
		env.Path = p
		if strings.HasSuffix(p, "::") {
			wantVerdict(t, "git status", env, Simple, "") // the trusted hit comes first
			continue
		}
		wantVerdict(t, "git status", env, PathShadowed, "relative PATH entry")
	}
	// Control: a relative entry with no hit does not matter.
	env.Cwd = j("other")
	env.Path = pathOf("bin", j("sys"))
	wantVerdict(t, "git status", env, Simple, "")
}

func TestPathWritableDirectories(t *testing.T) {
	r := pathTree(t, "trusted/tool", "loose/tool2", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	for _, d := range []string{"trusted", "loose"} {
		if err := os.Chmod(j(d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("trusted")}, Path: pathOf(j("trusted"), j("loose"))}
	// A trusted directory is trusted whatever its permissions (root and
	// Homebrew prefixes are writable by their owner).
	wantVerdict(t, "tool", env, Simple, "")
	// A writable directory the user did not trust is not.
	wantVerdict(t, "tool2", env, PathShadowed, "not a trusted directory")
}

func TestPathSymlinkIntoProject(t *testing.T) {
	r := pathTree(t, "proj/bin/real", "outside/real2", "sys/", "proj/sub/")
	j := func(s string) string { return filepath.Join(r, s) }
	if err := os.Symlink(j("proj/bin/real"), j("sys/tool")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/real2", j("sys/tool2")); err != nil {
		t.Fatal(err)
	}
	env := Env{Cwd: j("proj/sub"), ProjectDir: j("proj"), Trusted: []string{j("sys")}, Path: j("sys")}
	wantVerdict(t, "tool", env, PathShadowed, "is a symlink to "+j("proj/bin/real")+", inside the project")
	wantVerdict(t, j("sys/tool"), env, PathShadowed, "inside the project")
	// Control: a symlink out of the trusted directory but not into the
	// project (Homebrew's Cellar) resolves to its target.
	if res := wantVerdict(t, "tool2", env, Simple, ""); res.Executable != j("outside/real2") {
		t.Errorf("executable %q, want %q", res.Executable, j("outside/real2"))
	}
}

func TestPathTrustedDirInsideProject(t *testing.T) {
	r := pathTree(t, "proj/bin/tool", "cwd/bin/tool2")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("cwd"), ProjectDir: j("proj"), Trusted: []string{j("proj/bin"), j("cwd/bin")}, Path: pathOf(j("proj/bin"), j("cwd/bin"))}
	wantVerdict(t, "tool", env, PathShadowed, "inside the project")
	wantVerdict(t, "tool2", env, PathShadowed, "inside the cwd")
}

func TestPathTrustedThroughSymlinkedDir(t *testing.T) {
	r := pathTree(t, "usr/bin/tool", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	if err := os.Symlink("usr/bin", j("bin")); err != nil { // like /bin -> usr/bin
		t.Fatal(err)
	}
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("usr/bin")}, Path: j("bin")}
	if res := wantVerdict(t, "tool", env, Simple, ""); res.Executable != j("usr/bin/tool") {
		t.Errorf("executable %q", res.Executable)
	}
	// A symlinked project directory is still the project.
	if err := os.Symlink(j("proj"), j("projlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(j("proj/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j("proj/bin/ptool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env.ProjectDir = j("projlink")
	env.Path = pathOf(j("proj/bin"), j("bin"))
	env.Trusted = append(env.Trusted, j("proj/bin"))
	wantVerdict(t, "ptool", env, PathShadowed, "inside the project")
}

func TestPathDefaultTrusted(t *testing.T) {
	ls := ""
	for _, d := range []string{"/usr/bin", "/bin"} {
		if isExecutableFile(filepath.Join(d, "ls")) {
			ls = d
			break
		}
	}
	if ls == "" {
		t.Skip("no ls in /usr/bin or /bin")
	}
	r := pathTree(t, "mine/ls", "proj/")
	env := Env{Cwd: filepath.Join(r, "proj"), ProjectDir: filepath.Join(r, "proj"), Path: ls}
	wantVerdict(t, "ls -la", env, Simple, "")
	env.Path = pathOf(filepath.Join(r, "mine"), ls)
	wantVerdict(t, "ls -la", env, PathShadowed, "it shadows /usr/bin/ls")
	// Configured trust replaces the default.
	env.Trusted = []string{filepath.Join(r, "mine")}
	wantVerdict(t, "ls -la", env, Simple, "")
	env.Path = ls
	wantVerdict(t, "ls -la", env, PathShadowed, "not a trusted directory")
}

func TestPathEmptyOrUnknown(t *testing.T) {
	r := pathTree(t, "proj/")
	env := Env{Cwd: filepath.Join(r, "proj"), ProjectDir: filepath.Join(r, "proj"), Trusted: []string{"/usr/bin"}}
	wantVerdict(t, "git status", env, PathShadowed, "not found in PATH")
	// Builtins need no PATH.
	wantVerdict(t, "echo hi", env, Simple, "")
}

// TestPathMultiCallBinary: a symlink to busybox runs the applet it is
// called as; a symlink to bash under another name is still bash.
func TestPathMultiCallBinary(t *testing.T) {
	r := pathTree(t, "sys/busybox", "sys/bash", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	for _, l := range [][2]string{{"busybox", "sys/ls"}, {"busybox", "sys/sh"}, {"bash", "sys/innocent"}} {
		if err := os.Symlink(l[0], j(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("sys")}, Path: j("sys")}
	if res := wantVerdict(t, "ls -la", env, Simple, ""); res.Executable != j("sys/busybox") {
		t.Errorf("executable %q", res.Executable)
	}
	wantVerdict(t, "sh -c id", env, Indirect, "runs inline code")
	wantVerdict(t, "innocent -c id", env, Indirect, "runs inline code")
	wantVerdict(t, "innocent script.sh", env, Simple, "")
	wantVerdict(t, "busybox ls", env, Indirect, "busybox")
}

// TestPathTildeEntry: bash expands a leading ~ in PATH elements.
func TestPathTildeEntry(t *testing.T) {
	r := pathTree(t, "home/bin/git", "sys/git", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Home: j("home"), Trusted: []string{j("sys")}, Path: pathOf("~/bin", j("sys"))}
	res := wantVerdict(t, "git status", env, PathShadowed, "found as "+j("home/bin/git"))
	if res.Executables["git"] != j("home/bin/git") {
		t.Errorf("executables[git] = %q", res.Executables["git"])
	}
	env.Trusted = append(env.Trusted, j("home/bin"))
	wantVerdict(t, "git status", env, Simple, "")
	env.Home = ""
	wantVerdict(t, "git status", env, PathShadowed, `PATH entry "~/bin" cannot be resolved`)
	env.Home = j("home")
	env.Path = pathOf("~someone/bin", j("sys"))
	wantVerdict(t, "git status", env, PathShadowed, "cannot be resolved")
	// Control: a tilde entry after the trusted hit does not matter.
	env.Path = pathOf(j("sys"), "~someone/bin")
	wantVerdict(t, "git status", env, Simple, "")
}

// TestUppercaseNames: on a case-insensitive file system ENV finds env; the
// tables match names case-insensitively so the wrapper is still caught.
func TestUppercaseNames(t *testing.T) {
	r := pathTree(t, "sys/ENV", "sys/BASH", "sys/Git", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Trusted: []string{j("sys")}, Path: j("sys")}
	wantVerdict(t, "ENV git status", env, Indirect, "env runs another command")
	wantVerdict(t, "BASH -c id", env, Indirect, "runs inline code")
	wantVerdict(t, "Git -c alias.x=!id x", env, Indirect, "git -c")
	wantVerdict(t, "Git status", env, Simple, "")
}

// TestTildeCommandWord: ~/bin/tool runs $HOME/bin/tool; it is simple only
// if the user trusts that directory, and Executables names what runs.
func TestTildeCommandWord(t *testing.T) {
	r := pathTree(t, "home/bin/tool", "proj/")
	j := func(s string) string { return filepath.Join(r, s) }
	env := Env{Cwd: j("proj"), ProjectDir: j("proj"), Home: j("home"), Trusted: []string{"/usr/bin"}, Path: "/usr/bin"}
	wantVerdict(t, "~/bin/tool x", env, PathShadowed, "not in a trusted directory")
	env.Trusted = []string{j("home/bin")}
	res := wantVerdict(t, "~/bin/tool x", env, Simple, "")
	if res.Executable != j("home/bin/tool") || res.Executables[j("home/bin/tool")] != j("home/bin/tool") {
		t.Errorf("executable %q, executables %v", res.Executable, res.Executables)
	}
}
