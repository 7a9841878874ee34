package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/initcmd"
	"github.com/loopguard/loopguard/state"
)

// newInitCmd is loopguard init (package initcmd), with what it takes from
// the root command: the audit log's seal and the state's anchor, and the
// grant verb's run for its offers.
func newInitCmd() *cobra.Command {
	return initcmd.NewCmd(initcmd.Deps{Seal: sealAndAnchorForInit, Grant: grantForInit})
}

// sealAndAnchorForInit is init's seal of the audit log and anchor of the
// state directory st, after the key (created now or not) and the state.
func sealAndAnchorForInit(st *state.Store, seal []byte, created bool, out, errOut io.Writer) ([]byte, error) {
	// A state directory that is not the one the keyring anchors is lost:
	// init does not anchor the loss away (audit restart --accept-loss
	// does, when the human says so).
	if err := lostOnInit(st, seal, created); err != nil {
		return nil, err
	}
	if created {
		// A new key: an anchor made under the old one vouches for nothing.
		if err := deleteAnchor(st.Dir); err != nil {
			return nil, err
		}
	}
	seal, err := sealForInit(st, seal, created, out, errOut)
	if err != nil {
		return nil, err
	}
	if err := anchorForInit(st, seal, errOut); err != nil {
		return nil, err
	}
	return seal, nil
}

// grantForInit mints init's offer g (the preset, the jail) as grant does.
func grantForInit(ctx context.Context, g initcmd.Grant) error {
	return grantRun(ctx, &grantOptions{tty: g.Tty, store: g.Store, now: time.Now, confirm: g.Confirm, rules: g.Rules, preset: g.Preset,
		ttl: g.TTL, agent: g.Agent, anySession: g.AnySession})
}
