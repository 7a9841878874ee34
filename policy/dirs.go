package policy

import (
	"fmt"
	"os"
	"path/filepath"
)

// Where the guard keeps its files, the one home of these two facts: the
// state (grants, pending calls, the audit log) and the configuration.

// StateDir is $XDG_STATE_HOME/loopguard, or ~/.local/state/loopguard.
func StateDir() (string, error) { return xdgDir("XDG_STATE_HOME", ".local", "state") }

// ConfigDir is $XDG_CONFIG_HOME/loopguard, or ~/.config/loopguard.
func ConfigDir() (string, error) { return xdgDir("XDG_CONFIG_HOME", ".config") }

// xdgDir is loopguard's directory in the XDG base directory the variable
// env names when it holds an absolute path, else in its default, home
// joined with def.
func xdgDir(env string, def ...string) (string, error) {
	if x := os.Getenv(env); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "loopguard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	return filepath.Join(append(append([]string{home}, def...), "loopguard")...), nil
}
