// Package approve is how loopguard's human side decides a call: the
// minter (the key, from the keyring or Vault's Transit, and who decides),
// and one function per act that every surface shares (the approve, deny,
// grant and review verbs, the web console of serve, and the team verbs
// over Vault): an exact approval minted and logged (Exact, or TeamExact
// for a call published in Vault), a scoped grant (Grant), a refusal
// (Deny, TeamDeny), with the prompt and the line that say so, and the
// approve and deny verbs' runs (Run, DenyRun), which review shares; the
// refusals of a rule no grant takes (CheckNetworkRule); and a call
// published in Vault as an approver reads it (TeamGet, TeamParts).
package approve

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Minter is how this machine mints grants, as whom, and the key that seals
// the local audit log (none with Vault, whose audit device is the record).
type Minter struct {
	mint      func(token.Grant, time.Time) (token.Grant, error)
	Principal string
	Seal      []byte
	// Team is the Vault custody with the Vault backend (nil with the
	// keyring): scoped grants are published there, not kept on this disk.
	Team *vault.Custody
	ctx  context.Context
	// Stamp adds what signed the decision (a passkey, loopguard serve)
	// to its audit entries; nil for a decision typed at the terminal.
	Stamp func(audit.Entry) audit.Entry
}

// entry is e with the decision's signature, if it has one.
func (m *Minter) entry(e audit.Entry) audit.Entry {
	if m.Stamp == nil {
		return e
	}
	return m.Stamp(e)
}

// publish stores scoped grant g where the hooks find it: in Vault for
// every machine, or in this machine's store, with the grant file's notes
// rec (a preset's name).
func (m *Minter) publish(st *state.Store, g *token.Grant, rec state.GrantRecord, now time.Time) error {
	if m.Team == nil {
		_, err := st.PutGrant(g, rec)
		return err
	}
	ctx, cancel := context.WithTimeout(m.ctx, cli.VaultTimeout)
	defer cancel()
	err := m.Team.PutGrant(ctx, g, rec.Preset, now)
	if errors.Is(err, vault.ErrDenied) {
		return cli.WithHint(err, "your Vault token may not publish grants: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
	}
	return err
}

// Load reads the key from the configured backend: the keyring's master
// key, or a Vault token whose policy allows transit/hmac (an approver's,
// after `vault login`).
func Load(ctx context.Context) (*Minter, error) {
	cfg, err := cli.LoadConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Backend == config.BackendVault {
		team, err := VaultCustody(cfg)
		if err != nil {
			return nil, err
		}
		who, err := vaultIdentity(ctx, team.Transit.C, cfg)
		if err != nil {
			return nil, err
		}
		return ForVault(ctx, team, who), nil
	}
	keys, seal, err := cli.LoadKeys(ctx)
	if err != nil {
		return nil, err
	}
	return &Minter{mint: keys.Mint, Principal: cli.Principal(), Seal: seal}, nil
}

// ForVault is the minter of approver principal through the Vault custody
// team: Vault's Transit key mints, under the token's identity.
func ForVault(ctx context.Context, team *vault.Custody, principal string) *Minter {
	t := team.Transit
	return &Minter{Principal: principal, Team: team, ctx: ctx, mint: func(g token.Grant, now time.Time) (token.Grant, error) {
		cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
		defer cancel()
		g, err := t.Mint(cctx, g, now)
		if errors.Is(err, vault.ErrDenied) {
			return g, cli.WithHint(err, "your Vault token may not mint: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
		}
		return g, err
	}}
}

// LoadTeam is the approver's side of the Vault backend: the custody and
// the identity it approves as.
func LoadTeam(ctx context.Context) (*Minter, error) {
	m, err := Load(ctx)
	if err != nil {
		return nil, err
	}
	if m.Team == nil {
		return nil, cli.WithHint(errors.New("the team commands need the Vault backend"), `set "backend": "vault" and a "vault" section in the config (README, Teams)`)
	}
	return m, nil
}

// vaultIdentity is who the approver is to Vault (vault.Client.Identity),
// with the hint that fixes each failure.
func vaultIdentity(ctx context.Context, c *vault.Client, cfg config.Config) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
	defer cancel()
	who, _, err := c.Identity(cctx)
	switch {
	case errors.Is(err, vault.ErrNoPerson):
		return "", cli.WithHint(err, "log in as a person (userpass, OIDC), or have an administrator name your Vault entity (README, Teams)")
	case err != nil:
		home, _ := os.UserHomeDir()
		return "", cli.WithHint(err, "log in to Vault as an approver (vault login -method=userpass username=NAME, or -method=oidc) and check the token file "+cfg.Vault.WithDefaults(home).TokenFile)
	}
	return who, nil
}

// VaultCustody is the hook's Vault custody, when the config chooses it.
func VaultCustody(cfg config.Config) (*vault.Custody, error) {
	c, v, err := cli.VaultClient(cfg)
	if err != nil {
		return nil, err
	}
	return &vault.Custody{
		Transit: &vault.Transit{C: c, Mount: v.TransitMount, Key: v.Key},
		KV:      &vault.KV{C: c, Mount: v.KVMount, Prefix: v.KVPrefix},
	}, nil
}
