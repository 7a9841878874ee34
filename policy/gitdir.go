package policy

import (
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// IsGitDir reports whether a directory whose entries are ents (each name
// with its type: os.ModeDir, os.ModeSymlink, 0 for a regular file, or
// another type bit) is a git directory as git tells one when it looks
// for a repository (setup.c's is_git_directory: HEAD, and objects/ and
// refs/ here or in the directory its commondir file names), whatever the
// directory's own name: git status run in it or below it uses it, its
// config's core.fsmonitor and core.worktree included. HEAD and commondir
// count whatever their type but a directory: git opens and reads them, and
// a FIFO a process of the call feeds reads as a file (the sixty-sixth
// attack run's HEAD, a FIFO, got src/g past the sweep, and git status
// there ran its fsmonitor). HEAD's content and
// commondir's target are not read, and objects and refs count whatever
// their type (git asks only access(X_OK), which an executable file or a
// FIFO of mode 755 passes, and follows a link): a directory that has the
// names is taken as one. The launcher's walk and sweep (package confine)
// and undo's check of what it put back (package undo) ask this.
func IsGitDir(ents iter.Seq2[string, os.FileMode]) bool {
	var head, objects, refs, common bool
	for name, typ := range ents {
		switch name {
		case "HEAD":
			head = !typ.IsDir()
		case "objects":
			objects = true
		case "refs":
			refs = true
		case "commondir":
			common = !typ.IsDir()
		}
	}
	return head && (objects && refs || common)
}

// GitPinNames are the entries of a git directory that +git keeps as they
// are (confine pins them): what git runs or reads its configuration from
// (config, config.worktree, hooks; commondir, which moves all three to the
// directory it names, and the old remote definitions in remotes and
// branches) and where it looks for objects (objects/info/alternates).
var GitPinNames = []string{"config", "config.worktree", "commondir", "hooks", "objects/info/alternates", "remotes", "branches"}

// GitPinned reports whether rel, a path below a git directory, is one of
// GitPinNames or inside one, in that git directory or in one kept below
// it (modules/NAME, worktrees/NAME): what no capability writes, +git
// included.
func GitPinned(rel string) bool {
	segs := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	for i := range segs {
		rest := strings.Join(segs[i:], "/")
		for _, n := range GitPinNames {
			if strings.EqualFold(rest, n) || len(rest) > len(n) && strings.EqualFold(rest[:len(n)+1], n+"/") {
				return i == 0 || strings.EqualFold(segs[0], "modules") || strings.EqualFold(segs[0], "worktrees")
			}
		}
	}
	return false
}
