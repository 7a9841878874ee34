package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/present"
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

// PrintError writes err in the form "loopguard: error: ..." followed by one
// "loopguard: hint: ..." line per hint found in the error chain.
func PrintError(w io.Writer, err error) {
	var quiet *Exit
	if errors.As(err, &quiet) && quiet.Err == ErrSilent {
		return
	}
	// Errors may carry what an agent chose (a key, a path): escaped, as
	// every string that reaches a terminal.
	fmt.Fprintf(w, "loopguard: error: %s\n", present.EscapeText(err.Error()))
	seen := map[string]bool{}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if h, ok := e.(Hinter); ok {
			for _, line := range strings.Split(h.Hint(), "\n") {
				if line != "" && !seen[line] {
					seen[line] = true
					fmt.Fprintf(w, "loopguard: hint: %s\n", present.EscapeText(line))
				}
			}
		}
	}
}
