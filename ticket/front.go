package ticket

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// passwdHome is the user's home as the password database has it, not
// $HOME.
func passwdHome() (string, error) {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		return "", fmt.Errorf("failed to find the home directory: %w", err)
	}
	if !filepath.IsAbs(u.HomeDir) {
		return "", errors.New("failed to find the home directory: not absolute")
	}
	return u.HomeDir, nil
}

// InFront reports, from /proc, whether the process that started this one
// (the hook) is the wrapper installed at wrapper (symlinks resolved),
// running as the host's prefix: with exactly one argument. The host runs
// a shell-form hook through the prefix, so a hook whose parent is not the
// wrapper tells that the prefix was unset, replaced, or never set for
// this session. Never an environment variable: a repository's settings
// can set any of those.
func InFront(wrapper string) error {
	return wrapperAt(strconv.Itoa(os.Getppid()), "parent", wrapper)
}

// InFrontSelf is InFront for a hook the wrapper runs in its own process
// (Gate.Hook): this process is the wrapper installed at wrapper, running
// as the host's prefix, read from /proc as InFront reads the parent.
func InFrontSelf(wrapper string) error {
	return wrapperAt("self", "process", wrapper)
}

// wrapperAt checks that /proc/PROC is the wrapper installed at wrapper,
// run with exactly one argument; who names PROC in the errors.
func wrapperAt(proc, who, wrapper string) error {
	exe, err := os.Readlink("/proc/" + proc + "/exe")
	if err != nil {
		return fmt.Errorf("the hook's %s cannot be read: %w", who, err)
	}
	want, err := filepath.EvalSymlinks(wrapper)
	if err != nil {
		return fmt.Errorf("the wrapper %s is not installed: %w", wrapper, err)
	}
	if exe != want {
		return fmt.Errorf("the hook was not run through the wrapper (its %s is %s, not %s): the session's CLAUDE_CODE_SHELL_PREFIX is unset or replaced", who, exe, want)
	}
	cmdline, err := os.ReadFile("/proc/" + proc + "/cmdline")
	if err != nil {
		return fmt.Errorf("the hook's %s cannot be read: %w", who, err)
	}
	if args := bytes.Split(bytes.TrimSuffix(cmdline, []byte{0}), []byte{0}); len(args) != 2 {
		return fmt.Errorf("the hook's %s is the wrapper's binary, but not as the host's prefix", who)
	}
	return nil
}

// AroundWrapper says what the variable k, set in Claude Code's env by a
// project's settings, runs around the wrapper ("" for nothing): Claude
// Code runs each command as CLAUDE_CODE_SHELL -c 'PREFIX LINE', and the
// wrapper runs LINE with bash once its ticket holds, in that env. The
// hook refuses every Bash call while a project's settings set one
// (ReasonNoWrapper), and doctor says so.
func AroundWrapper(k string) string {
	switch {
	case k == "CLAUDE_CODE_SHELL":
		return "names the shell that runs the wrapper"
	case k == "BASH_ENV" || k == "ENV":
		return "makes the shell run a file at start"
	case k == "SHELLOPTS" || k == "BASHOPTS":
		return "changes the shell's options"
	case k == "PS4" || k == "PROMPT_COMMAND":
		return "is run or expanded by the shell"
	case strings.HasPrefix(k, "BASH_FUNC_"):
		return "defines a shell function"
	case strings.HasPrefix(k, "LD_"):
		return "changes what code the shell loads"
	}
	return ""
}
