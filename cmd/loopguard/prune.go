package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/state"
)

// pruneOptions is what prune needs: its flag, writer, store and clock.
type pruneOptions struct {
	out       io.Writer
	store     *state.Store
	now       func() time.Time
	olderThan time.Duration // --older-than
}

func newPruneCmd() *cobra.Command {
	o := &pruneOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove expired grants and old consumed grants, pending calls and notes",
		Long: `Remove what can no longer allow anything: grants past their expiry, and
used grants, pending calls and PostToolUse notes not touched for --older-than.
Grants that are still valid stay (revoke removes those). The audit log is
never pruned. Taking state away needs no terminal.`,
		Example: "  loopguard prune\n  loopguard prune --older-than 24h",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.olderThan < 0 {
				return errors.New("--older-than must not be negative")
			}
			st, err := cli.OpenStore()
			if err != nil {
				return err
			}
			o.out, o.store = cmd.OutOrStdout(), st
			return pruneRun(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.olderThan, "older-than", 7*24*time.Hour, "keep used grants, pending calls and notes touched more recently than this")
	return cmd
}

// pruneRun prunes the store and, with the Vault backend, the expired grants
// kept there.
func pruneRun(ctx context.Context, o *pruneOptions) error {
	if err := pruneStore(o.out, o.store, o.olderThan, o.now()); err != nil {
		return err
	}
	// With the Vault backend, the expired grants there too (an
	// approver's token; an agent machine's may not delete).
	m, err := revoker(ctx)
	if err != nil || m == nil {
		return err
	}
	return pruneVault(ctx, o.out, o.store, m, o.now())
}

func pruneStore(out io.Writer, st *state.Store, olderThan time.Duration, now time.Time) error {
	c, err := st.Prune(now, now.Add(-olderThan))
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("expired grants %d, used grants %d, pending calls %d, notes %d", c.ExpiredGrants, c.Consumed, c.Pending, c.Notes)
	if err := cli.Record(st, nil, audit.Entry{Decision: "prune", Principal: cli.Principal(), Detail: detail}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Pruned %s.\n", detail)
	return nil
}

// pruneVault deletes the expired scoped grants kept in Vault: they cover
// nothing, but every call's lookup reads them.
func pruneVault(ctx context.Context, out io.Writer, st *state.Store, m *approve.Minter, now time.Time) error {
	all, err := teamGrantsOf(ctx, m.Team)
	if err != nil {
		return err
	}
	n := 0
	for _, gf := range all {
		if gf.Grant == nil || now.Before(gf.Grant.Expiry) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
		err := m.Team.RevokeGrant(cctx, strings.TrimPrefix(gf.Path, vaultPathPrefix))
		cancel()
		if err != nil {
			return cli.WithHint(err, "pruning the grants in Vault needs an approver's token (loopguard-approver)")
		}
		n++
	}
	if err := cli.Record(st, nil, audit.Entry{Decision: "prune", Principal: m.Principal, Detail: fmt.Sprintf("expired grants in Vault %d", n)}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Pruned %d expired grant(s) in Vault.\n", n)
	return nil
}
