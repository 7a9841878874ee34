package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// followDefault is how many entries --follow shows first when -n is not given.
const followDefault = 10

type auditShowOptions struct {
	Log    *audit.Log
	Out    io.Writer
	TTY    bool // Out is a terminal: escape what the agent could have written
	JSON   bool
	Follow bool
	N      int // last N entries; 0: all (or followDefault with Follow)
	NSet   bool
	// Since: only entries at or after it (zero: all): --since, --today.
	Since time.Time
}

type auditRestartOptions struct {
	Log     *audit.Log
	Out     io.Writer
	LoadKey func(context.Context) ([]byte, error)
	Confirm func(dir string) error // asks the human at their terminal
	// Store is the state directory the log lives in; with it the restart
	// moves the keyring's anchor along (nil: the log alone, for tests).
	Store *state.Store
	// AcceptLoss takes on a state directory that is not the one the
	// keyring's anchor names (removed, replaced, rolled back): new
	// identity, every grant in it revoked, anchored anew.
	AcceptLoss bool
}

type auditVerifyOptions struct {
	Log     *audit.Log
	Out     io.Writer
	JSON    bool
	LoadKey func(context.Context) ([]byte, error) // the master key
	// Passkeys returns the public keys of the passkeys that signed
	// decisions (loopguard serve), by credential id.
	Passkeys func() (map[string][]byte, error)
	// SignaturesOnly checks the passkey signatures alone: no master key.
	SignaturesOnly bool
	PasskeysFile   string // --passkeys: the public keys from passkey list --json
}

func newAuditCmd() *cobra.Command {
	return newAuditCmdWith(auditShowRun, auditVerifyRun, auditRestartRun)
}

