package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/token"
)

// team: the calls waiting across machines that share a Vault, for an
// approver on their own machine (backend vault, logged in to Vault with the
// approver policy).
func newTeamCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "team",
		Short: "Review and approve calls waiting on other machines (Vault backend)",
		Long: `With "backend": "vault", every agent machine's hook publishes the calls it
holds to Vault. On your own machine, logged in to Vault as an approver
(vault login), list them, review one exactly as loopguard show renders it,
and approve or deny it; the waiting hook on the agent's machine runs the call
once. The grant is minted by Vault's Transit key under your Vault identity.`,
		Example: "  loopguard team pending\n  loopguard team approve k3v9x2abqw7dn4ygh5mse6ct\n  loopguard team deny k3v9x2abqw7dn4ygh5mse6ct",
	}
	cmd.AddCommand(newTeamPendingCmd(), newTeamApproveCmd(), newTeamDenyCmd())
	return cmd
}

func teamCustody() (*vault.Custody, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Backend != config.BackendVault {
		return nil, withHint(errors.New("the team commands need the Vault backend"), `set "backend": "vault" and a "vault" section in the config (README, Teams)`)
	}
	return vaultCustody(cfg)
}

func newTeamPendingCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "pending",
		Short:   "List the calls waiting across the team",
		Example: "  loopguard team pending",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := teamCustody()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), vaultTimeout)
			defer cancel()
			return teamPendingRun(ctx, cmd.OutOrStdout(), c, time.Now())
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

func newTeamApproveCmd() *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve exactly one call waiting on another machine, once",
		Long: `Show the call as the agent's machine published it, rendered from its
canonical bytes, and, once you type the first characters of its digest, have
Vault mint a single-use grant for that exact call under your Vault identity.
The hook waiting on the agent's machine runs it once. Talks to /dev/tty only.`,
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
			c, err := teamCustody()
			if err != nil {
				return err
			}
			return teamDecideRun(cmd.Context(), tty, nil, c, args[0], true, ttl, time.Now())
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
			c, err := teamCustody()
			if err != nil {
				return err
			}
			return teamDecideRun(cmd.Context(), nil, cmd.OutOrStdout(), c, args[0], false, 0, time.Now())
		},
	}
}

// teamDecideRun approves (on tty, after showing the call) or denies the
// published pending call id.
func teamDecideRun(ctx context.Context, tty *os.File, out io.Writer, c *vault.Custody, id string, approve bool, ttl time.Duration, now time.Time) error {
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	tp, err := c.TeamGet(cctx, id)
	if err != nil {
		return withHint(err, "list the calls waiting across the team with: loopguard team pending")
	}
	self, err := c.Transit.C.LookupSelf(cctx)
	if err != nil {
		return err
	}
	if !approve {
		if err := c.Decide(cctx, id, "", self.Principal(), now); err != nil {
			return err
		}
		fmt.Fprintf(out, "Denied %s as %s.\n", id, self.Principal())
		return nil
	}
	p := tp.Pending
	fmt.Fprintf(tty, "machine: %s (as its hook reports it)\n", hooks.EscapeText(tp.Host))
	fmt.Fprint(tty, renderPending(p))
	fmt.Fprintf(tty, "\nApprove this exact call once, for %s, as %s?\n", ttl, self.Principal())
	if err := confirmPrefix(tty, p.Digest, approvePrefixLen, "approve"); err != nil {
		return err
	}
	t := c.Transit
	g, err := hooks.MintApproval(func(g token.Grant, now time.Time) (token.Grant, error) {
		mctx, cancel := context.WithTimeout(ctx, vaultTimeout)
		defer cancel()
		return t.Mint(mctx, g, now)
	}, p, self.Principal(), ttl, now)
	if err != nil {
		return err
	}
	dctx, cancel2 := context.WithTimeout(ctx, vaultTimeout)
	defer cancel2()
	if err := c.Decide(dctx, id, g.String(), self.Principal(), now); err != nil {
		return err
	}
	fmt.Fprintf(tty, "Approved %s: grant %s, single use, valid until %s. The waiting hook on %s runs it once.\n",
		id, g.ID(), g.Expiry.Local().Format(time.Kitchen), hooks.EscapeText(tp.Host))
	return nil
}
