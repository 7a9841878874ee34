package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
)

// The state directory's anchor in the keyring (package audit makes and
// checks it, package keyring keeps it): written by init, moved along by
// every command that seals the audit log with the key, checked by the
// hook wherever it reads the key and by doctor. A directory that is not
// the one anchored (removed, replaced, rolled back) is never anchored
// again without a human saying so: audit restart --accept-loss.

// checkStateAnchor checks the state directory st against the keyring's
// anchor under seal: (false, nil) when there is no anchor, an
// *audit.LostError when it is not the directory anchored.
func checkStateAnchor(st *state.Store, seal []byte) (audit.AnchorInfo, bool, error) {
	rec, err := cli.LoadAnchor(st.Dir)
	if err != nil || rec == "" {
		return audit.AnchorInfo{}, false, err
	}
	info, err := cli.AuditLog(st).CheckAnchor(seal, rec)
	return info, true, err
}

func deleteAnchor(dir string) error {
	ctx, cancel := cli.AnchorCtx()
	defer cancel()
	if err := keyring.DeleteAnchor(ctx, keyring.AnchorAccount(dir)); err != nil {
		return err
	}
	return keyring.StopHolder(ctx, dir)
}

// anchorForInit anchors st for init, giving it its identity if it has
// none: seal nil (the log could not be sealed) anchors nothing, and says
// so.
func anchorForInit(st *state.Store, seal []byte, errOut io.Writer) error {
	if seal == nil {
		fmt.Fprintln(errOut, "loopguard: warning: the state directory is not anchored in the keyring (its audit log could not be sealed): a removed or replaced state directory would go unnoticed")
		return nil
	}
	if err := cli.Reanchor(st, seal, true); err != nil {
		return fmt.Errorf("failed to anchor the state directory in the keyring: %w", err)
	}
	return nil
}

// lostOnInit stops init on a state directory that is not the one the
// keyring's anchor names (created: the key is new, so any anchor is void).
func lostOnInit(st *state.Store, seal []byte, created bool) error {
	if created || seal == nil {
		return nil
	}
	_, _, err := checkStateAnchor(st, seal)
	if errors.Is(err, audit.ErrStateLost) {
		return err
	}
	return nil
}
