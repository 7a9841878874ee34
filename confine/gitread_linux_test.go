//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// gitIn runs git in dir (no user or system configuration) and returns
// its output.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestReadRefsAndIndex: what gitRefs reads of a git directory itself is
// what git says: its refs (loose, packed, a loose one over a packed one,
// a detached HEAD; a symbolic ref left out) as for-each-ref lists them,
// and its index's entries, in each format version (2; 3, which an
// intent-to-add entry's extended flags need; 4, whose paths are
// compressed), as ls-files -s lists them. A reftable or a split index is
// errGitFormat, for git to be asked.
func TestReadRefsAndIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	for _, p := range []string{"a.txt", "src/deep/name/x.go", "src/deep/name/y.go", ".husky/pre-commit", "zz"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "one")
	gitIn(t, dir, "tag", "v1")
	gitIn(t, dir, "pack-refs", "--all")
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "two") // a loose ref over its packed one
	gitIn(t, dir, "branch", "feature/x")
	gitIn(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/feature/x")
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	refs := func() {
		t.Helper()
		got, err := readRefs(root, ".git")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for line := range strings.SplitSeq(strings.TrimSpace(gitIn(t, dir, "for-each-ref", "--format=%(objectname) %(refname) %(symref)")), "\n") {
			f := strings.Fields(line) // a symbolic ref as what it leads to
			want[f[1]] = f[0]
		}
		if head, _ := os.ReadFile(filepath.Join(dir, ".git/HEAD")); !strings.HasPrefix(string(head), "ref:") {
			want["HEAD"] = strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
		}
		if orig, err := os.ReadFile(filepath.Join(dir, ".git/ORIG_HEAD")); err == nil {
			want["ORIG_HEAD"] = strings.TrimSpace(string(orig))
		}
		if len(got) != len(want) {
			t.Errorf("readRefs: %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("readRefs[%s] = %q, want %q", k, got[k], v)
			}
		}
	}
	refs()
	gitIn(t, dir, "checkout", "-q", "--detach")
	gitIn(t, dir, "reset", "-q", "HEAD") // an ORIG_HEAD
	refs()
	// What git reads and this does not read exactly as git writes it is
	// git's to say (the thirty-fifth attack run's ways past it): each
	// errGitFormat.
	id := strings.TrimSpace(gitIn(t, dir, "rev-parse", "HEAD"))
	for name, text := range map[string]string{
		"refs/heads/trail": id + " junk\n", "refs/heads/upper": strings.ToUpper(id) + "\n", "refs/heads/bare": id,
		"refs/heads/symorig": "ref: ORIG_HEAD\n",
	} {
		p := filepath.Join(dir, ".git", name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readRefs(root, ".git"); err != errGitFormat {
			t.Errorf("%s holding %q: %v, want errGitFormat", name, text, err)
		}
		os.Remove(p)
	}
	link := filepath.Join(dir, ".git/refs/heads/link")
	if err := os.Symlink("../../HEAD", link); err != nil {
		t.Fatal(err)
	}
	if _, err := readRefs(root, ".git"); err != errGitFormat {
		t.Errorf("a ref that is a link: %v, want errGitFormat", err)
	}
	os.Remove(link)
	packed := filepath.Join(dir, ".git/packed-refs")
	before, _ := os.ReadFile(packed)
	if err := os.WriteFile(packed, append(before, []byte(strings.ToUpper(id)+" refs/heads/packedup\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRefs(root, ".git"); err != errGitFormat {
		t.Errorf("an upper-case line of packed-refs: %v, want errGitFormat", err)
	}
	if err := os.WriteFile(packed, before, 0o644); err != nil {
		t.Fatal(err)
	}
	refs() // control: as it was

	index := func(version string) {
		t.Helper()
		gitIn(t, dir, "update-index", "--index-version", version)
		data, err := os.ReadFile(filepath.Join(dir, ".git/index"))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := readIndex(data, 20, func(string) bool { return true })
		if err != nil {
			t.Fatalf("version %s: %v", version, err)
		}
		n := 0
		for ent := range strings.SplitSeq(gitIn(t, dir, "ls-files", "-s", "-z"), "\x00") {
			meta, rel, ok := strings.Cut(ent, "\t")
			if !ok {
				continue
			}
			n++
			if got[rel] != meta {
				t.Errorf("version %s: readIndex[%s] = %q, want %q", version, rel, got[rel], meta)
			}
		}
		if len(got) != n || n < 6 {
			t.Errorf("version %s: readIndex has %d entries, ls-files %d", version, len(got), n)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-N", "new.txt") // an intent-to-add entry: extended flags
	for _, v := range []string{"2", "3", "4"} {
		index(v)
	}
	// A skip-worktree entry of a path it is asked for (git commits it as
	// staged whatever the worktree holds) is not read; of another, it is.
	gitIn(t, dir, "update-index", "--skip-worktree", ".husky/pre-commit")
	data, err := os.ReadFile(filepath.Join(dir, ".git/index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readIndex(data, 20, func(p string) bool { return p == ".husky/pre-commit" }); err != errGitFormat {
		t.Errorf("a skip-worktree entry asked for: %v, want errGitFormat", err)
	}
	if _, _, err := readIndex(data, 20, func(p string) bool { return p == "a.txt" }); err != nil {
		t.Errorf("control: a skip-worktree entry not asked for: %v", err)
	}
	gitIn(t, dir, "update-index", "--no-skip-worktree", ".husky/pre-commit")
	// A split index, and a reftable: git is asked.
	gitIn(t, dir, "update-index", "--split-index")
	data, _ = os.ReadFile(filepath.Join(dir, ".git/index"))
	if _, _, err := readIndex(data, 20, func(string) bool { return true }); err != errGitFormat {
		t.Errorf("a split index: %v, want errGitFormat", err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git/reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := readRefs(root, ".git"); err != errGitFormat {
		t.Errorf("a reftable: %v, want errGitFormat", err)
	}
}
