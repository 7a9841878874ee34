package confine

import (
	"os"
	"path/filepath"

	"github.com/loopguard/loopguard/policy"
)

// Git's configuration under +git. project-write+git lets a call write the
// project's git directory: git replaces .git/index, HEAD and the refs by
// renaming a lock file over them, and Landlock's rights on a directory
// cannot let it do that while refusing the same rename over .git/config.
// But what a +git call runs is not git alone: a commit runs the
// repository's hooks, which run project code (`npm test`, lint-staged's
// eslint.config.js). That code could set core.fsmonitor or core.pager in
// .git/config, or add .git/hooks/post-checkout, and the human's next
// unconfined git would run it. So the git directory's configuration and
// hooks are pinned (gitPins), as Claude Code's sandbox pins them:
//
//   - with namespaces of its own, the launch mounts each pin read-only
//     (Plan.Held, isolate): a write, a rename over it, a new hook, a change
//     of mode are refused by the kernel;
//   - with the filter alone (Claude Code's sandbox, Ubuntu 24.04) no rule
//     grants a git directory in the project whole: the program writes
//     its other entries by rules of their own, and the first stage
//     serves each directory that holds a pin (the git directory, its
//     objects/ and objects/info/, worktrees/NAME/, modules/...) as it
//     serves the project's top (broker_linux.go): it makes the new names
//     there (index.lock, ORIG_HEAD) and renames them over the entries of
//     the write set (index, HEAD), and refuses to make or replace a pin.
//     Until 2026-12-04 the directory was granted whole there, and a pin
//     the program changed was put back only when the call ended: while
//     it ran, another unconfined git (an editor's, a shell prompt's)
//     read it (gitWriteSet);
//   - either way, the first stage keeps a copy of every pin before the
//     program starts and, once the call's last process has exited, puts
//     back what changed and removes what was added (pinned.restore),
//     saying so: a linked worktree's git directory outside the project,
//     which the broker does not serve, is still granted whole with the
//     filter alone, and this is its only guard.
//
// git itself never writes these during add, commit, checkout, merge,
// rebase or stash; a subcommand that does (git config, git remote add,
// git branch --set-upstream-to) fails under +git, as it does in Claude
// Code's sandbox.

// worktreePinNames are those of a linked worktree's own directory
// (worktrees/NAME), which the rest of +git writes (its index, HEAD).
var worktreePinNames = []string{"config.worktree", "commondir"}

// gitPins are the pinned paths of git directory g, those of each
// submodule's git directory kept below it (g/modules/NAME, where NAME may
// hold slashes: git names a submodule by its path, so `git submodule add
// URL libs/foo` keeps g/modules/libs/foo; and a submodule's own
// submodules, in its modules/), and those of each linked worktree's
// (g/worktrees/NAME).
func gitPins(g string) []string { return gitPinsAt(g, 0) }

// gitPinsAt is gitPins of a git directory depth levels of submodules and
// names below the project's.
func gitPinsAt(g string, depth int) []string {
	var out []string
	for _, n := range policy.GitPinNames {
		out = append(out, filepath.Join(g, n))
	}
	ents, _ := os.ReadDir(filepath.Join(g, "worktrees"))
	for _, m := range ents {
		if m.IsDir() {
			for _, n := range worktreePinNames {
				out = append(out, filepath.Join(g, "worktrees", m.Name(), n))
			}
		}
	}
	return append(out, modulePins(filepath.Join(g, "modules"), depth+1)...)
}

// maxModuleDepth bounds how deep below the project's git directory
// gitPins looks for git directories (name components and nested
// submodules alike); below it, a launch under +git does not run.
const maxModuleDepth = 16

// pinTooDeep names, as the last element of a pin, a directory below which
// gitPins did not look.
const pinTooDeep = "\x00nested too deep"

// modulePins are the pins of every git directory below dir, a modules/
// directory or a directory of submodule names: a directory with a HEAD is
// a submodule's git directory (its pins, and its own modules/); any other
// is a component of names, looked into.
func modulePins(dir string, depth int) []string {
	if depth > maxModuleDepth {
		// A pin no snapshot takes (snapshotPins refuses it): the launch
		// fails closed rather than leave a git directory below dir
		// unpinned.
		return []string{filepath.Join(dir, pinTooDeep)}
	}
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, m := range ents {
		if !m.IsDir() {
			continue
		}
		d := filepath.Join(dir, m.Name())
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil {
			out = append(out, gitPinsAt(d, depth)...)
			continue
		}
		out = append(out, modulePins(d, depth+1)...)
	}
	return out
}

// maxGitWalk bounds the entries gitWriteSet reads of one git directory's
// directories that hold a pin (loose objects and refs are in directories
// that hold none, granted whole and never read).
const maxGitWalk = 20_000

// gitWriteSet is what a +git program may write of git directory g, a
// directory of the project, with the filter alone: each directory that
// holds no pin (pins: gitPins(g)), whole (refs/, logs/, objects/ab/); each
// regular file of a directory that holds one (HEAD, index, packed-refs,
// objects/info/packs); and those directories (unclean: g, objects/,
// objects/info/, modules/NAME/...), which the broker serves. A pin gets no
// rule, nor does a link or any other entry. ok is false when a directory
// cannot be read or there are more than maxGitWalk entries to read: the
// caller then grants g whole, as before, and its pins are put back after
// the call.
func gitWriteSet(g string, pins []string) (dirs, files, unclean []string, ok bool) {
	pinned, above := map[string]bool{}, map[string]bool{g: true}
	for _, p := range pins {
		if p == g || !isAncestorOrSelf(g, p) {
			continue
		}
		pinned[p] = true
		for d := filepath.Dir(p); d != g && isAncestorOrSelf(g, d); d = filepath.Dir(d) {
			above[d] = true
		}
	}
	n := 0
	var walk func(d string) bool
	walk = func(d string) bool {
		unclean = append(unclean, d)
		ents, err := os.ReadDir(d)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if n++; n > maxGitWalk {
				return false
			}
			p := filepath.Join(d, e.Name())
			switch {
			case pinned[p]:
			case e.IsDir() && above[p]:
				if !walk(p) {
					return false
				}
			case e.IsDir():
				dirs = append(dirs, p)
			case e.Type().IsRegular():
				files = append(files, p)
			}
		}
		return true
	}
	if !walk(g) {
		return nil, nil, nil, false
	}
	return dirs, files, unclean, true
}
