package cli

import (
	"errors"

	"github.com/loopguard/loopguard/agents"
)

// ExitCode is what the process returns. The hook never returns ExitError:
// Claude Code treats exit 1 as "let the call through".
type ExitCode int

const (
	ExitOK ExitCode = agents.ExitOK
	// ExitError is a command that failed; never the hook's.
	ExitError ExitCode = 1
	// ExitDeny is the hook's deny (agents.ExitDeny: Claude Code blocks the
	// call on exit 2).
	ExitDeny ExitCode = agents.ExitDeny
)

// Exit carries a specific exit code out of a command.
type Exit struct {
	Code ExitCode
	Err  error
}

func (e *Exit) Error() string { return e.Err.Error() }

func (e *Exit) Unwrap() error { return e.Err }

// Hinter is implemented by errors that carry advice a person can act on.
type Hinter interface{ Hint() string }

// ErrSilent marks an exit whose message was already printed.
var ErrSilent = errors.New("")
