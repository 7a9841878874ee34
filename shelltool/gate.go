package shelltool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/ticket"
)

// The wrapper: loopguard-exec run as the host's tools.callCommand, with
// Name as its one argument and the call's arguments ({"command": ...,
// "description": ...}) as JSON on its standard input. It claims the
// command's ticket (ticket.Store.Claim: the MAC verified with the
// keyring's key, single use by rename(2)) for this host process and cwd,
// then runs bash -c with the command, unchanged. Where the host runs the
// model's own text (Qwen Code: the nonce derived, not marked), the ticket
// names the capability the hook allowed the call under, and the wrapper
// makes the launch the hook's rewrite makes elsewhere: bash -c COMMAND
// through the launcher (package confine) under that capability, in the
// ticket's project, so a grant means the same as under a host that runs
// the rewrite; a ticket with no capability (an exact approval) runs
// unconfined, as it would there, and one with the as-written word (an
// exact approval under the jail grant) runs through the launcher's
// as-written form, which holds the project while it runs. Where the host runs the hook's rewrite
// (Gemini: the nonce marked), the launch is in the ticket's command
// already. Anything else is refused on standard error with exit 126, in
// the wrapper's words (ticket.IsRefusal reads them): the host hands both
// to the model.

// maxInput bounds the call's arguments on standard input.
const maxInput = 2*ticket.MaxCommand + 4096

// Call is one run of the call command.
type Call struct {
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
	// Launch runs spec confined and returns its exit status; nil is the
	// launcher in this process (confine.Main, as loopguard-exec exec).
	Launch func(spec confine.Spec, stderr io.Writer) int
}

// Run decides the call whose arguments are in input, and runs it (Exec
// does not return) or returns the refusal's exit code.
func (c *Call) Run(input []byte) int {
	cmd, err := command(input)
	if err != nil {
		return c.refuse(err)
	}
	nonce, _, marked := ticket.Unmark(cmd)
	if !marked {
		nonce = Derived(c.Host, c.Cwd, cmd)
	}
	claimed, err := c.Store.Claim(ticket.Want{Nonce: nonce, Command: cmd, Session: c.Host, Cwd: c.Cwd}, c.Key)
	if err != nil {
		return c.refuse(err)
	}
	if claimed.Hold != nil {
		// The ticket directory is read-only here (the host runs in a
		// sandbox): the ticket cannot be spent, so it is not run.
		claimed.Hold.Close()
		return c.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the ticket directory is read-only to the wrapper here, so its ticket cannot be spent"})
	}
	bash := policy.BashPath()
	if bash == "" {
		return c.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "no bash in /usr/bin or /bin"})
	}
	if !marked && claimed.Ticket.Capability != "" {
		return c.launch(claimed.Ticket, bash, cmd)
	}
	run := c.Exec
	if run == nil {
		run = func(bash string, argv []string) error { return syscall.Exec(bash, argv, os.Environ()) }
	}
	err = run(bash, []string{"bash", "-c", cmd})
	if err != nil {
		return c.refuse(&ticket.Error{Reason: ticket.ReasonNoDecision, Why: "failed to run bash: " + err.Error()})
	}
	return 0
}

// launch runs cmd whole (bash -c) under the capability t names, in t's
// project: the launch the hook's jailLaunch writes for a host that runs
// the rewrite. t's MAC covers the capability and the project, so neither
// can be widened without the key.
//
// confine.CapAsWritten (an exact approval under the jail grant) is the
// launcher's as-written form: the command as written, no restriction
// added, holding the ticket's project while it runs (the hook's
// heldAsWritten).
func (c *Call) launch(t *ticket.Ticket, bash, cmd string) int {
	var cp policy.Capability
	asWritten := t.Capability == confine.CapAsWritten
	if !asWritten {
		var err error
		if cp, err = policy.ParseCapability(t.Capability); err != nil {
			return c.refuse(&ticket.Error{Reason: ticket.ReasonTicketInvalid, Why: "the ticket's capability cannot be read: " + err.Error()})
		}
	}
	for _, p := range []string{t.Project, c.Cwd} {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return c.refuse(&ticket.Error{Reason: ticket.ReasonTicketInvalid, Why: fmt.Sprintf("the ticket's launch needs clean absolute paths, not %q", p)})
		}
	}
	spec := confine.Spec{Cap: cp, Project: t.Project, Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}, Unconfined: asWritten, AsWritten: asWritten}
	run := c.Launch
	if run == nil {
		run = func(spec confine.Spec, stderr io.Writer) int { return confine.Main(spec.Args()[1:], stderr) }
	}
	return run(spec, c.Stderr)
}

// command is the call's command from its arguments: a JSON object with a
// string "command" and at most a string "description" besides.
func command(input []byte) (string, error) {
	if len(input) > maxInput {
		return "", &ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the call's arguments are too long"}
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", &ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the call's arguments are not a JSON object"}
	}
	for k, v := range m {
		if _, ok := v.(string); !ok || k != "command" && k != "description" {
			return "", &ticket.Error{Reason: ticket.ReasonNoDecision, Why: fmt.Sprintf("the call's argument %q is not one this tool takes", k)}
		}
	}
	cmd, _ := m["command"].(string)
	if cmd == "" {
		return "", &ticket.Error{Reason: ticket.ReasonNoDecision, Why: "the call has no command"}
	}
	return cmd, nil
}

// refuse writes the refusal in the wrapper's words and returns its exit
// code.
func (c *Call) refuse(err error) int {
	e, ok := err.(*ticket.Error)
	if !ok {
		e = &ticket.Error{Reason: ticket.ReasonNoDecision, Why: err.Error()}
	}
	fmt.Fprintf(c.Stderr, "loopguard: %s: this command did not run: %s. Every command runs only on a decision of loopguard's hook for exactly that command; "+
		"if the hook failed or is not loaded, the user should run `loopguard doctor`. Retry the identical call once; do not work around it.\n", e.Reason, e.Why)
	return ticket.ExitRefused
}

// Main is the call command's process: args are loopguard-exec's
// arguments (exactly Name). loadKey reads the master key (the keyring);
// ticketKey derives the ticket key from it.
func Main(args []string, stdin io.Reader, stderr io.Writer, loadKey func(context.Context) ([]byte, error), ticketKey func([]byte) ([]byte, error)) int {
	c := &Call{Stderr: stderr}
	if len(args) != 1 || args[0] != Name {
		return c.refuse(fmt.Errorf("the call command runs the tool %s alone", Name))
	}
	input, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return c.refuse(fmt.Errorf("failed to read the call's arguments: %v", err))
	}
	dir, err := ticket.Dir()
	if err != nil {
		return c.refuse(err)
	}
	c.Store = &ticket.Store{Dir: dir}
	if c.Host, err = Host(os.Getppid()); err != nil {
		return c.refuse(err)
	}
	if c.Cwd, err = os.Getwd(); err != nil {
		return c.refuse(err)
	}
	c.Key = ticket.KeyFrom(loadKey, ticketKey)
	return c.Run(input)
}
