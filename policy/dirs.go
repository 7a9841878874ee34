package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Where the guard keeps its files, the one home of these two facts: the
// state (grants, pending calls, the audit log) and the configuration.

// StateDir is $XDG_STATE_HOME/loopguard, or ~/.local/state/loopguard.
func StateDir() (string, error) { return StateDirFrom(os.Getenv) }

// ConfigDir is $XDG_CONFIG_HOME/loopguard, or ~/.config/loopguard.
func ConfigDir() (string, error) { return ConfigDirFrom(os.Getenv) }

// StateDirFrom is StateDir in the environment getenv reads.
func StateDirFrom(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_STATE_HOME", ".local", "state")
}

// UndoDir is where the undo records of jailed calls are kept, beside the
// state directory stateDir ("STATE-undo": ~/.local/state/loopguard-undo),
// never in it: the launcher records from inside Claude Code's sandbox,
// which init lets write this directory and never the state directory (the
// grants, the pending calls, the audit log). The jail itself reaches
// neither.
func UndoDir(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Clean(stateDir) + "-undo"
}

// ConfigDirFrom is ConfigDir in the environment getenv reads.
func ConfigDirFrom(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
}

// xdgDir is loopguard's directory in the XDG base directory the variable
// env names when it holds an absolute path, else in its default, home
// joined with def.
func xdgDir(getenv func(string) string, env string, def ...string) (string, error) {
	if x := getenv(env); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "loopguard"), nil
	}
	home, err := HomeFrom(getenv)
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	return filepath.Join(append(append([]string{home}, def...), "loopguard")...), nil
}

// HomeFrom is os.UserHomeDir in the environment getenv reads: $HOME on
// Unix.
func HomeFrom(getenv func(string) string) (string, error) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return os.UserHomeDir()
	}
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	return "", errors.New("$HOME is not defined")
}

// BashPath is the bash a whole command is run with (the jail's `bash -c`,
// two-phase enforcement's wrappers): /usr/bin/bash, else /bin/bash, a
// regular file by a fixed path, never looked up in the agent's PATH; ""
// when neither is there.
func BashPath() string {
	for _, p := range []string{"/usr/bin/bash", "/bin/bash"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
