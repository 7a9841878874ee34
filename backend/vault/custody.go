package vault

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Custody is the hook's view of a Vault-kept key (hooks.Custody): it
// verifies grants with transit/verify and claims single-use grants in KV v2.
type Custody struct {
	Transit *Transit
	KV      *KV
	// RecordTTL is how long the approver's reader shows a published
	// record after Vault wrote it (0: PendingTTL).
	RecordTTL time.Duration

	ent entity // this token's Vault identity (Entity)
}

// Verify checks g against call with transit/verify.
func (c *Custody) Verify(ctx context.Context, g *token.Grant, call token.Call, now time.Time) error {
	return c.Transit.Verify(ctx, g, call, now)
}

// Claim marks the single-use grant g used, once; a grant already claimed
// is state.ErrClaimed. The claim is under this machine's identity (an
// approval is read only by the machine it was made for, so its grant is
// claimed there) and records when (the hook's policy lets it create claims
// only under its own directory, never read or list them).
func (c *Custody) Claim(ctx context.Context, g *token.Grant) error {
	e, err := c.Entity(ctx)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	err = c.KV.Claim(ctx, e+"/"+g.ID(), map[string]any{
		"host": host, "session": g.Session, "agent": g.Agent, "tool": g.Tool,
		"time": time.Now().UTC().Format(time.RFC3339Nano),
	})
	if err == ErrClaimed {
		return fmt.Errorf("%w: grant %s", state.ErrClaimed, g.ID())
	}
	return err
}
