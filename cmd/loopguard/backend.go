package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// vaultTimeout bounds one CLI request to Vault (the hook's requests are
// bounded by its own deadline).
const vaultTimeout = 10 * time.Second

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
	ctx, cancel := context.WithTimeout(m.ctx, vaultTimeout)
	defer cancel()
	err := m.team.PutGrant(ctx, g, rec.Preset, now)
	if errors.Is(err, vault.ErrDenied) {
		return withHint(err, "your Vault token may not publish grants: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
	}
	return err
}

// loadMinter reads the key from the configured backend: the keyring's
// master key, or a Vault token whose policy allows transit/hmac (an
// approver's, after `vault login`).
func loadMinter(ctx context.Context) (*minter, error) {
	cfg, err := loadConfig()
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
			cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
			defer cancel()
			g, err := t.Mint(cctx, g, now)
			if errors.Is(err, vault.ErrDenied) {
				return g, withHint(err, "your Vault token may not mint: approvers need the loopguard-approver policy (backend/vault/policies/approver.hcl)")
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
	cctx, cancel := context.WithTimeout(ctx, vaultTimeout)
	defer cancel()
	who, _, err := c.Identity(cctx)
	switch {
	case errors.Is(err, vault.ErrNoPerson):
		return "", withHint(err, "log in as a person (userpass, OIDC), or have an administrator name your Vault entity (README, Teams)")
	case err != nil:
		home, _ := os.UserHomeDir()
		return "", withHint(err, "log in to Vault as an approver (vault login -method=userpass username=NAME, or -method=oidc) and check the token file "+cfg.Vault.WithDefaults(home).TokenFile)
	}
	return who, nil
}

// vaultClient builds a Vault client from the config, with the token read
// from its token file.
func vaultClient(cfg config.Config) (*vault.Client, config.Vault, error) {
	home, _ := os.UserHomeDir()
	v := cfg.Vault.WithDefaults(home)
	tok, err := readToken(v.TokenFile)
	if err != nil {
		return nil, v, err
	}
	c, err := vault.NewClient(v.Address, tok)
	return c, v, err
}

// readToken reads a Vault token file: a regular file, at most 4 KiB, one
// printable line.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to read the Vault token: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("vault token file %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fmt.Errorf("failed to read the Vault token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(b) > 4096 || tok == "" || strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return "", fmt.Errorf("vault token file %s does not hold one token", path)
	}
	return tok, nil
}

// vaultCustody is the hook's Vault custody, when the config chooses it.
func vaultCustody(cfg config.Config) (*vault.Custody, error) {
	c, v, err := vaultClient(cfg)
	if err != nil {
		return nil, err
	}
	return &vault.Custody{
		Transit: &vault.Transit{C: c, Mount: v.TransitMount, Key: v.Key},
		KV:      &vault.KV{C: c, Mount: v.KVMount, Prefix: v.KVPrefix},
	}, nil
}
