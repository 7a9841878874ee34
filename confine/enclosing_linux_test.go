//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// fakeRepo makes a git directory at dot as enclosingRepo sees one (HEAD,
// objects).
func fakeRepo(t *testing.T, dot string) {
	t.Helper()
	testfs.Write(t, filepath.Join(dot, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	if err := os.MkdirAll(filepath.Join(dot, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// encPlans are the plans of a read-only launch and of a +git one for the
// project proj (and the jail's), with e's home.
func encPlans(t *testing.T, proj string, e Env) []Plan {
	t.Helper()
	var out []Plan
	for _, c := range []policy.Capability{{}, {Write: true, Git: true}, policy.JailCapability} {
		p, err := NewPlan(Spec{Cap: c, Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}}, e)
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Discard()
		out = append(out, p)
	}
	return out
}

// reads reports whether a read or write rule of p reaches path's contents
// (a rule at it or above it), and whether a listing rule lists it.
func reads(p Plan, path string) (read, listed bool) {
	for _, r := range slices.Concat(p.ReadDirs, p.ReadFiles, p.WriteDirs, p.WriteFiles) {
		if isAncestorOrSelf(r, path) {
			read = true
		}
	}
	for _, r := range p.ListDirs {
		if isAncestorOrSelf(r, path) {
			listed = true
		}
	}
	return read, listed
}

func encEnv(t *testing.T, root, home string) Env {
	tmp := filepath.Join(root, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return Env{Home: home, TempDir: tmp, UID: os.Getuid(), Places: policy.Places{Home: home}}
}

// TestPlanEnclosingRepo: a project that is a directory of a repository
// (mono/svc, no .git of its own) reads its git directory and the ignore
// and attributes files from the top down to it, lists the tree, and
// neither reads another package's file nor an ignored repository of its
// own inside the tree (its .env, its git directory), whatever the
// capability, and writes none of it. Controls: a project with a .git of
// its own and one in no repository read nothing above them.
func TestPlanEnclosingRepo(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	j := func(rel string) string { return filepath.Join(root, rel) }
	fakeRepo(t, j("mono/.git"))
	fakeRepo(t, j("mono/lib/nested/.git"))
	fakeRepo(t, j("own/.git"))
	for _, f := range []string{"mono/.gitignore", "mono/svc/.gitignore", "mono/svc/main.go", "mono/web/.gitignore",
		"mono/web/readme", "mono/lib/nested/.env", "mono/.mailmap", "own/svc/main.go", "plain/svc/main.go", "home/.bashrc"} {
		testfs.Write(t, j(f), []byte("x\n"), 0o644)
	}
	// A link where an ignore file would be: not read through.
	if err := os.Symlink(j("home/.bashrc"), j("mono/.gitattributes")); err != nil {
		t.Fatal(err)
	}
	e := encEnv(t, root, home)
	for i, p := range encPlans(t, j("mono/svc"), e) {
		for path, want := range map[string][2]bool{
			j("mono/.git/HEAD"): {true, true}, j("mono/.gitignore"): {true, true}, j("mono/.gitattributes"): {false, true},
			j("mono/.mailmap"): {true, true}, j("mono/svc/main.go"): {true, true},
			// Listed, never read.
			j("mono/web/readme"): {false, true}, j("mono/web/.gitignore"): {false, true},
			j("mono/lib/nested/.env"): {false, true}, j("mono/lib/nested/.git/HEAD"): {false, true},
			j("home/.bashrc"): {false, false},
		} {
			if r, l := reads(p, path); r != want[0] || l != want[1] {
				t.Errorf("plan %d: %s: read %v listed %v, want %v %v", i, path, r, l, want[0], want[1])
			}
		}
		for _, w := range slices.Concat(p.WriteDirs, p.WriteFiles) {
			if isAncestorOrSelf(w, j("mono/.git")) || !isAncestorOrSelf(j("mono/svc"), w) && isAncestorOrSelf(j("mono"), w) {
				t.Errorf("plan %d writes %s", i, w)
			}
		}
		if !slices.Contains(p.NoFollow, j("mono/.git")) {
			t.Errorf("plan %d: the git directory is not opened through no link: %v", i, p.NoFollow)
		}
	}
	for _, proj := range []string{"own/svc", "plain/svc"} {
		if proj == "own/svc" {
			fakeRepo(t, j("own/svc/.git"))
		}
		for i, p := range encPlans(t, j(proj), e) {
			for _, path := range []string{j("own/.git/HEAD"), j("mono/.git/HEAD")} {
				if r, l := reads(p, path); r || l {
					t.Errorf("control %s plan %d: %s read %v listed %v", proj, i, path, r, l)
				}
			}
		}
	}
}

// TestEnclosingHomeThroughLink: the ninety-first attack run's home
// reached through a link (HOME=/home/u, a link to /var/home/u) with a
// repository of dotfiles at its real path: a project below it with no
// .git of its own (/var/home/u/work/proj, as the hosts name it, by its
// real path) reads neither that git directory (whose history holds the
// dotfiles) nor lists the home, and the plan says why. The old reading
// compared the top with the home's lexical path alone. Control: a
// monorepo below the same home is read.
func TestEnclosingHomeThroughLink(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "var", "home", "u")
	home := filepath.Join(root, "home", "u")
	fakeRepo(t, filepath.Join(real, ".git"))
	fakeRepo(t, filepath.Join(real, "work", "mono", ".git"))
	for _, f := range []string{".bashrc", ".ssh/id_ed25519", "work/proj/main.go", "work/mono/svc/main.go"} {
		testfs.Write(t, filepath.Join(real, f), []byte("x\n"), 0o644)
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, home); err != nil {
		t.Fatal(err)
	}
	e := encEnv(t, root, home)
	for i, p := range encPlans(t, filepath.Join(real, "work", "proj"), e) {
		for _, path := range []string{filepath.Join(real, ".git", "HEAD"), filepath.Join(real, ".bashrc"), filepath.Join(real, ".ssh", "id_ed25519")} {
			if r, l := reads(p, path); r || l {
				t.Errorf("plan %d: %s read %v listed %v", i, path, r, l)
			}
		}
		if len(p.Unread) == 0 || p.Unread[0].Path != real || !strings.Contains(p.Unread[0].Why, "holds the home directory") {
			t.Errorf("plan %d: unread %+v, want the home's real path", i, p.Unread)
		}
	}
	for i, p := range encPlans(t, filepath.Join(real, "work", "mono", "svc"), e) {
		if r, _ := reads(p, filepath.Join(real, "work", "mono", ".git", "HEAD")); !r {
			t.Errorf("control: plan %d does not read the monorepo's git directory below the home", i)
		}
	}
}

// TestEnclosingOtherUsersGit: the ninety-first attack run's .git of
// another user's planted in a sticky directory above the project
// (/tmp/.git above /tmp/proj): git refuses it (safe.directory), and the
// launch reads nothing of it, neither its git directory nor what its
// configuration names (core.excludesFile), nor lists the directory.
// Control: the same repository owned by the user is read. As root, which
// alone can give a file to another user.
func TestEnclosingOtherUsersGit(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make a file of another user's")
	}
	root := t.TempDir()
	sticky := filepath.Join(root, "tmp")
	home := filepath.Join(root, "home")
	fakeRepo(t, filepath.Join(sticky, ".git"))
	testfs.Write(t, filepath.Join(sticky, "proj", "main.go"), []byte("x\n"), 0o644)
	testfs.Write(t, filepath.Join(home, "notes.txt"), []byte("private\n"), 0o644)
	testfs.Write(t, filepath.Join(sticky, ".git", "config"), []byte("[core]\n\texcludesFile = "+filepath.Join(home, "notes.txt")+"\n"), 0o644)
	if err := os.Chmod(sticky, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	// The configuration's file is vetted by its mode and its
	// directories' (homeVet): open them, as /tmp is.
	for _, d := range []string{root, filepath.Dir(root), home} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := encEnv(t, root, home)
	proj := filepath.Join(sticky, "proj")
	for _, c := range []struct {
		owner int
		read  bool
	}{{1002, false}, {os.Getuid(), true}} {
		testfs.Chown(t, filepath.Join(sticky, ".git"), c.owner, c.owner)
		for i, p := range encPlans(t, proj, e) {
			for _, path := range []string{filepath.Join(sticky, ".git", "HEAD"), filepath.Join(home, "notes.txt")} {
				if r, _ := reads(p, path); r != c.read {
					t.Errorf("owner %d, plan %d: %s read %v, want %v", c.owner, i, path, r, c.read)
				}
			}
			if _, l := reads(p, filepath.Join(sticky, "other")); l != c.read {
				t.Errorf("owner %d, plan %d: the sticky directory listed %v, want %v", c.owner, i, l, c.read)
			}
		}
	}
}

// TestEnclosingWorktreeElsewhere: a repository whose configuration sets
// core.worktree to another directory (a bare repository of dotfiles
// checked out at ~, found above the project) is not read. Control: one
// whose core.worktree is its own top is.
func TestEnclosingWorktreeElsewhere(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	mono := filepath.Join(root, "mono")
	fakeRepo(t, filepath.Join(mono, ".git"))
	testfs.Write(t, filepath.Join(mono, "svc", "main.go"), []byte("x\n"), 0o644)
	e := encEnv(t, root, home)
	for _, c := range []struct {
		config string
		read   bool
	}{{"[core]\n\tworktree = " + home + "\n", false}, {"[core]\n\tbare = true\n", false}, {"[core]\n\tworktree = ..\n", true}, {"", true}} {
		testfs.Write(t, filepath.Join(mono, ".git", "config"), []byte(c.config), 0o644)
		for i, p := range encPlans(t, filepath.Join(mono, "svc"), e) {
			if r, _ := reads(p, filepath.Join(mono, ".git", "HEAD")); r != c.read {
				t.Errorf("%q, plan %d: read %v, want %v", c.config, i, r, c.read)
			}
		}
	}
}

// writeMonorepo makes below dir a home (0700) with a monorepo at
// ~/work/mono whose session's project is svc (a Go command, with no .git
// of its own), as a session leaves it: changes in the project and in
// another package, untracked files in both, files the top's .gitignore,
// the project's own and the excludes file the repository's configuration
// names in the home ignore, and an ignored repository of its own inside
// the tree (lib/nested, with a .env and its history). It returns the home,
// the monorepo's top and the environment.
func writeMonorepo(t *testing.T, dir, tmp string) (home, mono string, env []string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	mono = filepath.Join(home, "work", "mono")
	testHome(t, home, map[string]string{
		".gitconfig":                 "[user]\n\tname = Ada\n\temail = ada@example.com\n[core]\n\tabbrev = 12\n",
		".npmrc":                     "//registry.npmjs.org/:_authToken=npm_SECRETTOKEN\n",
		"work/mono/.gitignore":       "node_modules/\n*.log\nlib/nested/\n",
		"work/mono/.gitattributes":   "*.dat binary\n",
		"work/mono/svc/.gitignore":   "*.gen.go\n",
		"work/mono/svc/go.mod":       "module example.com/svc\n\ngo 1.22\n",
		"work/mono/svc/main.go":      "package main\n\nfunc main() { println(\"svc\") }\n",
		"work/mono/svc/x.dat":        "v1\n",
		"work/mono/web/index.js":     "module.exports = 1\n",
		"work/mono/web/readme":       "hello\n",
		"work/mono/lib/nested/.env":  "NESTED_SECRET=1\n",
		"work/mono/lib/nested/a.txt": "nested\n",
		".mono-ignore":               "*.tmp\n",
	})
	env = []string{"HOME=" + home, "PATH=" + filepath.Dir(goBinary(t)) + ":/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + tmp,
		"GOPATH=" + filepath.Join(home, "go"), "GOFLAGS=", "GOTOOLCHAIN=local"}
	git := func(in string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(env, "GIT_AUTHOR_DATE=2026-12-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	nested := filepath.Join(mono, "lib", "nested")
	git(nested, "init", "-q", "-b", "main")
	git(nested, "add", ".")
	git(nested, "commit", "-q", "-m", "nested secret")
	git(mono, "init", "-q", "-b", "main")
	// The repository's own configuration names a file of the home,
	// which git reads from the project too.
	git(mono, "config", "core.excludesFile", "~/.mono-ignore")
	git(mono, "add", ".")
	git(mono, "commit", "-q", "-m", "first")
	testHome(t, home, map[string]string{
		"work/mono/web/readme":         "hello\nchanged in another package\n",
		"work/mono/web/new.txt":        "untracked in another package\n",
		"work/mono/svc/main.go":        "package main\n\n// main prints svc.\nfunc main() { println(\"svc\") }\n",
		"work/mono/svc/x.dat":          "v2\n",
		"work/mono/svc/local.txt":      "untracked in the project\n",
		"work/mono/svc/z.gen.go":       "// Ignored by the project's .gitignore.\n\npackage main\n",
		"work/mono/svc/run.log":        "ignored by the top's\n",
		"work/mono/svc/scratch.tmp":    "ignored by the repository's excludes file\n",
		"work/mono/lib/nested/b.txt":   "untracked in the nested repository\n",
		"work/mono/web/node_modules/x": "ignored by the top's\n",
	})
	// As the user's own git leaves the index: refreshed a second after
	// the files were written, so that no entry is racily clean (git would
	// read the file to compare it, and confined, it may not read another
	// package's: the documented price).
	time.Sleep(1100 * time.Millisecond)
	git(mono, "update-index", "-q", "--refresh")
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return home, mono, env
}

// TestMonorepoAsUnconfined: a session whose project is a directory of a
// repository (a monorepo's svc, no .git of its own) runs git and go there
// through the launcher, printing byte for byte what they print
// unconfined: git status (of the whole tree: the listing finds the other
// package's untracked file, its change is seen by its size), git status
// ., --short, --ignored, git diff . and --stat ., git log, git branch
// --show-current, git rev-parse --show-toplevel, go list, and under the
// jail go build's VCS stamp. git diff of the whole tree fails where it
// must read another package's changed file (the documented price). git
// add is refused. Another package's files, the nested repository's .env
// and history, npm's token stay unreadable, each beside its unconfined
// control. Run by an unprivileged user whose home it is.
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
	proj := filepath.Join(mono, "svc")
	same := [][]string{
		{"git", "status"}, {"git", "status", "."}, {"git", "status", "--short"}, {"git", "status", "--short", "--ignored", "."},
		{"git", "diff", "."}, {"git", "diff", "--stat", "."}, {"git", "log", "--oneline", "-3"},
		{"git", "branch", "--show-current"}, {"git", "rev-parse", "--show-toplevel"},
	}
	jail := policy.JailCapability
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
			t.Errorf("%s: %s: confined is not what runs unconfined\n--- unconfined\n%s\n--- confined\n%s", c, what, free, confined)
		}
	}
	for _, c := range []policy.Capability{{}, jail} {
		for _, argv := range same {
			compare(c, strings.Join(argv, " "), u.run(t, nil, proj, proj, env, gitExe, argv...), u.run(t, &c, proj, proj, env, gitExe, argv...))
		}
		compare(c, "go list ./...", u.run(t, nil, proj, proj, env, goExe, "go", "list", "./..."), u.run(t, &c, proj, proj, env, goExe, "go", "list", "./..."))
		// The price: the other package's change is not read.
		if d := u.run(t, &c, proj, proj, env, gitExe, "git", "diff"); d.code == 0 || !strings.Contains(d.stderr, "cannot hash web/readme") {
			t.Errorf("%s: git diff of the whole tree read another package's file: %s", c, d)
		}
	}
	build := "go build -o app . && go version -m app | grep -v '^app:'; rm -f app"
	free := u.run(t, nil, proj, proj, env, "/bin/bash", "bash", "-c", build)
	if !strings.Contains(free.stdout, "vcs.modified=true") {
		t.Errorf("control: go build unconfined stamps no change: %s", free)
	}
	compare(jail, build, free, u.run(t, &jail, proj, proj, env, "/bin/bash", "bash", "-c", build))
	add := u.run(t, &jail, proj, proj, env, gitExe, "git", "add", "local.txt")
	if add.code == 0 || !strings.Contains(add.stderr, "index.lock") {
		t.Errorf("jail: git add wrote the repository's git directory: %s", add)
	}
	for _, c := range []policy.Capability{{}, jail} {
		for _, p := range []string{filepath.Join(home, ".npmrc"), filepath.Join(mono, "lib", "nested", ".env"), filepath.Join(mono, "web", "readme"),
			filepath.Join(mono, "web", "index.js"), filepath.Join(mono, "lib", "nested", ".git", "HEAD")} {
			free, confined := u.run(t, nil, proj, proj, env, cat, "cat", p), u.run(t, &c, proj, proj, env, cat, "cat", p)
			if free.code != 0 {
				t.Errorf("control: cat %s fails unconfined: %s", p, free)
			}
			if confined.code == 0 || !strings.Contains(confined.stderr, "Permission denied") {
				t.Errorf("%s: cat %s confined: %s", c, p, confined)
			}
			table = append(table, c.String()+"\tcat "+strings.TrimPrefix(p, home+"/")+"\tunreadable (read unconfined)")
		}
		// The nested repository's history: git there finds the
		// monorepo's instead, never the nested one's commit.
		if l := u.run(t, &c, proj, proj, env, gitExe, "git", "-C", "../lib/nested", "log", "--format=%s"); strings.Contains(l.stdout, "nested secret") {
			t.Errorf("%s: the nested repository's history is read: %s", c, l)
		}
		// Control: the top's .gitignore is read.
		if g := u.run(t, &c, proj, proj, env, cat, "cat", filepath.Join(mono, ".gitignore")); g.code != 0 {
			t.Errorf("%s: control: the top's .gitignore is not read: %s", c, g)
		}
	}
	t.Logf("as uid %d:\n%s", u.uid, strings.Join(table, "\n"))
}

// TestNoFollowFileRule: a file rule of the enclosing repository's
// (its .gitignore, NoFollow) that is a link when the launch adds its
// rules (made one after the plan, to a key) gets no rule, and the launch
// runs; the regular file beside it is read. Control: the same link as a
// rule that follows links reads the key.
func TestNoFollowFileRule(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", ABI())
	}
	dir := t.TempDir()
	f, key, l := filepath.Join(dir, ".gitignore"), filepath.Join(dir, "key"), filepath.Join(dir, "web", ".gitattributes")
	testfs.Write(t, f, []byte("*.log\n"), 0o644)
	testfs.Write(t, key, []byte("KEY\n"), 0o600)
	if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, l); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		nofollow []string
		keyRead  bool
	}{{[]string{f, l}, false}, {nil, true}} {
		done := make(chan [3]error)
		go func() {
			// Never unlocked: the restricted thread ends with the
			// goroutine.
			runtime.LockOSThread()
			rs, err := newRuleset(Plan{ReadFiles: []string{f, l}, NoFollow: c.nofollow}, policy.Capability{}, ABI())
			if err == nil {
				err = rs.restrict()
			}
			if err != nil {
				done <- [3]error{err}
				return
			}
			open := func(p string) error {
				fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err == nil {
					unix.Close(fd)
				}
				return err
			}
			done <- [3]error{nil, open(f), open(l)}
		}()
		r := <-done
		if r[0] != nil {
			t.Fatalf("nofollow %v: the launch fails: %v", c.nofollow, r[0])
		}
		if r[1] != nil {
			t.Errorf("nofollow %v: the regular file is not read: %v", c.nofollow, r[1])
		}
		if got := r[2] == nil; got != c.keyRead {
			t.Errorf("nofollow %v: the key through the link read %v, want %v (%v)", c.nofollow, got, c.keyRead, r[2])
		}
	}
}
