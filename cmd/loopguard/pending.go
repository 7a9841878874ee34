package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/review"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
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
	// "wait over", abandoned, open or stale (cli.StatusOf).
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
			Digest: p.Digest, Summary: present.Summary(p), Warnings: len(p.Warnings), State: cli.StatusOf(o.store, p, now)})
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
	tw := cli.Table(out, "ID", "AGE", "STATUS", "SESSION", "AGENT", "REASON", "WARN", "CALL")
	for _, r := range rows {
		agent := r.Agent
		if r.AgentType != "" {
			agent += " (" + r.AgentType + ")"
		}
		esc := present.EscapeText
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", esc(r.ID), cli.ShortAge(now.Sub(r.Seen)), esc(r.State), esc(cli.Short(r.Session, 8)),
			esc(cli.Short(agent, 24)), esc(r.Reason), r.Warnings, r.Summary)
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
	// What jailed calls and file tools changed is shown as of now.
	hooks.RefreshPlanted(o.store, p)
	return review.Page(o.out, cli.RenderPending(o.store, p, o.full))
}

// pinIfHuman pins pending call id (state.Pin) when a human runs the
// command: at a terminal, outside an agent. An agent's loopguard show
// pins nothing.
func pinIfHuman(st *state.Store, id string) {
	tty, err := cli.OpenTTY()
	if err != nil {
		return
	}
	tty.Close()
	_ = st.Pin(id, time.Now())
}

func newApproveCmd() *cobra.Command {
	o := &approve.Options{Now: time.Now, ConfirmLen: approve.PrefixLen}
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
			if err := cli.CheckApprovalTTL(o.TTL); err != nil {
				return err
			}
			tty, st, err := cli.OpenTTYStore()
			if err != nil {
				return err
			}
			defer tty.Close()
			if o.IDs, err = resolvePendings(st, args); err != nil {
				return err
			}
			o.TTY, o.Store = tty, st
			return approve.Run(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.TTL, "ttl", 10*time.Minute, "how long the approval stays valid (at most 24h)")
	return cmd
}

func newDenyCmd() *cobra.Command {
	o := &approve.DenyOptions{Now: time.Now}
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
			if o.IDs, err = resolvePendings(st, args); err != nil {
				return err
			}
			o.Out, o.Store = cmd.OutOrStdout(), st
			return approve.DenyRun(o)
		},
	}
	cmd.Flags().StringVar(&o.Note, "note", "", "a reason the agent is shown (escaped, at most 500 bytes)")
	return cmd
}
