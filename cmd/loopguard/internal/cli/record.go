package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// OpenStore opens the per-user state directory.
func OpenStore() (*state.Store, error) {
	dir, err := state.DefaultDir()
	if err != nil {
		return nil, err
	}
	return state.Open(dir)
}

// LoadKeys reads the master key, derives the grant keys and the audit seal
// key from it, and wipes it.
func LoadKeys(ctx context.Context) (*token.Keys, []byte, error) {
	master, err := LoadMaster(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer clear(master)
	return token.DeriveKeys(master)
}

// Record appends a CLI action to the audit log and seals it when a seal key
// is at hand.
func Record(st *state.Store, seal []byte, e audit.Entry) error {
	e.Time = time.Now().UTC()
	if e.Event == "" {
		e.Event = "cli"
	}
	l := AuditLog(st)
	if err := l.Append(e); err != nil {
		return fmt.Errorf("failed to write the audit log: %w", err)
	}
	if seal != nil {
		if err := l.Seal(seal); err != nil {
			return fmt.Errorf("failed to seal the audit log: %w", err)
		}
		// The keyring's anchor follows the seal, so that a state directory
		// rolled back to before it is seen. One that is not the directory
		// anchored is said now, loudly; a keyring that fails here only
		// leaves the anchor where it was.
		if err := Reanchor(st, seal, false); errors.Is(err, audit.ErrStateLost) {
			return err
		}
	}
	return nil
}

// Principal is the human minting grants: the OS user.
func Principal() string {
	if c, err := LoadConfig(); err == nil && c.Principal != "" {
		return c.Principal
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid:%d", os.Getuid())
}

// StoreAnchor writes the keyring's anchor of the state directory at dir,
// and stops the key's holder of dir, which holds the anchor it replaced
// (it ends at the Secret Service's signal too, where the service sends
// one).
func StoreAnchor(dir, rec string) error {
	ctx, cancel := AnchorCtx()
	defer cancel()
	if err := keyring.StoreAnchor(ctx, keyring.AnchorAccount(dir), rec); err != nil {
		return err
	}
	return keyring.StopHolder(ctx, dir)
}

// Reanchor moves the anchor of st to the audit log's sealed head, under
// seal, after checking that the anchor there names this directory: a lost
// one is an *audit.LostError, never anchored again here. Where nothing is
// anchored and the directory has no identity (set up before anchors), it
// does nothing unless create (init): then the directory gets its identity.
// Other keyring failures are returned too; the callers that only move the
// anchor along (Record) let them pass.
func Reanchor(st *state.Store, seal []byte, create bool) error {
	return MoveAnchor(st, seal, seal, create)
}

// MoveAnchor is Reanchor for a key rotation: the anchor there is checked
// under oldSeal, the new one made under seal (the head must already be
// sealed under it).
func MoveAnchor(st *state.Store, oldSeal, seal []byte, create bool) error {
	l := AuditLog(st)
	return l.AnchorLocked(func() error {
		rec, err := LoadAnchor(st.Dir)
		if err != nil {
			return err
		}
		id, err := l.ID()
		if err != nil {
			return err
		}
		switch {
		case rec != "":
			if _, err := l.CheckAnchor(oldSeal, rec); err != nil {
				return err
			}
		case id == "" && !create:
			return nil
		}
		if id == "" {
			if _, err := l.NewID(); err != nil {
				return err
			}
		}
		next, err := l.Anchor(seal)
		if err != nil {
			return err
		}
		if next == rec {
			return nil
		}
		return StoreAnchor(st.Dir, next)
	})
}
