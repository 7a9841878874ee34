// Package register owns loopguard's registration with every agent: the
// hook's command line (Command: written by init, read back by doctor and
// uninstall, parsed by the hook itself), the host timeout registered with
// it, what each agent's hook file holds (Registration, AgentFile) and where
// that file is. Package install edits the files; this package says what
// goes in them, and links none of the editing, so the hook-only binary can
// read its own command line without the settings installer.
//
// The package never prints and never exits.
package register

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// Word is the hook's subcommand: `loopguard hook ...`, and the first
// argument every registration gives the binary.
const Word = "hook"

// Command is one hook command line as a host runs it:
//
//	BINARY hook [AGENT] --event EVENT --mode MODE [--wait WAIT] [--deadline DEADLINE] [--scope SCOPE]
//
// in exec form (Binary and Args) or as a shell command (String), where a
// registration may add `|| echo 'FALLBACK'`.
type Command struct {
	// Binary is the executable: an absolute path, or a name the host's
	// PATH finds (the plugin's).
	Binary string
	// Agent is the agent the hook answers as ("": Claude Code's
	// registration, which Cursor and Copilot CLI run too; the payload says
	// which agent sent it).
	Agent string
	// Event is the event the hook is registered for, in the agent's
	// spelling ("": not said).
	Event string
	// Mode is enforce, ask or audit ("" is enforce).
	Mode string
	// Wait holds a call without a grant until a human decides, at most
	// this long (0: no wait).
	Wait time.Duration
	// Deadline is the hook's own deadline (0 is agents.DefaultDeadline,
	// which is not written).
	Deadline time.Duration
	// Ticket: Bash runs through loopguard's wrapper (Claude Code's
	// CLAUDE_CODE_SHELL_PREFIX), and the hook issues a ticket for every
	// Bash call it allows (package ticket); it refuses Bash where it
	// cannot prove the wrapper stands in front of the session.
	Ticket bool
	// Scope names the registration among an agent's several (user,
	// project: the file init wrote it into), "" where it is not written.
	// A host that runs every registration it finds runs the same call
	// through each; the hook tells them apart by it (hooks.Engine's
	// Registration), so one registration follows another's answer to a
	// call instead of consuming its approval again.
	Scope string
	// Fallback, in the shell form only, is echoed when the hook cannot
	// start or dies: the host's deny, for hosts that let a call through
	// on a failed hook. It holds no single quote.
	Fallback string
}

// ErrNotHook is Parse's answer for a command line that does not run
// loopguard's hook: its executable is not loopguard, loopguard-hook nor
// the running binary, or its first argument is not "hook".
var ErrNotHook = errors.New("not loopguard's hook command")

// ArgsError is a hook command line whose arguments the hook refuses.
type ArgsError struct{ Err error }

func (e *ArgsError) Error() string { return "bad hook arguments: " + e.Err.Error() }
func (e *ArgsError) Unwrap() error { return e.Err }

// Modes are the hook's modes, the first the default.
var Modes = []string{hooks.ModeEnforce, hooks.ModeAsk, hooks.ModeAudit}

func (c Command) mode() string {
	if c.Mode == "" {
		return hooks.ModeEnforce
	}
	return c.Mode
}

// Args are the arguments after the executable, "hook" first. The mode is
// always written, the deadline only when it is not the default.
func (c Command) Args() []string {
	args := []string{Word}
	if c.Agent != "" {
		args = append(args, c.Agent)
	}
	if c.Event != "" {
		args = append(args, "--event", c.Event)
	}
	args = append(args, "--mode", c.mode())
	if c.Wait > 0 {
		args = append(args, "--wait", c.Wait.String())
	}
	if c.Deadline != 0 && c.Deadline != agents.DefaultDeadline {
		args = append(args, "--deadline", c.Deadline.String())
	}
	if c.Ticket {
		args = append(args, "--ticket")
	}
	if c.Scope != "" {
		args = append(args, "--scope", c.Scope)
	}
	return args
}

// String is the command as a shell runs it: every word quoted where it
// needs it (shellparse.Quote), then `|| echo 'FALLBACK'` when there is a
// fallback.
func (c Command) String() string {
	words := []string{quote(c.Binary)}
	for _, a := range c.Args() {
		words = append(words, quote(a))
	}
	s := strings.Join(words, " ")
	if c.Fallback != "" {
		s += " || echo " + quote(c.Fallback)
	}
	return s
}

