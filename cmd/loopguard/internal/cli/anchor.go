package cli

import (
	"context"

	"github.com/loopguard/loopguard/keyring"
)

// AnchorCtx bounds one keyring call of the anchor's.
func AnchorCtx() (context.Context, context.CancelFunc) {
	return KeyringCtx(context.Background())
}

// LoadAnchor returns the keyring's anchor of the state directory at dir
// ("" when there is none).
func LoadAnchor(dir string) (string, error) {
	ctx, cancel := AnchorCtx()
	defer cancel()
	return keyring.LoadAnchor(ctx, keyring.AnchorAccount(dir))
}
