package policy

import (
	"fmt"
	"os"
	"path/filepath"
)

// Where the guard keeps its files, the one home of these two facts: the
// state (grants, pending calls, the audit log) and the configuration.

// StateDir is $XDG_STATE_HOME/loopguard, or ~/.local/state/loopguard.
func StateDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "loopguard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "loopguard"), nil
}

// ConfigDir is $XDG_CONFIG_HOME/loopguard, or ~/.config/loopguard.
func ConfigDir() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "loopguard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	return filepath.Join(home, ".config", "loopguard"), nil
}