// quote is s as one shell word, bare when nothing in it needs quoting.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return shellparse.Quote(s)
}

// ParseArgs reads the hook's arguments as `loopguard hook` receives them,
// without the executable and the word "hook": an agent name first unless
// it starts with "-", then the flags. Mode and Deadline get their
// defaults. On an error the command holds what was read before it (the
// agent above all: the hook denies in that agent's format); the error is
// an *ArgsError.
func ParseArgs(args []string) (Command, error) {
	var c Command
	rest := args
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		c.Agent, rest = rest[0], rest[1:]
	}
	fs := flag.NewFlagSet(Word, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Event, "event", "", "the event this hook is registered for")
	fs.StringVar(&c.Mode, "mode", hooks.ModeEnforce, "enforce, ask or audit")
	fs.DurationVar(&c.Wait, "wait", 0, "hold a call without a grant until a human decides, at most this long")
	fs.DurationVar(&c.Deadline, "deadline", agents.DefaultDeadline, "deny if no decision within this time (plus --wait)")
	fs.BoolVar(&c.Ticket, "ticket", false, "issue a ticket for every allowed Bash call; refuse Bash without the wrapper in front")
	fs.StringVar(&c.Scope, "scope", "", "the registration this hook runs for (user, project)")
	err := fs.Parse(rest)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil && !validMode(c.Mode) {
		err = fmt.Errorf("unknown mode %q", c.Mode)
	}
	if err == nil && !validScope(c.Scope) {
		err = fmt.Errorf("unknown scope %q", c.Scope)
	}
	if err != nil {
		return c, &ArgsError{err}
	}
	return c, nil
}

func validMode(m string) bool {
	for _, x := range Modes {
		if m == x {
			return true
		}
	}
	return false
}

// Parse reads a command line back from argv, the executable first, as a
// host runs it in exec form. It is ErrNotHook unless the executable is
// named loopguard or loopguard-hook (or is self, the running binary, when
// self is not "") and "hook" is its first argument; then it is what
// ParseArgs says of the rest (Binary set either way).
func Parse(argv []string, self string) (Command, error) {
	if len(argv) < 2 || argv[1] != Word || !runsLoopguard(argv[0], self) {
		return Command{}, ErrNotHook
	}
	c, err := ParseArgs(argv[2:])
	c.Binary = argv[0]
	return c, err
}

// runsLoopguard reports whether exe names one of loopguard's binaries (by
// its base name, the plugin's bare name included) or is self.
func runsLoopguard(exe, self string) bool {
	if self != "" && exe == self {
		return true
	}
	base := strings.TrimSuffix(filepath.Base(exe), ".exe")
	return base == policy.BinaryName || base == policy.HookBinaryName
}

// ParseShell reads a command line back from a shell command, as String
// writes it or as a person would (any bash quoting of literal words). The
// line is read by shellparse.List: its first command is the hook's (Parse),
// and `|| echo FALLBACK` after it is its Fallback. Any other command after
// it is an *ArgsError (the line still runs loopguard's hook); a line that
// is not a list of literal words (an expansion, a redirection) is
// ErrNotHook.
func ParseShell(line, self string) (Command, error) {
	cmds, ops, ok := shellparse.List(line)
	if !ok {
		return Command{}, ErrNotHook
	}
	c, err := Parse(cmds[0], self)
	if err != nil {
		return c, err
	}
	switch rest := cmds[1:]; {
	case len(rest) == 0:
	case len(rest) == 1 && ops[0] == "||" && len(rest[0]) == 2 && rest[0][0] == "echo":
		c.Fallback = rest[0][1]
	default:
		return c, &ArgsError{fmt.Errorf("the hook is followed by %q %s", ops[0], strings.Join(rest[0], " "))}
	}
	return c, nil
}

// TimeoutMargin is added to the hook's own deadline (and wait) to get the
// timeout registered with the host, so the hook always answers first.
const TimeoutMargin = 25 * time.Second

// TimeoutFor is the timeout, in whole seconds, registered for a hook with
// this deadline and wait.
func TimeoutFor(deadline, wait time.Duration) int {
	return int(math.Ceil((deadline + wait + TimeoutMargin).Seconds()))
}
