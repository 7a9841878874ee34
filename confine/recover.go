package confine

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
)

// recoverFlag, after the subcommand, is the recovery a hook runs after a
// call that may have been killed: `exec --recover --project DIR ROOT...`
// sweeps for each launch of the project DIR, in the scratch directory of
// each temp directory ROOT, that was killed before its sweep (see
// pending_linux.go), kills what that call left in its cgroup, and says so
// on standard error. A launch's own recovery (launchDir) finds the same
// launches only when the next call starts; the hook after the call runs
// as soon as the client has killed it, outside the agent's sandbox, so
// the project is not left as the call left it for an editor's or the
// user's git in between.
const recoverFlag = "--recover"

// RecoverArgs is the command line, after the launcher's path, of the
// recovery for the project's launches under the temp directories roots.
func RecoverArgs(project string, roots []string) []string {
	return append([]string{Subcommand, recoverFlag, "--project", project}, roots...)
}

// ScratchRoots are the temp directories whose scratch directory a launch
// of the user's may have used: the user's own temp directory (tmpDir,
// $TMPDIR; /tmp when unset or relative), /tmp, and Claude Code's sandbox's
// (TMPDIR/claude-UID) below each.
func ScratchRoots(tmpDir string, uid int) []string {
	if !filepath.IsAbs(tmpDir) {
		// Unset, or relative: the launcher's own temp directory is then
		// /tmp (Go's os.TempDir, which the launch's TMPDIR is read by).
		tmpDir = "/tmp"
	}
	sb := fmt.Sprintf("claude-%d", uid)
	roots := []string{filepath.Clean(tmpDir), "/tmp", filepath.Join(tmpDir, sb), filepath.Join("/tmp", sb)}
	slices.Sort(roots)
	return slices.Compact(roots)
}

// recoverMain is `exec --recover --project DIR ROOT...` (args after the
// flag): every ROOT absolute and clean, DIR too.
func recoverMain(args []string, e Env, w io.Writer) int {
	if len(args) < 3 || args[0] != "--project" || !cleanAbs(args[1]) {
		fmt.Fprintf(w, "loopguard: usage: %s %s --project DIR ROOT...\n", Subcommand, recoverFlag)
		return ExitFailed
	}
	project, roots := args[1], args[2:]
	for _, r := range roots {
		if !cleanAbs(r) {
			fmt.Fprintf(w, "loopguard: %s: %q is not an absolute, clean path\n", recoverFlag, r)
			return ExitFailed
		}
	}
	// A recovery may outlive the hook that started it (one the call made
	// slow is never killed at the hook's deadline): a pipe of the
	// client's it kept would keep the client waiting for its end (the
	// seventy-fourth attack run found one the hook was given).
	closeInherited()
	for _, r := range roots {
		e.TempDir = r
		recoverProject(filepath.Join(ScratchDirIn(r, e.UID), launchesDir), project, e, w)
	}
	return 0
}

func cleanAbs(p string) bool { return filepath.IsAbs(p) && filepath.Clean(p) == p }
