package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	webconsole "github.com/loopguard/loopguard/console"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// defaultOrigin is where loopguard serve is reached by default.
const defaultOrigin = "http://localhost:8377"

func newPasskeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "passkey",
		Short: "Register, list and remove the passkeys that sign decisions in loopguard serve",
		Long: `The console (loopguard serve) takes a decision only when a passkey registered
here signs it. A passkey is registered only through a one-time link that
'loopguard passkey add' prints on your terminal; it expires in minutes, works
once, and add refuses to run inside an agent or without a terminal.`,
	}
	cmd.AddCommand(newPasskeyAddCmd(), newPasskeyListCmd(), newPasskeyRemoveCmd())
	return cmd
}

func consoleStore() (*state.Store, *webconsole.Store, error) {
	st, err := cli.OpenStore()
	if err != nil {
		return nil, nil, err
	}
	return st, &webconsole.Store{Dir: webconsole.DirIn(st.Dir)}, nil
}

// passkeyAddOptions is what passkey add needs: its flags, the human's
// terminal, the stores and the clock.
type passkeyAddOptions struct {
	tty     *os.File
	store   *state.Store
	console *webconsole.Store
	now     func() time.Time
	name    string        // --name
	origin  string        // --origin
	ttl     time.Duration // --ttl
}

func newPasskeyAddCmd() *cobra.Command {
	o := &passkeyAddOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Print a one-time link that registers a passkey in the console",
		Long: `Print, on your terminal, a link that registers one passkey with the
console. Open it in the browser that will hold the passkey (a phone's, over
your SSH tunnel or Tailscale) while loopguard serve runs. The link works once
and expires after --ttl (5 minutes by default; at most 30).

add talks to /dev/tty only and refuses inside an agent (CLAUDECODE set) or
without a terminal, and prints the link only after you type the code it
shows there, as approve asks for the digest: a passkey is what lets its
holder approve calls. (Code running as you outside the agent's sandbox can
still do all of this on a terminal of its own: docs/console.md says what
that means.)`,
		Example: "  loopguard passkey add\n  loopguard passkey add --name 'alice phone' --ttl 2m",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tty, err := cli.OpenTTY()
			if err != nil {
				return err
			}
			defer tty.Close()
			st, cs, err := consoleStore()
			if err != nil {
				return err
			}
			o.tty, o.store, o.console = tty, st, cs
			return passkeyAddRun(o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "what to call the passkey (default: your name and today's date)")
	cmd.Flags().StringVar(&o.origin, "origin", "", "the console's address (default: the running loopguard serve's, else "+defaultOrigin+")")
	cmd.Flags().DurationVar(&o.ttl, "ttl", 5*time.Minute, "how long the link stays valid")
	return cmd
}

func passkeyAddRun(o *passkeyAddOptions) error {
	tty, st, cs, name, origin, ttl, now := o.tty, o.store, o.console, o.name, o.origin, o.ttl, o.now()
	running := false
	if origin == "" {
		origin = defaultOrigin
		if si, err := cs.Server(); err == nil && si.Origin != "" && si.PID > 0 && state.ProcessAlive(si.PID) {
			origin, running = si.Origin, true
		}
	}
	if name == "" {
		name = cli.Principal() + " " + now.Format("2006-01-02")
	}
	if err := webconsole.CheckName(name); err != nil {
		return err
	}
	// As approve has the digest typed: the link is printed only to whoever
	// reads this terminal and answers it.
	code, err := confirmCode()
	if err != nil {
		return err
	}
	fmt.Fprintf(tty, "This prints a one-time link that registers a passkey %q for the console at %s.\n"+
		"Whoever opens it first holds a passkey that approves your agent's calls.\n", present.EscapeText(name), origin)
	if err := cli.ConfirmTyped(tty, "Type "+code+" to print it (anything else cancels): ", is(code), "no link was made",
		errors.New("not confirmed: the typed text does not match the code")); err != nil {
		return err
	}
	tok, e, err := cs.NewEnrollment(name, ttl, now)
	if err != nil {
		return err
	}
	if err := cli.Record(st, nil, audit.Entry{Decision: "passkey-link", Principal: cli.Principal(),
		Detail: fmt.Sprintf("a one-time link for a passkey %q, until %s", name, e.Expires.Format(time.RFC3339))}); err != nil {
		return err
	}
	fmt.Fprintf(tty, "Open this link in the browser that will hold the passkey %q, within %s. It works once:\n\n  %s/enroll#%s\n\n",
		present.EscapeText(name), ttl, origin, tok)
	if !running {
		fmt.Fprintf(tty, "loopguard serve does not seem to run: start it first (the link is for %s).\n", origin)
	}
	fmt.Fprintln(tty, "Do not paste the link anywhere else: whoever opens it first registers a passkey that approves calls.")
	return nil
}

