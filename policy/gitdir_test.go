package policy

import "testing"

// TestGitPinned: git's configuration, hooks and the rest of GitPinNames,
// in the git directory or in a submodule's or a linked worktree's kept
// below it, are pinned; the index, the refs and a branch that happens to
// be named config are not.
func TestGitPinned(t *testing.T) {
	for rel, want := range map[string]bool{
		"config": true, "hooks/pre-commit": true, "Config": true, "objects/info/alternates": true, "commondir": true,
		"modules/libs/foo/config": true, "modules/x/hooks": true, "worktrees/wt/config.worktree": true,
		"index.lock": false, "refs/heads/config": false, "objects/ab/cdef": false, "logs/HEAD": false, "rebase-merge/git-rebase-todo": false,
	} {
		if got := GitPinned(rel); got != want {
			t.Errorf("GitPinned(%q) = %v, want %v", rel, got, want)
		}
	}
}
