//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestLauncherRefusesALinkedGitDir: a worktree's git directory lies
// outside the project, and +git code (another call) writes the common git
// directory that holds it, so it could replace it by a link between the
// plan and the ruleset. The launcher opens it without following a link
// (Plan.NoFollow): a git directory that is a link fails the launch, and
// nothing runs. Control: the same directory, not a link, is read.
func TestLauncherRefusesALinkedGitDir(t *testing.T) {
	w := newWorld(t)
	common := filepath.Join(w.outside, "main.git")
	gitdir := filepath.Join(common, "worktrees", "wt")
	elsewhere := filepath.Join(w.outside, "elsewhere.git")
	testfs.Tree(t, w.outside, []byte("ref: refs/heads/main\n"), 0o644,
		"main.git/HEAD", "main.git/objects/x", "main.git/worktrees/wt/HEAD", "elsewhere.git/HEAD", "elsewhere.git/secret")
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt := w
	wt.project = filepath.Join(filepath.Dir(w.project), "wtproj")
	if err := os.MkdirAll(wt.project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.project, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := wt.launch(t, readOnly, nil, "list", gitdir); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Fatalf("control: the worktree's git directory: exit %d %q", code, out)
	}
	// The git directory replaced by a link to another one (it has a HEAD,
	// so the plan names it as the worktree's).
	if err := os.RemoveAll(gitdir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, gitdir); err != nil {
		t.Fatal(err)
	}
	if out, code := wt.launch(t, readOnly, nil, "read", filepath.Join(gitdir, "secret")); code != ExitFailed || strings.HasSuffix(out, "ok") {
		t.Errorf("a git directory that is a link: exit %d %q, want nothing run", code, out)
	}
}