// passkeyListOptions is what passkey list needs: its flag, writer and the
// console's store.
type passkeyListOptions struct {
	out     io.Writer
	console *webconsole.Store
	json    bool // --json
}

func newPasskeyListCmd() *cobra.Command {
	o := &passkeyListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the registered passkeys (removed ones too: their signatures stay checkable)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, cs, err := consoleStore()
			if err != nil {
				return err
			}
			o.out, o.console = cmd.OutOrStdout(), cs
			return passkeyListRun(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON, with each public key (COSE, base64url)")
	return cmd
}

type passkeyJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	RPID      string    `json:"rp_id"`
	Created   time.Time `json:"created"`
	LastUsed  time.Time `json:"last_used,omitzero"`
	Removed   time.Time `json:"removed,omitzero"`
	PublicKey string    `json:"public_key"`
}

func passkeyListRun(o *passkeyListOptions) error {
	out := o.out
	keys, err := o.console.Passkeys()
	if err != nil {
		return err
	}
	if o.json {
		rows := []passkeyJSON{}
		for _, k := range keys {
			rows = append(rows, passkeyJSON{ID: k.ID, Name: k.Name, RPID: k.RPID, Created: k.Created, LastUsed: k.LastUsed, Removed: k.Removed,
				PublicKey: b64url(k.Credential.PublicKey)})
		}
		return printJSON(out, rows)
	}
	if len(keys) == 0 {
		fmt.Fprintln(out, "No passkeys. Register one with: loopguard passkey add")
		return nil
	}
	tw := cli.Table(out, "ID", "NAME", "FOR", "CREATED", "LAST USED", "STATUS")
	for _, k := range keys {
		status, used := "active", "never"
		if !k.Active() {
			status = "removed " + present.FormatTime(k.Removed)
		}
		if !k.LastUsed.IsZero() {
			used = present.FormatTime(k.LastUsed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cli.Short(k.ID, 12), present.EscapeText(k.Name), present.EscapeText(k.RPID), present.FormatTime(k.Created), used, status)
	}
	return tw.Flush()
}

// passkeyRemoveOptions is what passkey remove needs: its argument, a
// writer, the stores and the clock.
type passkeyRemoveOptions struct {
	out     io.Writer
	store   *state.Store
	console *webconsole.Store
	now     func() time.Time
	id      string // ID: a passkey id or a unique prefix
}

func newPasskeyRemoveCmd() *cobra.Command {
	o := &passkeyRemoveOptions{now: time.Now}
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Stop a passkey from signing (its past signatures stay checkable)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cli.RefuseInAgent(); err != nil {
				return err
			}
			st, cs, err := consoleStore()
			if err != nil {
				return err
			}
			o.out, o.store, o.console, o.id = cmd.OutOrStdout(), st, cs, args[0]
			return passkeyRemoveRun(o)
		},
	}
}

func passkeyRemoveRun(o *passkeyRemoveOptions) error {
	k, err := o.console.ResolvePasskey(o.id)
	if err != nil {
		return err
	}
	if !k.Active() {
		return errors.New("that passkey was removed already")
	}
	k.Removed = o.now().UTC()
	if err := o.console.PutPasskey(k); err != nil {
		return err
	}
	if err := cli.Record(o.store, nil, audit.Entry{Decision: "passkey-remove", Principal: cli.Principal(), Passkey: k.ID,
		Detail: "removed the passkey " + present.EscapeText(k.Name)}); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "Removed the passkey %s (%s): it signs nothing from now on, and its sign-ins end.\n", cli.Short(k.ID, 12), present.EscapeText(k.Name))
	return nil
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// confirmCode is a random code for the human to type: six letters and
// digits that cannot be mistaken for one another.
func confirmCode() (string, error) {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}
