// Package shellwrap is loopguard-exec run as a host's shell: a host that
// runs every shell command as `SHELL -c COMMAND`, SHELL a program its
// configuration names, gets loopguard's wrapper as that program, and the
// wrapper runs COMMAND only on a ticket the hook issued for exactly it
// (package ticket). OpenCode 1.18.33 is such a host: its configuration's
// `shell` (else $SHELL), when the name is not one it knows (bash, zsh,
// fish, nu, sh, dash, ksh, pwsh, cmd), runs a command as [SHELL, "-c",
// COMMAND] (docs/agents.md, OpenCode).
//
// The ticket is bound to the host process (shelltool.Host of the
// wrapper's parent; the hook finds the same process with
// shelltool.HookHost), to the cwd, and to the nonce whose marker line
// (ticket.Mark) the hook writes first in the command the host runs. A
// hook that hung, crashed, answered nothing or was never loaded issued no
// ticket, so nothing runs, and the host hands the refusal to the model.
// The wrapper reads no setting from its environment.
package shellwrap

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shelltool"
	"github.com/loopguard/loopguard/ticket"
)

// Flag is the host's one option before the command.
const Flag = "-c"

// Is reports whether args (the launcher's, after its program) are a host
// running it as its shell: exactly "-c" and the command.
func Is(args []string) bool { return len(args) == 2 && args[0] == Flag }

// maxCommand bounds the command the host hands over.
const maxCommand = ticket.MaxCommand + 4096

// Shell is one run of the wrapper as the host's shell.
type Shell struct {
	Store *ticket.Store
	// Key loads the ticket key.
	Key func() ([]byte, error)
	// Host is the identity of the process that spawned the wrapper.
	Host string
	Cwd  string
	// Stderr gets the refusal.
	Stderr io.Writer
	// Exec runs bash with the command; nil is syscall.Exec.
	Exec func(bash string, argv []string) error
}

// Run decides cmd and runs it (Exec does not return) or returns the
// refusal's exit code.
func (s *Shell) Run(cmd string) int {
	if len(cmd) > maxCommand {
		return s.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the command is too long"})
	}
	nonce, _, marked := ticket.Unmark(cmd)
	if !marked {
		return s.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "no hook decided this command (it carries no ticket)"})
	}
	claimed, err := s.Store.Claim(ticket.Want{Nonce: nonce, Command: cmd, Session: s.Host, Cwd: s.Cwd}, s.Key)
	if err != nil {
		return s.refuse(err)
	}
	if claimed.Hold != nil {
		// The ticket directory is read-only here: the ticket cannot be
		// spent, so it does not run.
		claimed.Hold.Close()
		return s.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the ticket directory is read-only to the wrapper here, so its ticket cannot be spent"})
	}
	bash := policy.BashPath()
	if bash == "" {
		return s.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "no bash in /usr/bin or /bin"})
	}
	run := s.Exec
	if run == nil {
		run = func(bash string, argv []string) error { return syscall.Exec(bash, argv, os.Environ()) }
	}
	if err := run(bash, []string{"bash", "-c", cmd}); err != nil {
		return s.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "failed to run bash: " + err.Error()})
	}
	return 0
}

// refuse writes the refusal in the wrapper's words (ticket.IsRefusal
// reads them) and returns its exit code.
func (s *Shell) refuse(err error) int {
	e, ok := err.(*ticket.Error)
	if !ok {
		e = &ticket.Error{Reason: ticket.ReasonNoDecision, Why: err.Error()}
	}
	fmt.Fprintf(s.Stderr, "loopguard: %s: this command did not run: %s. Every command runs only on a decision of loopguard's hook for exactly that command; "+
		"if the hook failed or is not loaded, the user should run `loopguard doctor`. Retry the identical call once; do not work around it.\n", e.Reason, e.Why)
	return ticket.ExitRefused
}

// Main is the wrapper's process as the host's shell: args are
// loopguard-exec's arguments ("-c" and the command). loadKey reads the
// master key (the keyring); ticketKey derives the ticket key from it.
func Main(args []string, stderr io.Writer, loadKey func(context.Context) ([]byte, error), ticketKey func([]byte) ([]byte, error)) int {
	s := &Shell{Stderr: stderr}
	if !Is(args) {
		return s.refuse(fmt.Errorf("as a shell the wrapper takes -c and one command"))
	}
	dir, err := ticket.Dir()
	if err != nil {
		return s.refuse(err)
	}
	s.Store = &ticket.Store{Dir: dir}
	if s.Host, err = shelltool.Host(os.Getppid()); err != nil {
		return s.refuse(err)
	}
	if s.Cwd, err = os.Getwd(); err != nil {
		return s.refuse(err)
	}
	s.Key = ticket.KeyFrom(loadKey, ticketKey)
	return s.Run(args[1])
}