// newAuditCmdWith builds the command; tests replace the run functions to
// check how flags become options.
func newAuditCmdWith(show func(context.Context, *auditShowOptions) error,
	verify func(context.Context, *auditVerifyOptions) error,
	restart func(context.Context, *auditRestartOptions) error) *cobra.Command {
	so := &auditShowOptions{}
	var since time.Duration
	var today bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log of every decision",
		Long: `Show the audit log: one entry per decision of the hook (allow, deny, ask,
abstain, alarm) and per human action (approve, grant, revoke...), with its
session, agent, tool, call digest and reason code.

The entries form a hash chain whose head is sealed with a key derived from the
master key. 'loopguard audit verify' checks it.

--json prints one JSON object per line, for scripts: seq, time (RFC 3339,
UTC), prev, event, session, agent, agent_type, tool, digest, decision,
reason, grant, pending, principal, mode, detail, summary; empty fields are
left out, the names do not change. prune never removes an entry.`,
		Example: "  loopguard audit -n 20\n  loopguard audit --since 1h\n  loopguard audit --follow\n  loopguard audit --json | jq 'select(.decision == \"deny\")'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := openAuditLog()
			if err != nil {
				return err
			}
			so.Log, so.Out, so.TTY = l, cmd.OutOrStdout(), isTerminal(cmd.OutOrStdout())
			so.NSet = cmd.Flags().Changed("n")
			if so.N < 0 {
				return errors.New("-n must not be negative")
			}
			switch {
			case since != 0 && today:
				return errors.New("--since and --today do not go together")
			case since < 0:
				return errors.New("--since must not be negative")
			case since > 0:
				so.Since = time.Now().Add(-since)
			case today:
				y, m, d := time.Now().Date()
				so.Since = time.Date(y, m, d, 0, 0, 0, 0, time.Local)
			}
			return show(cmd.Context(), so)
		},
	}
	cmd.Flags().BoolVar(&so.JSON, "json", false, "print one JSON object per line: the log's own lines, stable field names (README, The audit log)")
	cmd.Flags().BoolVarP(&so.Follow, "follow", "f", false, fmt.Sprintf("keep printing new entries as they are appended (starts with the last %d)", followDefault))
	cmd.Flags().IntVarP(&so.N, "n", "n", 0, "print only the last `N` entries (0: all)")
	cmd.Flags().DurationVar(&since, "since", 0, "print only the entries of the last `DURATION` (1h, 30m): what ran, jailed or not, and what was decided")
	cmd.Flags().BoolVar(&today, "today", false, "print only today's entries (local time)")

	vo := &auditVerifyOptions{}
	verifyCmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the audit log for edited, deleted, reordered or cut entries",
		Long: `Check every link of the audit log's hash chain and the MAC of its sealed
head, reading the master key from the OS keyring. It names each problem: an
edited entry, a deleted or reordered one, a log cut below its sealed head, a
forged or missing head. When all is well it seals the log up to its last entry.

Every decision made in the console (loopguard serve) carries its passkey
signature: the statement signed (pending id, digest, what the page showed
of the call, decision, rule or note) and the WebAuthn assertion. verify
checks each one with the passkey's public key alone, and that the entry
records what was signed; --signatures checks only those (no master key),
and --passkeys FILE takes the public keys from 'loopguard passkey list
--json' on another machine.

What it cannot see: entries appended after the last seal are protected by the
chain only, which has no key, so they can be cut off the end undetected. The
report says how many there were. The hook seals on every allowed call and
every command that reads the key seals too.

Exits non-zero on any problem.`,
		Example: "  loopguard audit verify",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := openAuditLog()
			if err != nil {
				return err
			}
			vo.Log, vo.Out, vo.LoadKey = l, cmd.OutOrStdout(), cli.LoadMaster
			vo.Passkeys = func() (map[string][]byte, error) { return passkeyKeys(vo.PasskeysFile) }
			return verify(cmd.Context(), vo)
		},
	}
	verifyCmd.Flags().BoolVar(&vo.JSON, "json", false, "print the report as JSON")
	verifyCmd.Flags().BoolVar(&vo.SignaturesOnly, "signatures", false, "check only the passkey signatures of decisions made in loopguard serve (no key needed)")
	verifyCmd.Flags().StringVar(&vo.PasskeysFile, "passkeys", "", "the passkeys' public keys, as loopguard passkey list --json prints them (default: this machine's)")

	ro := &auditRestartOptions{}
	restartCmd := &cobra.Command{
		Use:   "restart",
		Short: "Set a damaged audit log aside and start a new sealed one",
		Long: `Rename the audit log to log-<time>.jsonl in the same directory, where it stays
as evidence, and start a new, empty, sealed log, without letting any entry
fall between the two. Use it after 'loopguard audit verify' reported
problems and you have looked at them. It reads the master key and asks you
to confirm at your terminal.

The keyring keeps an anchor of the state directory (its identity and the
audit log's sealed head). When the directory is not the one anchored (it
was removed, replaced, or restored from an older copy: the hook then
denies every call as state_lost), restart refuses unless --accept-loss is
given: the directory then gets a new identity, every grant in it is
revoked (a restored copy may hold approvals already used), and it is
anchored anew.`,
		Example: "  loopguard audit restart\n  loopguard audit restart --accept-loss   # after the state directory was removed or restored",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			ro.Log, ro.Store, ro.Out, ro.LoadKey, ro.Confirm = cli.AuditLog(st), st, cmd.OutOrStdout(), cli.LoadMaster, confirmRestart
			return restart(cmd.Context(), ro)
		},
	}
	restartCmd.Flags().BoolVar(&ro.AcceptLoss, "accept-loss", false, "take on a state directory that is not the one the keyring anchors (removed, replaced, restored): new identity, its grants revoked, anchored anew")
	cmd.AddCommand(verifyCmd, restartCmd)
	return cmd
}

