package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// pendingOptions is what pending needs: its flags, writers, store and clock.
type pendingOptions struct {
	out, errOut io.Writer
	store       *state.Store
	now         func() time.Time
	json        bool // --json
	all         bool // --all: calls already approved or denied too
}

func newPendingCmd() *cobra.Command {
	o := &pendingOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List calls waiting for a human's decision",
		Long: `List the calls loopguard denied for lack of an approval, newest first.
Review one with 'loopguard show ID', then approve it with 'loopguard approve ID'
or refuse it with 'loopguard deny ID'.`,
		Example: "  loopguard pending\n  loopguard pending --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			o.out, o.errOut, o.store = cmd.OutOrStdout(), cmd.ErrOrStderr(), st
			return pendingRun(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.all, "all", false, "include calls already approved or denied")
	return cmd
}

type pendingJSON struct {
	ID        string    `json:"id"`
	Created   time.Time `json:"created"`
	Seen      time.Time `json:"seen"`
	Session   string    `json:"session"`
	Agent     string    `json:"agent"`
	AgentType string    `json:"agent_type,omitempty"`
	Tool      string    `json:"tool"`
	Reason    string    `json:"reason"`
	Status    string    `json:"status"`
	Digest    string    `json:"digest"`
	Summary   string    `json:"summary"`
	Warnings  int       `json:"warnings"`
	// State is Status for people: an open call is held (time left),
	// "wait over", abandoned, open or stale (statusOf).
	State string `json:"state"`
}

func pendingRun(o *pendingOptions) error {
	out, now := o.out, o.now()
	list, errs := o.store.ListPending()
	for _, err := range errs {
		fmt.Fprintf(o.errOut, "loopguard: warning: %v\n", err)
	}
	var rows []pendingJSON
	for _, p := range list {
		if !o.all && p.Status != state.StatusOpen {
			continue
		}
		rows = append(rows, pendingJSON{ID: p.ID, Created: p.Created, Seen: p.Seen, Session: p.Session,
			Agent: p.Agent, AgentType: p.AgentType, Tool: p.Tool, Reason: p.Reason, Status: p.Status,
			Digest: p.Digest, Summary: present.Summary(p), Warnings: len(p.Warnings), State: statusOf(o.store, p, now)})
	}
	if o.json {
		if rows == nil {
			rows = []pendingJSON{}
		}
		return printJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "No pending calls.")
		return nil
	}
	tw := table(out, "ID", "AGE", "STATUS", "SESSION", "AGENT", "REASON", "WARN", "CALL")
	for _, r := range rows {
		agent := r.Agent
		if r.AgentType != "" {
			agent += " (" + r.AgentType + ")"
		}
		esc := present.EscapeText
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", esc(r.ID), shortAge(now.Sub(r.Seen)), esc(r.State), esc(short(r.Session, 8)),
			esc(short(agent, 24)), esc(r.Reason), r.Warnings, r.Summary)
	}
	return tw.Flush()
}

// showOptions is what show needs: its flag, writer, store and the
// pending id.
type showOptions struct {
	out   io.Writer
	store *state.Store
	id    string // resolved
	full  bool   // --full
}

// pendingIDs is the argument check of a command that takes the ids of
// pending calls (verb; example is a command line with one): none says
// where the ids come from, instead of cobra's bare "requires at least 1
// arg(s)".
func pendingIDs(verb, example string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return nil
		}
		return cli.WithHint(fmt.Errorf("%s needs the id of a pending call (or a unique prefix of it)", verb),
			"`loopguard pending` lists the calls waiting, with their ids; then: loopguard "+example+"\n"+
				"or keep `loopguard review` open in a terminal of your own: it shows each call as it arrives and decides it with one key")
	}
}

func newShowCmd() *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a pending call in full, exactly as it would run",
		Long: `Show every field of a pending call, rendered from the canonical bytes its
digest covers: anything that is not printable ASCII is escaped visibly, and
invisible, bidi, control and look-alike characters are flagged. Where a
path lands elsewhere (through a symlink, into .git/ or .claude/) it says so.

A long text (a large Write) shows its first and last lines with its size
and SHA-256; --full prints every line.`,
		Example:           "  loopguard show k3v9x2abqw7dn4ygh5mse6ct\n  loopguard show k3v9     # any unique prefix of an id\n  loopguard show --full k3v9x2abqw7dn4ygh5mse6ct | less",
		Args:              cobra.MatchAll(pendingIDs("show", "show k3v9"), cobra.MaximumNArgs(1)),
		ValidArgsFunction: completePending,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			if o.id, err = resolvePending(st, args[0]); err != nil {
				return err
			}
			o.out, o.store = cmd.OutOrStdout(), st
			return showRun(o)
		},
	}
	cmd.Flags().BoolVar(&o.full, "full", false, "print long texts whole")
	return cmd
}

