package ticket

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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
	ppid := os.Getppid()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid))
	if err != nil {
		return fmt.Errorf("the hook's parent cannot be read: %w", err)
	}
	want, err := filepath.EvalSymlinks(wrapper)
	if err != nil {
		return fmt.Errorf("the wrapper %s is not installed: %w", wrapper, err)
	}
	if exe != want {
		return fmt.Errorf("the hook was not run through the wrapper (its parent is %s, not %s): the session's CLAUDE_CODE_SHELL_PREFIX is unset or replaced", exe, want)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid))
	if err != nil {
		return fmt.Errorf("the hook's parent cannot be read: %w", err)
	}
	if args := bytes.Split(bytes.TrimSuffix(cmdline, []byte{0}), []byte{0}); len(args) != 2 {
		return fmt.Errorf("the hook's parent is the wrapper's binary, but not as the host's prefix")
	}
	return nil
}
