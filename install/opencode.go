package install

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/policy"
)

// OpenCode's shell setting for two-phase enforcement (`init --agent
// opencode --ticket`): the user's opencode.json names loopguard-exec as
// "shell", which OpenCode runs as `SHELL -c COMMAND` (package shellwrap).
// The plugin file is written beside it (ApplyOwned); uninstall takes the
// setting out and gives back the user's own bytes.

// OpenCodeShellKey is the configuration key OpenCode runs its shell calls
// with.
const OpenCodeShellKey = "shell"

// ApplyOpenCodeShell sets the shell of OpenCode's configuration file at
// path to launcher. A shell of the user's own is never replaced.
func ApplyOpenCodeShell(path, backupDir, launcher string, dryRun bool) (*Result, error) {
	return apply(path, backupDir, editor{
		merge: func(data []byte) ([]byte, bool, error) {
			root, err := parseOrEmpty(data)
			if err != nil {
				return nil, false, err
			}
			if v := root.get(OpenCodeShellKey); v != nil {
				s, _ := v.str()
				if s == launcher {
					return data, false, nil
				}
				if !isLauncher(s) {
					return nil, false, errors.New(`the configuration already names a shell (` + s + `) of the user's own; loopguard's wrapper needs that setting`)
				}
			}
			root.set(OpenCodeShellKey, fromValue(launcher))
			return encodeLike(root, data)
		},
		hasOurs: func(data []byte) bool { return OpenCodeShell(data) != "" },
	}, dryRun)
}

// RemoveOpenCodeShell takes the shell out of OpenCode's configuration file
// at path when it names a loopguard-exec, restoring the user's own bytes
// where nothing else changed.
func RemoveOpenCodeShell(path, backupDir string, dryRun bool) (*Result, error) {
	strip := func(root *node) (bool, error) {
		if s, ok := root.get(OpenCodeShellKey).str(); ok && isLauncher(s) {
			root.del(OpenCodeShellKey)
			return true, nil
		}
		return false, nil
	}
	return remove(path, backupDir, editor{
		unmerge: func(data []byte) ([]byte, bool, error) { return removeFrom(data, strip) },
		same: func(a, b []byte) bool {
			return sameWithout(a, b, func(n *node) error { _, err := strip(n); return err })
		},
	}, dryRun)
}

// OpenCodeShell is the loopguard-exec an OpenCode configuration names as
// its shell, "" when it names none or another program.
func OpenCodeShell(data []byte) string {
	root, err := parse(data)
	if err != nil {
		return ""
	}
	if s, ok := root.get(OpenCodeShellKey).str(); ok && isLauncher(s) {
		return s
	}
	return ""
}

// isLauncher reports whether s is a loopguard-exec, wherever it was
// installed.
func isLauncher(s string) bool {
	return filepath.IsAbs(s) && strings.TrimSuffix(filepath.Base(s), ".exe") == policy.ExecBinaryName
}
