//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
)

// writeMonorepo makes below dir a home (0700) with a monorepo at
// ~/work/mono whose session's project is packages/foo (a Go command,
// with no .git of its own), as a session leaves it: a change in another
// package and in the project, untracked files in both, files the top's
// .gitignore, a package's own and the excludes file the repository's
// configuration names in the home ignore; a linked worktree of it at
// ~/work/mono-wt; the home's secrets and another project's .env. It
// returns the home, the monorepo's top and the environment.
func writeMonorepo(t *testing.T, dir, tmp string) (home, mono string, env []string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	mono = filepath.Join(home, "work", "mono")
	testHome(t, home, map[string]string{
		".gitconfig":                        "[user]\n\tname = Ada\n\temail = ada@example.com\n[core]\n\tabbrev = 12\n",
		".npmrc":                            "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n",
		"other/.env":                        "OTHER_SECRET=1\n",
		"work/mono/.gitignore":              "node_modules/\n*.gen.go\n*.log\n",
		"work/mono/.gitattributes":          "*.dat binary\n",
		"work/mono/packages/foo/go.mod":     "module example.com/foo\n\ngo 1.22\n",
		"work/mono/packages/foo/main.go":    "package main\n\nfunc main() { println(\"foo\") }\n",
		"work/mono/packages/foo/x.dat":      "v1\n",
		"work/mono/packages/bar/index.js":   "module.exports = 1\n",
		"work/mono/packages/bar/.gitignore": "dist/\n",
		"work/mono/web/readme":              "hello\n",
		".mono-ignore":                      "*.tmp\n",
	})
	env = []string{"HOME=" + home, "PATH=" + filepath.Dir(goBinary(t)) + ":/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + tmp,
		"GOPATH=" + filepath.Join(home, "go"), "GOFLAGS=", "GOTOOLCHAIN=local"}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = mono
		cmd.Env = append(env, "GIT_AUTHOR_DATE=2026-12-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	// The repository's own configuration names a file of the home,
	// which git reads from the project too.
	git("config", "core.excludesFile", "~/.mono-ignore")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	git("worktree", "add", "-q", "-b", "feature", filepath.Join(home, "work", "mono-wt"))
	testHome(t, home, map[string]string{
		"work/mono/web/readme":               "hello\nchanged in another package\n",
		"work/mono/packages/foo/main.go":     "package main\n\n// main prints foo.\nfunc main() { println(\"foo\") }\n",
		"work/mono/packages/foo/x.dat":       "v2\n",
		"work/mono/packages/foo/local.txt":   "untracked in the project\n",
		"work/mono/packages/foo/z.gen.go":    "// Ignored by the top's .gitignore.\n\npackage main\n",
		"work/mono/packages/foo/run.log":     "ignored\n",
		"work/mono/packages/foo/scratch.tmp": "ignored by the repository's excludes file\n",
		"work/mono/packages/bar/new.txt":     "untracked in another package\n",
		"work/mono/packages/bar/dist/out.js": "ignored by the package's own .gitignore\n",
		"work/mono-wt/packages/foo/wt.txt":   "untracked in the worktree\n",
	})
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return home, mono, env
}

// TestMonorepoAsUnconfined: a session whose project is a directory of a
// repository (a monorepo's packages/foo, no .git of its own) runs git,
// rg and go there through the launcher, printing byte for byte what they
// print unconfined: git status (which reports the whole tree), git status
// ., git log, git diff --stat (which reads the other package's change),
// git branch --show-current, git rev-parse --show-toplevel, rg (the top's
// .gitignore), go list, and under the jail go build's VCS stamp (go
// version -m); in a directory of a linked worktree too. Run by an
// unprivileged user whose home it is. The repository's git directory is
// read, never written (git add refused under the jail, which runs it
// unconfined); npm's token and another project's .env stay unreadable.
func TestMonorepoAsUnconfined(t *testing.T) {
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	goExe := goBinary(t)
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	u := newUserHomes(t)
	dir := filepath.Join(u.root, "m")
	home, mono, env := writeMonorepo(t, dir, u.tmp)
	testfs.Chown(t, dir, u.uid, u.gid)
	proj := filepath.Join(mono, "packages", "foo")
	wt := filepath.Join(home, "work", "mono-wt", "packages", "foo")
	type command struct {
		exe  string
		argv []string
		in   string // the project: proj, or wt
	}
	same := []command{
		{gitExe, []string{"git", "status"}, proj},
		{gitExe, []string{"git", "status", "."}, proj},
		{gitExe, []string{"git", "status", "--short", "--ignored"}, proj},
		{gitExe, []string{"git", "log", "--stat"}, proj},
		{gitExe, []string{"git", "diff", "--stat"}, proj},
		{gitExe, []string{"git", "diff"}, proj},
		{gitExe, []string{"git", "branch", "--show-current"}, proj},
		{gitExe, []string{"git", "rev-parse", "--show-toplevel"}, proj},
		{goExe, []string{"go", "list", "./..."}, proj},
		{gitExe, []string{"git", "status"}, wt},
		{gitExe, []string{"git", "branch", "--show-current"}, wt},
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		same = append(same, command{rg, []string{"rg", "--files", "--sort", "path"}, proj},
			command{rg, []string{"rg", "-n", "--sort", "path", "foo"}, proj})
	}
	jail := policy.JailCapability
	// The jail's private build cache, shared by the unconfined runs: the
	// runtime is compiled once.
	r := u.run(t, &jail, proj, proj, env, goExe, "go", "env", "GOCACHE")
	goCache := strings.TrimSpace(r.stdout)
	if r.code != 0 || !filepath.IsAbs(goCache) {
		t.Fatalf("go env GOCACHE through the launcher: %s", r)
	}
	env = append(env, "GOCACHE="+goCache)
	var table []string
	compare := func(c policy.Capability, what string, free, confined runResult) {
		t.Helper()
		switch {
		case free == confined && free.code == 0:
			table = append(table, c.String()+"\t"+what+"\tsame")
		case free.code != 0:
			t.Errorf("%s: control: %s fails unconfined: %s", c, what, free)
		default:
			table = append(table, c.String()+"\t"+what+"\tDIFFERS")
			t.Errorf("%s: %s: confined is not what runs unconfined\n--- unconfined\n%s\n--- confined\n%s", c, what, free, confined)
		}
	}
	for _, c := range []policy.Capability{{}, jail} {
		for _, cmd := range same {
			what := strings.Join(cmd.argv, " ") + " (in " + strings.TrimPrefix(cmd.in, home+"/") + ")"
			compare(c, what, u.run(t, nil, cmd.in, cmd.in, env, cmd.exe, cmd.argv...), u.run(t, &c, cmd.in, cmd.in, env, cmd.exe, cmd.argv...))
		}
	}
	// go build's VCS stamp, under the jail, which writes the project:
	// go runs git status at the repository's top.
	build := "go build -o app . && go version -m app | grep -v '^app:'; rm -f app"
	free := u.run(t, nil, proj, proj, env, "/bin/bash", "bash", "-c", build)
	if !strings.Contains(free.stdout, "vcs.modified=true") {
		t.Errorf("control: go build unconfined stamps no change: %s", free)
	}
	compare(jail, build, free, u.run(t, &jail, proj, proj, env, "/bin/bash", "bash", "-c", build))
	// The repository's git directory is read, never written: git add
	// from the project is refused under the jail (a call the human
	// approves runs it unconfined).
	add := u.run(t, &jail, proj, proj, env, gitExe, "git", "add", "local.txt")
	if add.code == 0 || !strings.Contains(add.stderr, "index.lock") {
		t.Errorf("jail: git add wrote the repository's git directory: %s", add)
	}
	for _, c := range []policy.Capability{{}, jail} {
		for _, rel := range []string{".npmrc", "other/.env"} {
			p := filepath.Join(home, rel)
			free, confined := u.run(t, nil, proj, proj, env, cat, "cat", p), u.run(t, &c, proj, proj, env, cat, "cat", p)
			if free.code != 0 {
				t.Errorf("control: cat ~/%s fails unconfined: %s", rel, free)
			}
			if confined.code == 0 || !strings.Contains(confined.stderr, "Permission denied") {
				t.Errorf("%s: cat ~/%s confined: %s", c, rel, confined)
			}
			table = append(table, c.String()+"\tcat ~/"+rel+"\tunreadable (read unconfined)")
		}
	}
	t.Logf("as uid %d:\n%s", u.uid, strings.Join(table, "\n"))
}

// TestEnclosingHomeRepository: a home that is a repository itself (a
// repository of dotfiles at ~) is not read for a project below it with no
// .git of its own: neither its tree (the home) nor its git directory
// (whose history holds the dotfiles); the plan says so. git status in
// the project, which unconfined reports the dotfiles, fails; run by an
// unprivileged user whose home it is. Control: a repository of its own
// below the home works as before.
func TestEnclosingHomeRepository(t *testing.T) {
	gitExe, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	u := newUserHomes(t)
	dir := filepath.Join(u.root, "d")
	home := filepath.Join(dir, "home")
	testHome(t, home, map[string]string{
		".gitconfig": "[user]\n\tname = Ada\n\temail = ada@example.com\n", ".bashrc": "export TOKEN=x\n",
		"work/proj/README.md": "# proj\n", "work/own/README.md": "# own\n",
	})
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + u.tmp}
	git := func(in string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(home, "init", "-q")
	git(home, "add", ".gitconfig", ".bashrc")
	git(home, "commit", "-q", "-m", "dotfiles")
	own := filepath.Join(home, "work", "own")
	git(own, "init", "-q")
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	testfs.Chown(t, dir, u.uid, u.gid)
	proj := filepath.Join(home, "work", "proj")
	places := policy.Places{Home: home}
	e := Env{Home: home, TempDir: u.tmp, Places: places, UID: os.Getuid(), Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	if os.Getuid() == 0 {
		e.TempDir = t.TempDir()
	}
	p, err := NewPlan(Spec{Cap: policy.Capability{}, Project: proj, Cwd: proj, Exe: gitExe, Argv: []string{"git", "status"}}, e)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Discard()
	if len(p.Unread) != 1 || p.Unread[0].Path != home || !strings.Contains(p.Unread[0].Why, "holds the home directory") {
		t.Errorf("the plan's unread: %+v, want the home, as the repository the project is in", p.Unread)
	}
	for _, d := range p.ReadDirs {
		if isAncestorOrSelf(d, filepath.Join(home, ".git")) {
			t.Errorf("the home's git directory is read (%s)", d)
		}
	}
	ro := policy.Capability{}
	free, confined := u.run(t, nil, proj, proj, env, gitExe, "git", "status", "--short"), u.run(t, &ro, proj, proj, env, gitExe, "git", "status", "--short")
	if free.code != 0 || !strings.Contains(free.stdout, "?? ../") {
		t.Errorf("control: git status unconfined in the home's repository: %s", free)
	}
	if confined.code == 0 || confined.stdout != "" {
		t.Errorf("git status confined reports the home's repository: %s", confined)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".git/config", ".bashrc"} {
		if r := u.run(t, &ro, proj, proj, env, cat, "cat", filepath.Join(home, rel)); r.code == 0 {
			t.Errorf("cat ~/%s confined: %s", rel, r)
		}
	}
	// Control: a repository of its own below the home.
	free, confined = u.run(t, nil, own, own, env, gitExe, "git", "status"), u.run(t, &ro, own, own, env, gitExe, "git", "status")
	if free != confined || free.code != 0 {
		t.Errorf("control: git status in a repository of its own below the home\n--- unconfined\n%s\n--- confined\n%s", free, confined)
	}
}
