//go:build !unix

package ticket

import (
	"errors"
	"os"
)

// The wrapper stands in front of a Unix shell (Claude Code's
// CLAUDE_CODE_SHELL_PREFIX on Linux and macOS); elsewhere it refuses.

func lockNB(*os.File) error { return errors.New("ticket locks need a Unix system") }

func writable(string) bool { return true }

func inherit(*os.File) {}
