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
// hooks) and where it looks for objects (objects/info/alternates).
var gitPinNames = []string{"config", "config.worktree", "hooks", "objects/info/alternates"}

// gitPins are the pinned paths of git directory g, and those of each
// submodule's git directory kept in it (g/modules/NAME).
func gitPins(g string) []string {
	var out []string
	for _, n := range gitPinNames {
		out = append(out, filepath.Join(g, n))
	}
	mods, _ := os.ReadDir(filepath.Join(g, "modules"))
	for _, m := range mods {
		if m.IsDir() {
			for _, n := range gitPinNames {
				out = append(out, filepath.Join(g, "modules", m.Name(), n))
			}
		}
	}
	return out
}