func openAuditLog() (*audit.Log, error) {
	st, err := cli.OpenStore()
	if err != nil {
		return nil, err
	}
	return cli.AuditLog(st), nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func auditShowRun(ctx context.Context, o *auditShowOptions) error {
	print := func(raw []byte, e audit.Entry) error {
		if !o.Since.IsZero() && e.Time.Before(o.Since) {
			return nil
		}
		var err error
		if o.JSON {
			line := string(raw)
			if o.TTY {
				line = present.EscapeJSON(line)
			}
			_, err = fmt.Fprintln(o.Out, line)
		} else {
			err = printAuditRow(o.Out, e)
		}
		return err
	}
	if !o.JSON {
		if err := printAuditRow(o.Out, audit.Entry{}); err != nil {
			return err
		}
	}
	n := o.N
	if o.Follow && !o.NSet {
		n = followDefault
	}
	var err error
	switch {
	case o.Follow && n > 0:
		var end int64
		if end, err = o.Log.Last(n, print); err == nil {
			err = o.Log.FollowFrom(ctx, end, print)
		}
	case o.Follow: // -n 0: everything, then what comes
		err = o.Log.Follow(ctx, print)
	case n > 0:
		_, err = o.Log.Last(n, print)
	default:
		err = o.Log.Read(print)
	}
	if o.Follow && errors.Is(err, context.Canceled) {
		err = nil
	}
	var le *audit.LineError
	if errors.As(err, &le) {
		return cli.WithHint(fmt.Errorf("audit log: %w", err), "run `loopguard audit verify` to see what changed")
	}
	return err
}

// printAuditRow prints one table row, or the header for the zero Entry.
func printAuditRow(w io.Writer, e audit.Entry) error {
	const format = "%-25s  %-17s  %-8s  %-12s  %-20s  %-12s  %-24s  %-12s  %s\n"
	if e.Time.IsZero() && e.Decision == "" {
		_, err := fmt.Fprintf(w, format, "TIME", "EVENT", "SESSION", "AGENT", "TOOL", "DECISION", "REASON", "DIGEST", "CALL")
		return err
	}
	call := e.Summary
	if call == "" {
		call = e.Detail
	}
	agent := e.Agent
	if e.AgentType != "" && agent != "main" {
		agent = e.AgentType + ":" + agent
	}
	_, err := fmt.Fprintf(w, format,
		present.FormatTime(e.Time),
		cell(e.Event, 17), prefix(e.Session, 8), cell(agent, 12), cell(e.Tool, 20),
		cell(e.Decision, 12), cell(e.Reason, 24), prefix(e.Digest, 12), cell(call, 80))
	return err
}

// cell makes s safe for a terminal (every byte outside printable ASCII is
// escaped: the agent chose many of these strings) and cuts it to n runes.
func cell(s string, n int) string {
	if s == "" {
		return "-"
	}
	s = present.EscapeText(s)
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// prefix is the first n bytes of an identifier (session, digest), made safe
// for a terminal, the way ids are usually shortened.
func prefix(s string, n int) string {
	if s == "" {
		return "-"
	}
	return cli.Short(present.EscapeText(s), n)
}

// auditVerifyError is returned when verification finds problems.
type auditVerifyError struct {
	n    int
	dir  string
	head bool // a head problem only
}

func (e *auditVerifyError) Error() string {
	if e.n == 1 {
		return "audit log verification failed: 1 problem"
	}
	return fmt.Sprintf("audit log verification failed: %d problems", e.n)
}

func (e *auditVerifyError) Hint() string {
	h := "the audit log was changed outside loopguard, or its head was; the report above says where\n" +
		"once you have looked at it, run `loopguard audit restart`: it keeps this log as evidence and starts a new sealed one"
	if e.head {
		h += "\na missing or invalid head alone also follows a master key replaced without `loopguard key rotate`"
	}
	return h
}

func auditVerifyRun(ctx context.Context, o *auditVerifyOptions) error {
	var rep audit.Report
	if !o.SignaturesOnly {
		seal, err := sealKey(ctx, o.LoadKey)
		if err != nil {
			return err
		}
		if rep, err = o.Log.Verify(seal); err != nil {
			return fmt.Errorf("failed to verify the audit log: %w", err)
		}
	}
	signed, sigProblems, err := verifySignatures(o)
	if err != nil {
		return err
	}
	chainProblems := len(rep.Problems)
	rep.Problems = append(rep.Problems, sigProblems...)
	if o.JSON {
		if rep.Problems == nil {
			rep.Problems = []audit.Problem{}
		}
		if err := printJSON(o.Out, struct {
			audit.Report
			Signatures int `json:"signatures"`
		}{rep, signed}); err != nil {
			return err
		}
	} else {
		if !o.SignaturesOnly {
			chain := rep
			chain.Problems = rep.Problems[:chainProblems]
			printReport(o.Out, o.Log.Dir(), chain)
			fmt.Fprint(o.Out, chainBoundary(o.Log))
		}
		printSignatures(o.Out, signed, sigProblems)
	}
	if rep.OK() {
		return nil
	}
	if chainProblems == 0 {
		return &cli.Exit{Code: cli.ExitError, Err: fmt.Errorf("%d passkey signature(s) in the audit log do not verify", len(sigProblems))}
	}
	headOnly := true
	for _, p := range rep.Problems {
		switch p.Kind {
		case audit.KindHeadMissing, audit.KindHeadMACInvalid, audit.KindHeadMalformed:
		default:
			headOnly = false
		}
	}
	return &auditVerifyError{n: len(rep.Problems), dir: o.Log.Dir(), head: headOnly}
}

func printReport(w io.Writer, dir string, rep audit.Report) {
	fmt.Fprintf(w, "audit log: %s\n", dir)
	fmt.Fprintf(w, "entries:   %d\n", rep.Entries)
	if rep.SealedSeq > 0 {
		fmt.Fprintf(w, "sealed:    up to seq %d\n", rep.SealedSeq)
	} else {
		fmt.Fprintf(w, "sealed:    none\n")
	}
	if rep.Unsealed > 0 {
		fmt.Fprintf(w, "unsealed:  %d entries after the seal, protected by the keyless chain only: entries cut off after seq %d would not be detected\n",
			rep.Unsealed, rep.SealedSeq)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "PROBLEM:   %s\n", present.EscapeText(p.Msg))
	}
	if rep.OK() {
		fmt.Fprintf(w, "result:    OK: every link and the head MAC check out\n")
		if rep.Resealed {
			fmt.Fprintf(w, "sealed now up to seq %d\n", rep.ResealedSeq)
		}
	}
}

// sealForInit seals the audit log when init has the key, and returns the
// seal key (nil when the log cannot be sealed, with a warning). The first
// seal happens while the log is empty. A key created now cannot vouch for
// a chain sealed under another one (the key was purged): that log is set
// aside, kept as evidence, and a new sealed chain starts whose first entry
// says so, with no tamper alarm.
func sealForInit(st *state.Store, seal []byte, created bool, out, errOut io.Writer) ([]byte, error) {
	l := cli.AuditLog(st)
	if created && l.Started() {
		archived, err := l.Restart(seal)
		if err != nil {
			return nil, err
		}
		if err := cli.Record(st, seal, audit.Entry{Decision: chainStart, Principal: cli.Principal(),
			Detail: "a new key starts a new chain; the log sealed under the previous key is kept as " + filepath.Base(archived)}); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "Audit: the new key starts a new, sealed audit chain; the log sealed under the previous key is kept as %s (its seal can be checked only with that key).\n", archived)
		return seal, nil
	}
	if err := l.Seal(seal); err != nil {
		if errors.Is(err, audit.ErrNoHead) || errors.Is(err, audit.ErrTampered) {
			fmt.Fprintf(errOut, "loopguard: warning: the audit log cannot be sealed: %v\n", err)
			fmt.Fprintln(errOut, "loopguard: hint: run `loopguard audit verify` for details")
			return nil, nil
		}
		return nil, fmt.Errorf("failed to seal the audit log: %w", err)
	}
	return seal, nil
}