// showRun shows pending call o.id in full.
func showRun(o *showOptions) error {
	p, err := o.store.GetPending(o.id)
	if err != nil {
		return cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	pinIfHuman(o.store, o.id)
	return page(o.out, renderPendingWith(o.store, p, o.full))
}

// pinIfHuman pins pending call id (state.Pin) when a human runs the
// command: at a terminal, outside an agent. An agent's loopguard show
// pins nothing.
func pinIfHuman(st *state.Store, id string) {
	tty, err := openTTY()
	if err != nil {
		return
	}
	tty.Close()
	_ = st.Pin(id, time.Now())
}

// renderPendingWith is what a human reviews before approving, with every
// line of long texts when full, and, with st, what changed since an
// approval the call drifted
// from.
func renderPendingWith(st *state.Store, p *state.Pending, full bool) string {
	head, body := renderParts(st, p, full)
	return head + "\n" + body
}

// renderParts splits the rendering of p in two: head, what a human must
// see first and keep in view (the call in one line, where it lands, its
// danger lines and warnings, the digest they confirm), and body (the
// changes as a diff and the call in full, which may be long).
func renderParts(st *state.Store, p *state.Pending, full bool) (head, body string) {
	// Every string of the record goes through the one escaping function,
	// the id and digest too: a record may come from another machine.
	esc := present.EscapeText
	s := fmt.Sprintf("pending %s (%s), seen %s\n", esc(p.ID), esc(statusOf(st, p, time.Now())), present.FormatTime(p.Seen))
	s += fmt.Sprintf("session: %s\nagent:   %s", esc(p.Session), esc(p.Agent))
	if p.AgentType != "" {
		s += " (" + esc(p.AgentType) + ")"
	}
	if p.Reason != "" {
		s += fmt.Sprintf("\nreason:  %s", esc(p.Reason))
		if p.Detail != "" {
			s += ": " + esc(p.Detail)
		}
	}
	if p.Approved != "" {
		s += "\n         the approved call it resembles: pending " + esc(p.Approved)
	}
	s += "\ncall:    " + present.Summary(p)
	for _, k := range slices.Sorted(maps.Keys(p.Shown)) {
		s += "\nnote:    " + esc(k) + " (shown only, not part of the digest): " + esc(p.Shown[k])
	}
	for _, w := range present.PendingDanger(p) {
		s += "\n!!! DANGER: " + esc(w)
	}
	s += "\ndigest: " + esc(p.Digest) + "\n"
	ws := present.Warnings(p.Descriptor)
	// What the hook saw where the call lands (symlinks, .git/, .claude/,
	// executable configuration): recorded with the call.
	var notes []string
	for _, w := range p.Warnings {
		if !slices.Contains(ws, w) {
			notes = append(notes, w)
		}
	}
	if len(notes) > 0 {
		s += fmt.Sprintf("%d WARNING(S): where this call lands:\n", len(notes))
		for _, w := range notes {
			s += "  " + esc(w) + "\n"
		}
	}
	if len(ws) > 0 {
		s += fmt.Sprintf("%d WARNING(S): characters a reviewer could miss:\n", len(ws))
		for _, w := range ws {
			s += "  " + w + "\n"
		}
	}
	more := "loopguard show --full " + esc(p.ID)
	var b strings.Builder
	if ch := present.Changes(p.Descriptor, full); ch != "" {
		b.WriteString(ch + "\n")
	}
	if p.Reason == hooks.ReasonTargetDrift && p.Approved != "" && st != nil {
		if before, err := st.Snapshot(p.Approved); err == nil {
			b.WriteString(present.DriftChanges(p.Descriptor, before, full) + "\n")
		} else {
			fmt.Fprintf(&b, "SINCE APPROVAL: no copy of the file as approved was kept (only files up to %d bytes are), so what changed cannot be shown\n\n", state.MaxSnapshot)
		}
	}
	rendered := present.Render(p.Descriptor)
	if full {
		rendered = present.RenderFull(p.Descriptor)
	}
	b.WriteString("The exact call:\n" + rendered)
	return s, strings.ReplaceAll(b.String(), "loopguard show --full ID", more)
}

// approveOptions is what approve needs: its flags, terminal, store and
// clock. Review sets shown and confirmLen for the call it has on screen.
type approveOptions struct {
	tty   *os.File
	store *state.Store
	now   func() time.Time
	ids   []string      // pending ids, resolved
	ttl   time.Duration // --ttl
	// shown is the digest of the call the review console showed (one ID):
	// it is not shown again, and approved only if unchanged.
	shown string
	// confirmLen is how many characters of the digest the human types; 0
	// (only with Shown): one key approved the call on screen.
	confirmLen int
}

func newApproveCmd() *cobra.Command {
	o := &approveOptions{now: time.Now, confirmLen: approve.PrefixLen}
	cmd := &cobra.Command{
		Use:   "approve ID...",
		Short: "Approve pending calls, each exactly once",
		Long: `Show the pending call on your terminal and, once you type the first
characters of its digest, mint a single-use grant bound to that exact call
(its digest), its session, agent and tool. The agent then retries the
identical call and it runs once. Any change to the call needs a new approval.

approve talks to /dev/tty only and refuses inside an agent (CLAUDECODE set)
or without a terminal. There is no --yes. An ID may be any unique prefix of
a pending id; several IDs are shown and confirmed one after the other.`,
		Example:           "  loopguard approve k3v9x2abqw7dn4ygh5mse6ct\n  loopguard approve k3v9 q7de   # unique prefixes\n  loopguard approve k3v9x2abqw7dn4ygh5mse6ct --ttl 2m",
		Args:              pendingIDs("approve", "approve k3v9"),
		ValidArgsFunction: completePending,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApprovalTTL(o.ttl); err != nil {
				return err
			}
			tty, st, err := openTTYStore()
			if err != nil {
				return err
			}
			defer tty.Close()
			if o.ids, err = resolvePendings(st, args); err != nil {
				return err
			}
			o.tty, o.store = tty, st
			return approveRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.ttl, "ttl", 10*time.Minute, "how long the approval stays valid (at most 24h)")
	return cmd
}

// approveRun reviews and approves the pending calls o.ids on o.tty, one
// after the other. It is shared with the review console, which passes the
// digest of the call it showed (shown, so the call is not shown again) and a
// shorter confirmation, or none (confirmLen 0: one key approved the call on
// screen).
func approveRun(ctx context.Context, o *approveOptions) error {
	for _, id := range o.ids {
		if err := approveOne(ctx, o, id, o.now()); err != nil {
			return err
		}
	}
	return nil
}

// approveOne reviews and approves pending call id as of now.
func approveOne(ctx context.Context, o *approveOptions, id string, now time.Time) error {
	tty, st, shown, confirmLen, ttl := o.tty, o.store, o.shown, o.confirmLen, o.ttl
	p, err := st.GetPending(id)
	if err != nil {
		return cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	// A human at tty has it open: no flood of new calls drops it meanwhile.
	_ = st.Pin(id, time.Now())
	if confirmLen <= 0 && shown == "" {
		return errors.New("an approval without a typed confirmation is only for the call review has on screen")
	}
	if shown != "" && p.Digest != shown {
		return cli.WithHint(fmt.Errorf("pending call %s changed since it was shown (digest %.12s, shown %.12s): refusing to approve", id, p.Digest, shown),
			"review it again: loopguard show "+id)
	}
	if p.Status == state.StatusApproved {
		fmt.Fprintf(tty, "Note: %s was approved before; approving it again mints a new single-use grant.\n", id)
	}
	if token.DigestOf(p.Descriptor) != p.Digest {
		return fmt.Errorf("%w: pending record %s: its digest does not match its call", state.ErrCorrupt, id)
	}
	// The key (keyring or Vault) is checked before the human types
	// anything, and names who approves.
	m, err := approve.Load(ctx)
	if err != nil {
		return err
	}
	if shown == "" {
		// With the store: a drift shows what changed since the approval.
		fmt.Fprint(tty, renderPendingWith(st, p, false))
	}
	if confirmLen > 0 {
		if err := approve.Confirm(tty, p, m.Principal, ttl, confirmLen); err != nil {
			return err
		}
	}
	// Said as of now: a held call's hook may be gone a moment after the
	// approval lands, having run it.
	next := approve.Next(p, time.Now())
	g, err := approve.Exact(st, m, p, ttl, now)
	if err != nil {
		return err
	}
	approve.Printed(tty, p.ID, g, next)
	return nil
}

// denyOptions is what deny needs: its flags, writer, store and clock.
type denyOptions struct {
	out   io.Writer
	store *state.Store
	now   func() time.Time
	ids   []string // pending ids, resolved
	note  string   // --note: shown to the agent
}

func newDenyCmd() *cobra.Command {
	o := &denyOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "deny ID...",
		Short: "Refuse pending calls",
		Long: `Record that you refuse a pending call. The call stays non-executable and the
agent is told a human refused it. Taking power away needs no terminal.`,
		Example:           "  loopguard deny k3v9x2abqw7dn4ygh5mse6ct\n  loopguard deny k3v9 --note 'use make test instead'",
		Args:              pendingIDs("deny", "deny k3v9 --note 'use make test instead'"),
		ValidArgsFunction: completePending,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			if o.ids, err = resolvePendings(st, args); err != nil {
				return err
			}
			o.out, o.store = cmd.OutOrStdout(), st
			return denyRun(o)
		},
	}
	cmd.Flags().StringVar(&o.note, "note", "", "a reason the agent is shown (escaped, at most 500 bytes)")
	return cmd
}

// denyRun refuses the pending calls o.ids, one after the other.
func denyRun(o *denyOptions) error {
	for _, id := range o.ids {
		if err := denyOne(o, id, o.now()); err != nil {
			return err
		}
	}
	return nil
}

func denyOne(o *denyOptions, id string, now time.Time) error {
	out, st, note := o.out, o.store, o.note
	p, err := st.GetPending(id)
	if err != nil {
		return cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	if len(note) > hooks.MaxNote {
		return fmt.Errorf("--note is %d bytes; at most %d", len(note), hooks.MaxNote)
	}
	if err := approve.Deny(st, nil, p, note, now); err != nil {
		return err
	}
	fmt.Fprintf(out, "Denied %s. The agent will be told a human refused it.\n", id)
	return nil
}
