package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// team: the calls waiting across machines that share a Vault, for an
// approver on their own machine (backend vault, logged in to Vault with the
// approver policy). `review --backend vault` is the console over the same
// calls; team is the surface for scripts and for one call at a time.
func newTeamCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "team",
		Short: "Review and approve calls waiting on other machines (Vault backend)",
		Long: `With "backend": "vault", every agent machine's hook publishes the calls it
holds to Vault. On your own machine, logged in to Vault as an approver
(vault login), list them, review one exactly as loopguard show renders it,
and approve or deny it; the waiting hook on the agent's machine runs the call
once. The grant is minted by Vault's Transit key under your Vault identity.
'loopguard review --backend vault' is the live console over the same calls.`,
		Example: "  loopguard team pending\n  loopguard team approve k3v9     # any unique prefix of an id\n  loopguard team deny k3v9x2abqw7dn4ygh5mse6ct",
	}
	cmd.AddCommand(newTeamPendingCmd(), newTeamApproveCmd(), newTeamDenyCmd())
	return cmd
}

// teamMinter is the approver's side of the Vault backend: the custody and
// the identity it approves as.
func teamMinter(ctx context.Context) (*minter, error) {
	m, err := loadMinter(ctx)
	if err != nil {
		return nil, err
	}
	if m.team == nil {
		return nil, withHint(errors.New("the team commands need the Vault backend"), `set "backend": "vault" and a "vault" section in the config (README, Teams)`)
	}
	return m, nil
}

func newTeamPendingCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "pending",
		Short:   "List the calls waiting across the team",
		Example: "  loopguard team pending",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := teamMinter(cmd.Context())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), vaultTimeout)
			defer cancel()
			return teamPendingRun(ctx, cmd.OutOrStdout(), m.team, time.Now())
		},
	}
}

func teamPendingRun(ctx context.Context, out io.Writer, c *vault.Custody, now time.Time) error {
	list, bad, err := c.TeamList(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tMACHINE\tPROJECT\tSESSION\tAGENT\tCALL")
	for _, tp := range list {
		p := tp.Pending
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, shortAge(now.Sub(p.Seen)), hooks.EscapeText(short(tp.Host, 20)),
			hooks.EscapeText(short(p.ProjectDir, 30)), hooks.EscapeText(short(p.Session, 8)), hooks.EscapeText(short(p.Agent, 16)), hooks.Summary(p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(out, "(%d record(s) could not be read and are not shown)\n", bad)
	}
	return nil
}

// teamCall is the approver's side and the published call arg names.
func teamCall(ctx context.Context, arg string) (*minter, string, error) {
	m, err := teamMinter(ctx)
	if err != nil {
		return nil, "", err
	}
	id, err := resolveTeam(ctx, m.team, arg)
	return m, id, err
}

// resolveTeam turns a unique prefix of a published pending id into the id,
// as the local commands do (ids.go).
func resolveTeam(ctx context.Context, c *vault.Custody, arg string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	ids, err := c.KV.List(cctx, "pending")
	if err != nil {
		return "", err
	}
	id, err := state.ResolvePrefix(arg, "pending call", ids)
	if err != nil {
		return "", withHint(err, "list the calls waiting across the team with: loopguard team pending")
	}
	return id, nil
}

func newTeamApproveCmd() *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve exactly one call waiting on another machine, once",
		Long: `Show the call as the agent's machine published it, rendered from its
canonical bytes, and, once you type the first characters of its digest, have
Vault mint a single-use grant for that exact call under your Vault identity.
The hook waiting on the agent's machine runs it once. ID may be any unique
prefix of a pending id. Talks to /dev/tty only.`,
		Example: "  loopguard team approve k3v9x2abqw7dn4ygh5mse6ct --ttl 2m",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApprovalTTL(ttl); err != nil {
				return err
			}
			tty, err := openTTY()
			if err != nil {
				return err
			}
			defer tty.Close()
			ctx := cmd.Context()
			m, id, err := teamCall(ctx, args[0])
			if err != nil {
				return err
			}
			tp, err := teamGet(ctx, m.team, id)
			if err != nil {
				return err
			}
			if err := confirmApproval(tty, tp.Pending, true, tp.Host, m.principal, ttl, approvePrefixLen); err != nil {
				return err
			}
			g, next, err := teamApprove(ctx, m, tp, ttl, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(tty, "Approved %s: grant %s, single use, valid until %s. %s\n", id, g.ID(), g.Expiry.Local().Format(time.Kitchen), next)
			return nil
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Minute, "how long the approval stays valid (at most 24h)")
	return cmd
}

func newTeamDenyCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "deny ID",
		Short:   "Refuse a call waiting on another machine",
		Example: "  loopguard team deny k3v9x2abqw7dn4ygh5mse6ct",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			m, id, err := teamCall(ctx, args[0])
			if err != nil {
				return err
			}
			if err := teamDeny(ctx, m, id, time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Denied %s as %s.\n", id, hooks.EscapeText(m.principal))
			return nil
		},
	}
}

func teamGet(ctx context.Context, c *vault.Custody, id string) (*vault.TeamPending, error) {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	tp, err := c.TeamGet(cctx, id)
	if err != nil {
		return nil, withHint(err, "list the calls waiting across the team with: loopguard team pending")
	}
	return tp, nil
}

// teamApprove mints the exact approval of the published call tp (which
// the human confirmed) and answers it in Vault; it returns the grant and
// what happens next. What is approved is what was shown: the published
// record must still hold it.
func teamApprove(ctx context.Context, m *minter, tp *vault.TeamPending, ttl time.Duration, now time.Time) (*token.Grant, string, error) {
	p := tp.Pending
	cur, err := teamGet(ctx, m.team, p.ID)
	if err != nil {
		return nil, "", err
	}
	if cur.Pending.Digest != p.Digest || !bytes.Equal(cur.Pending.Descriptor, p.Descriptor) {
		return nil, "", withHint(fmt.Errorf("pending call %s changed while it was shown: refusing to approve", p.ID), "review it again: loopguard team approve "+p.ID)
	}
	g, err := hooks.MintApproval(m.mint, p, m.principal, ttl, now)
	if err != nil {
		return nil, "", err
	}
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	if err := m.team.Decide(cctx, p.ID, g.String(), m.principal, now); err != nil {
		return nil, "", err
	}
	return &g, "The waiting hook on " + hooks.EscapeText(tp.Host) + " runs it once.", nil
}

// teamDeny refuses the published call id in Vault.
func teamDeny(ctx context.Context, m *minter, id string, now time.Time) error {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	return m.team.Decide(cctx, id, "", m.principal, now)
}
