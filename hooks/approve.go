package hooks

import (
	"errors"
	"fmt"
	"time"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// MaxApprovalTTL bounds how long an exact approval may stay valid.
const MaxApprovalTTL = 24 * time.Hour

// ConfirmPrefixLen is how many characters of a digest a human types to
// confirm an approval or a grant.
const ConfirmPrefixLen = 8

// Approve mints an exact, single-use grant for the pending call p, bound to
// its digest, session, agent and tool, stores it and marks p approved. The
// digest is recomputed from the canonical bytes the human was shown, so what
// is approved is what was rendered, whatever else the record says.
func Approve(st *state.Store, keys *token.Keys, p *state.Pending, principal string, ttl time.Duration, now time.Time) (*token.Grant, error) {
	return ApproveWith(st, keys.Mint, p, principal, ttl, now)
}

// ApproveWith is Approve with the MAC made by mint (a Vault Transit key).
func ApproveWith(st *state.Store, mint func(token.Grant, time.Time) (token.Grant, error), p *state.Pending, principal string, ttl time.Duration, now time.Time) (*token.Grant, error) {
	g, err := MintApproval(mint, p, principal, ttl, now)
	if err != nil {
		return nil, err
	}
	// The approval covers the project as the warning shown with the call
	// saw it (p.PlantedAt: when show, review or the console computed
	// it), not as of the keypress: a jailed rewrite of a Makefile the
	// warning on screen named already changed no word of it (the
	// eighty-eighth attack run). ChangedAfter counts from then.
	var shown time.Time
	if !p.PlantedAt.IsZero() && p.PlantedAt.Before(now) {
		shown = p.PlantedAt.UTC()
	}
	if _, err := st.PutGrant(&g, state.GrantRecord{CallDigest: p.CallDigest, Pending: p.ID, AgentType: p.AgentType, Created: now.UTC(),
		Shown: shown, Resembles: retryKeys(p.Descriptor)}); err != nil {
		return nil, err
	}
	if err := st.Decide(p.ID, state.StatusApproved, principal, g.ID(), now); err != nil {
		return nil, err
	}
	// The file as approved, for a later drift's diff (display only).
	if snap := present.Snapshot(p.Descriptor, state.MaxSnapshot); snap != nil {
		_ = st.PutSnapshot(p.ID, snap)
	}
	return &g, nil
}

// MintApproval mints the exact, single-use grant for pending call p without
// storing it (an approval for another machine travels as its token). The
// digest is recomputed from the canonical bytes the human was shown.
func MintApproval(mint func(token.Grant, time.Time) (token.Grant, error), p *state.Pending, principal string, ttl time.Duration, now time.Time) (token.Grant, error) {
	if ttl <= 0 || ttl > MaxApprovalTTL {
		return token.Grant{}, fmt.Errorf("approval ttl must be between 1s and %s", MaxApprovalTTL)
	}
	if token.DigestOf(p.Descriptor) != p.Digest {
		return token.Grant{}, fmt.Errorf("%w: pending record %s: its digest does not match its call", state.ErrCorrupt, p.ID)
	}
	if p.Session == "" || p.Agent == "" || p.Tool == "" {
		return token.Grant{}, errors.New("pending record lacks its session, agent or tool")
	}
	return mint(token.Grant{
		Principal: principal, Agent: p.Agent, Session: p.Session, Tool: p.Tool,
		ArgHash: p.Digest, Scope: token.ScopeCall, Expiry: now.Add(ttl),
	}, now)
}
