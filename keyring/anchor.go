package keyring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
)

// The anchor of a state directory is a second item beside the key
// (service Service, user AnchorAccount(dir)): a short record, made and
// checked by package audit, of the directory's identity and the audit
// log's sealed head. It lives outside the directory it vouches for, so a
// removed, replaced or rolled-back state directory cannot take it along.
// It is no secret (the record is MACed under a key derived from the master
// key), and the same bounds and timeouts apply as to the key.

// anchorPrefix starts the user name of every anchor item.
const anchorPrefix = "state-anchor-"

// maxAnchorLen bounds a stored anchor record.
const maxAnchorLen = 1024

// AnchorAccount is the keyring user name of the anchor of the state
// directory at dir: one item per directory path, so that two state
// directories (two XDG_STATE_HOMEs, or tests side by side) sharing a
// keyring never take each other's anchor.
func AnchorAccount(dir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dir)))
	return anchorPrefix + hex.EncodeToString(sum[:8])
}

// LoadAnchor returns the anchor record stored under account, "" when there
// is none.
func LoadAnchor(ctx context.Context, account string) (string, error) {
	var rec string
	err := run(ctx, "load", func(b backend) error {
		var err error
		rec, err = getAnchor(b, account)
		return err
	})
	return rec, err
}

// LoadWithAnchor is Load, and the anchor under account ("" when there is
// none) read with it: on Linux's short way over the same connection and
// session (two calls more to the Secret Service, no second dial), so that
// the hook's one keyring read on an allow brings both.
func LoadWithAnchor(ctx context.Context, account string) (key []byte, anchor string, err error) {
	quick := func(ctx context.Context) (bool, error) {
		vals, ok, err := quickGetMany(ctx, Account, account)
		if !ok || err != nil {
			return false, err
		}
		if key, err = decode(vals[0]); err != nil {
			return true, err
		}
		anchor, err = checkAnchor(vals[1])
		return true, err
	}
	err = runQuick(ctx, "load", quick, func(b backend) error {
		k, err := get(b)
		if err != nil {
			return err
		}
		if anchor, err = getAnchor(b, account); err != nil {
			clear(k)
			return err
		}
		key = k
		return nil
	})
	if err != nil {
		clear(key)
		return nil, "", err
	}
	return key, anchor, nil
}

// StoreAnchor stores rec under account, replacing what was there.
func StoreAnchor(ctx context.Context, account, rec string) error {
	if _, err := checkAnchor(rec); err != nil || rec == "" {
		return newError("store", ErrCorrupt, fmt.Errorf("%w: an anchor record must be 1 to %d printable ASCII bytes", ErrCorrupt, maxAnchorLen), "")
	}
	return run(ctx, "store", func(b backend) error { return b.Set(Service, account, rec) })
}

// DeleteAnchor removes the anchor under account; none there is no error.
func DeleteAnchor(ctx context.Context, account string) error {
	return run(ctx, "delete", func(b backend) error {
		for i := 0; i < maxDuplicates; i++ {
			err := b.Delete(Service, account)
			if isNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func getAnchor(b backend, account string) (string, error) {
	s, err := b.Get(Service, account)
	if isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return checkAnchor(s)
}

// checkAnchor bounds a stored anchor: printable ASCII, at most
// maxAnchorLen bytes. What it says is package audit's to check.
func checkAnchor(s string) (string, error) {
	if len(s) > maxAnchorLen {
		return "", newError("", ErrCorrupt, fmt.Errorf("%w: the stored state anchor is %d bytes long", ErrCorrupt, len(s)), "")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "", newError("", ErrCorrupt, fmt.Errorf("%w: the stored state anchor is not printable ASCII", ErrCorrupt), "")
		}
	}
	return s, nil
}
