package main

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

// minter is how this machine mints grants, as whom, and the key that seals
// the local audit log (none with Vault, whose audit device is the record).
type minter struct {
	mint      func(token.Grant, time.Time) (token.Grant, error)
	principal string
	seal      []byte
	// team is the Vault custody with the Vault backend (nil with the
	// keyring): scoped grants are published there, not kept on this disk.
	team *vault.Custody
	ctx  context.Context
	// stamp adds what signed the decision (a passkey, loopguard serve)
	// to its audit entries; nil for a decision typed at the terminal.
	stamp func(audit.Entry) audit.Entry
}

// entry is e with the decision's signature, if it has one.
func (m *minter) entry(e audit.Entry) audit.Entry {
	if m.stamp == nil {
		return e
	}
	return m.stamp(e)
}

// publishRecord stores scoped grant g where the hooks find it: in Vault for
// every machine, or in this machine's store, with the grant file's notes
// rec (a preset's name).
func (m *minter) publishRecord(st *state.Store, g *token.Grant, rec state.GrantRecord, now time.Time) error {
	if m.team == nil {
		_, err := st.PutGrant(g, rec)
		return err
	}
	ctx, cancel := context.WithTimeout(m.ctx, cli.VaultTimeout)
	defer cancel()
	err := m.team.PutGrant(ctx, g, rec.Preset, now)
	if errors.Is(err, vault.ErrDenied) {
		return cli.WithHint(err, "your Vault token may not publish grants: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
	}
	return err
}

// loadMinter reads the key from the configured backend: the keyring's
// master key, or a Vault token whose policy allows transit/hmac (an
// approver's, after `vault login`).
func loadMinter(ctx context.Context) (*minter, error) {
	cfg, err := cli.LoadConfig()
	if err != nil {
		return nil, err
	}
	if cfg.Backend == config.BackendVault {
		team, err := vaultCustody(cfg)
		if err != nil {
			return nil, err
		}
		who, err := vaultIdentity(ctx, team.Transit.C, cfg)
		if err != nil {
			return nil, err
		}
		t := team.Transit
		return &minter{principal: who, team: team, ctx: ctx, mint: func(g token.Grant, now time.Time) (token.Grant, error) {
			cctx, cancel := context.WithTimeout(ctx, cli.VaultTimeout)
			defer cancel()
			g, err := t.Mint(cctx, g, now)
			if errors.Is(err, vault.ErrDenied) {
				return g, cli.WithHint(err, "your Vault token may not mint: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
			}
			return g, err
		}}, nil
	}
	keys, seal, err := loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	return &minter{mint: keys.Mint, principal: principal(), seal: seal}, nil
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

// vaultCustody is the hook's Vault custody, when the config chooses it.
func vaultCustody(cfg config.Config) (*vault.Custody, error) {
	c, v, err := cli.VaultClient(cfg)
	if err != nil {
		return nil, err
	}
	return &vault.Custody{
		Transit: &vault.Transit{C: c, Mount: v.TransitMount, Key: v.Key},
		KV:      &vault.KV{C: c, Mount: v.KVMount, Prefix: v.KVPrefix},
	}, nil
}
