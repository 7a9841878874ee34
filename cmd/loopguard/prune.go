package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/state"
)

func newPruneCmd() *cobra.Command {
	var olderThan time.Duration
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
			if olderThan < 0 {
				return errors.New("--older-than must not be negative")
			}
			st, err := openStore()
			if err != nil {
				return err
			}
			return pruneRun(cmd.OutOrStdout(), st, olderThan, time.Now())
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 7*24*time.Hour, "keep used grants, pending calls and notes touched more recently than this")
	return cmd
}

func pruneRun(out io.Writer, st *state.Store, olderThan time.Duration, now time.Time) error {
	c, err := st.Prune(now, now.Add(-olderThan))
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("expired grants %d, used grants %d, pending calls %d, notes %d", c.ExpiredGrants, c.Consumed, c.Pending, c.Notes)
	if err := record(st, nil, audit.Entry{Decision: "prune", Principal: principal(), Detail: detail}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Pruned %s.\n", detail)
	return nil
}