// chainStart is the decision of the first entry of a chain a new key
// started (sealForInit).
const chainStart = "chain-start"

// chainBoundary says where the log's chain starts when it is not the first
// one: the first entry of a chain a new key started, and the logs set
// aside before it; "" for a log that was never restarted.
func chainBoundary(l *audit.Log) string {
	var b strings.Builder
	errFirst := errors.New("first entry read")
	_ = l.Read(func(_ []byte, e audit.Entry) error {
		if e.Decision == chainStart {
			fmt.Fprintf(&b, "chain:     starts at seq %d (%s): %s\n", e.Seq, present.FormatTime(e.Time), present.EscapeText(e.Detail))
		}
		return errFirst
	})
	for _, name := range l.SetAside() {
		fmt.Fprintf(&b, "set aside: %s (an earlier chain, kept as evidence; not checked here)\n", present.EscapeText(name))
	}
	return b.String()
}

// sealKey reads the master key with load and derives the audit log's seal
// key from it.
func sealKey(ctx context.Context, load func(context.Context) ([]byte, error)) ([]byte, error) {
	master, err := load(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to read the master key: %w", err)
	}
	_, seal, err := token.DeriveKeys(master)
	return seal, err
}

func auditRestartRun(ctx context.Context, o *auditRestartOptions) error {
	if err := o.Confirm(o.Log.Dir()); err != nil {
		return err
	}
	seal, err := sealKey(ctx, o.LoadKey)
	if err != nil {
		return err
	}
	defer clear(seal)
	if o.Store == nil {
		archived, err := o.Log.Restart(seal)
		if err != nil {
			return err
		}
		printRestarted(o, archived)
		return nil
	}
	var archived string
	var lost *audit.LostError
	revoked := 0
	err = o.Log.AnchorLocked(func() error {
		rec, err := cli.LoadAnchor(o.Store.Dir)
		if err != nil {
			return err
		}
		if rec != "" {
			if _, err := o.Log.CheckAnchor(seal, rec); err != nil {
				if !errors.As(err, &lost) {
					return err
				}
				if !o.AcceptLoss {
					return err
				}
			}
		}
		id, err := o.Log.ID()
		if err != nil && lost == nil {
			return err
		}
		if id == "" || lost != nil {
			if id, err = o.Log.NewID(); err != nil {
				return err
			}
		}
		// The anchor of the new chain's start first: every log holds it, so
		// a hook that checks between the two sees no loss.
		start, err := audit.StartAnchor(seal, id)
		if err == nil {
			err = cli.StoreAnchor(o.Store.Dir, start)
		}
		if err != nil {
			return fmt.Errorf("failed to anchor the state directory in the keyring: %w", err)
		}
		if archived, err = o.Log.Restart(seal); err != nil {
			return err
		}
		if lost != nil {
			revoked, err = revokeEvery(o.Store)
		}
		return err
	})
	if err != nil {
		return err
	}
	printRestarted(o, archived)
	if lost != nil {
		fmt.Fprintf(o.Out, "Accepted the loss: %s.\n", lost.Why)
		fmt.Fprintf(o.Out, "The state directory %s has a new identity, anchored in the keyring; %d grant(s) in it revoked (a restored copy may hold approvals already used).\n", o.Store.Dir, revoked)
		return cli.Record(o.Store, seal, audit.Entry{Decision: "accept-loss", Principal: cli.Principal(), Detail: lost.Why})
	}
	if o.AcceptLoss {
		fmt.Fprintln(o.Out, "Nothing was lost: the state directory is the one anchored in the keyring.")
	}
	return nil
}

func printRestarted(o *auditRestartOptions, archived string) {
	if archived != "" {
		fmt.Fprintf(o.Out, "The old audit log is kept as %s.\n", archived)
	}
	fmt.Fprintf(o.Out, "A new, sealed audit log starts in %s.\n", o.Log.Dir())
}

// revokeEvery removes every grant file of st; it returns how many.
func revokeEvery(st *state.Store) (int, error) {
	all, err := st.AllGrants()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, gf := range all {
		if err := st.RemoveGrant(gf.Path); err != nil && !errors.Is(err, state.ErrNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// confirmRestart asks at the terminal; inside an agent or without a
// terminal it refuses.
func confirmRestart(dir string) error {
	tty, err := cli.OpenTTY()
	if err != nil {
		return err
	}
	defer tty.Close()
	fmt.Fprintf(tty, "This sets the audit log in %s aside and starts a new one.\n", dir)
	return cli.ConfirmTyped(tty, "Type restart to go on (anything else cancels): ", is("restart"),
		"nothing was changed", errors.New("not confirmed"))
}
