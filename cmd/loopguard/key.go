package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

func newKeyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Manage the master key in the OS keyring",
		Long: `The master key (32 random bytes in the OS keyring) keys every approval and
grant and the audit log's seal. 'loopguard init' creates it.`,
		Example: "  loopguard key rotate",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newKeyRotateCmd())
	return cmd
}

// keyRotateOptions is what key rotate needs: the human's terminal, a
// writer for the outcome, the store and the clock.
type keyRotateOptions struct {
	tty   *os.File
	out   io.Writer
	store *state.Store
	now   func() time.Time
}

func newKeyRotateCmd() *cobra.Command {
	o := &keyRotateOptions{now: time.Now}
	return &cobra.Command{
		Use:   "rotate",
		Short: "Replace the master key; every existing approval and grant stops working",
		Long: `Replace the master key in the OS keyring with a new random one, after you
confirm on your terminal.

Every approval and grant minted under the old key then fails verification:
the hook refuses it as grant_invalid, and the agent's calls need new
approvals. The audit log's sealed head is re-sealed under the new key, after
checking it under the old one, so 'loopguard audit verify' keeps working.

Rotate when you suspect the key was exposed, or when the keyring item is
damaged (then the log cannot be re-sealed; see 'loopguard audit restart').
Like approve, this talks to /dev/tty only and refuses inside an agent.`,
		Example: "  loopguard key rotate",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tty, st, err := cli.OpenTTYStore()
			if err != nil {
				return err
			}
			defer tty.Close()
			o.tty, o.out, o.store = tty, cmd.OutOrStdout(), st
			return keyRotateRun(cmd.Context(), o)
		},
	}
}

// liveGrants counts the grants that verify under keys at now: the ones a
// rotation takes away.
func liveGrants(st *state.Store, keys *token.Keys, now time.Time) (int, error) {
	all, err := st.AllGrants()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, gf := range all {
		g := gf.Grant
		if g == nil {
			continue
		}
		if keys.Verify(g, token.Call{Session: g.Session, Agent: g.Agent, Tool: g.Tool, Digest: g.ArgHash}, now) == nil {
			n++
		}
	}
	return n, nil
}

func keyRotateRun(ctx context.Context, o *keyRotateOptions) error {
	tty, out, st, now := o.tty, o.out, o.store, o.now()
	var oldSeal []byte
	live := 0
	oldKeys, seal, err := cli.LoadKeys(ctx)
	switch {
	case err == nil:
		oldSeal = seal
		defer clear(oldSeal)
		if live, err = liveGrants(st, oldKeys, now); err != nil {
			return err
		}
		// Refuse to carry a seal over onto a log that no longer verifies:
		// the new key would vouch for whatever was changed.
		rep, err := cli.AuditLog(st).Verify(oldSeal)
		if err != nil {
			return fmt.Errorf("failed to verify the audit log: %w", err)
		}
		if !rep.OK() {
			return cli.WithHint(fmt.Errorf("the audit log does not verify under the current key (%d problem(s)); not rotating", len(rep.Problems)),
				"run `loopguard audit verify` to see what changed, then `loopguard audit restart`, then rotate")
		}
		// Nor onto a state directory that is not the one anchored: the
		// new anchor would vouch for the loss.
		if _, _, err := checkStateAnchor(st, oldSeal); errors.Is(err, audit.ErrStateLost) {
			return fmt.Errorf("not rotating: %w", err)
		}
		fmt.Fprintf(tty, "Current key id %s. %d live grant(s) (approvals not yet used, scoped grants not expired) were minted under it.\n", oldKeys.ID, live)
	case errors.Is(err, keyring.ErrCorrupt):
		fmt.Fprintln(tty, "The keyring item is damaged: it will be replaced. The audit log's seal cannot be carried over.")
	default:
		return err
	}
	fmt.Fprintln(tty, "Rotating replaces the master key: every existing approval and grant stops working (grant_invalid), and the agent's calls need new approvals.")
	if err := cli.ConfirmTyped(tty, "Type 'rotate' to replace the key (anything else cancels): ", is("rotate"),
		"the key was kept", errors.New("not confirmed: the key was kept")); err != nil {
		return err
	}
	kctx, cancel := cli.KeyringCtx(ctx)
	err = keyring.Rotate(kctx)
	if err == nil {
		// The key's holder holds the old key.
		err = keyring.StopHolder(kctx, st.Dir)
	}
	cancel()
	if err != nil {
		return err
	}
	newKeys, newSeal, err := cli.LoadKeys(ctx)
	if err != nil {
		return fmt.Errorf("the key was rotated, but reading it back failed: %w", err)
	}
	defer clear(newSeal)
	entry := audit.Entry{Event: "cli", Decision: "key-rotate", Principal: cli.Principal(), Time: now.UTC(),
		Detail: fmt.Sprintf("new key id %s; %d live grant(s) invalidated", newKeys.ID, live)}
	l := cli.AuditLog(st)
	if err := l.Append(entry); err != nil {
		return fmt.Errorf("the key was rotated, but the audit log could not be written: %w", err)
	}
	if oldSeal != nil {
		if err := l.Rekey(oldSeal, newSeal); err != nil {
			return cli.WithHint(fmt.Errorf("the key was rotated, but the audit log could not be re-sealed: %w", err),
				"run `loopguard audit verify`; if it reports the head, run `loopguard audit restart` to start a new sealed log")
		}
		// The anchor, MACed under the old key, is made again under the new.
		if err := cli.MoveAnchor(st, oldSeal, newSeal, false); err != nil {
			// An anchor under the old key would make the hook deny every
			// call as state_lost: it goes, and init makes it again.
			_ = deleteAnchor(st.Dir)
			return cli.WithHint(fmt.Errorf("the key was rotated and the audit log re-sealed, but the state directory's anchor could not be moved to the new key: %w", err),
				"run `loopguard init`: it anchors the state directory again (nothing else changes)")
		}
	} else if err := deleteAnchor(st.Dir); err != nil {
		// An anchor under the unreadable key can be checked by no one.
		return fmt.Errorf("the key was rotated, but the state directory's old anchor could not be removed: %w", err)
	}
	fmt.Fprintf(out, "Rotated the master key (new key id %s). %d live grant(s) invalidated: the hook refuses them as grant_invalid; approve again what should still run.\n", newKeys.ID, live)
	if oldSeal != nil {
		fmt.Fprintln(out, "The audit log was re-sealed under the new key.")
	} else {
		fmt.Fprintln(out, "The audit log was not re-sealed (the old key was unreadable): run `loopguard audit restart`.")
	}
	return nil
}
