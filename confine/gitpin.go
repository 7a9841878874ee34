package confine

import (
	"os"
	"path/filepath"
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
//   - either way, the first stage keeps a copy of every pin before the
//     program starts and, once the call's last process has exited, puts
//     back what changed and removes what was added (pinned.restore),
//     saying so. With the filter alone this is the only guard, and it
//     leaves a window: while the call runs, another unconfined git (an
//     editor's) may read what it changed.
//
// git itself never writes these during add, commit, checkout, merge,
// rebase or stash; a subcommand that does (git config, git remote add,
// git branch --set-upstream-to) fails under +git, as it does in Claude
// Code's sandbox.

// gitPinNames are the entries of a git directory pinned under +git: what
// git runs or reads its configuration from (config, config.worktree,
// hooks; commondir, which moves all three to the directory it names, and
// the old remote definitions in remotes and branches) and where it looks
// for objects (objects/info/alternates).
var gitPinNames = []string{"config", "config.worktree", "commondir", "hooks", "objects/info/alternates", "remotes", "branches"}

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
	for _, n := range gitPinNames {
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
