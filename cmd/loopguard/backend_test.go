package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

func TestReadTokenRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"empty": "", "two words": "hvs.a hvs.b", "control": "hvs.\x1b", "long": strings.Repeat("a", 5000)} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o600)
		if _, err := cli.ReadToken(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := cli.ReadToken(dir); err == nil {
		t.Error("a directory accepted")
	}
	p := filepath.Join(dir, "ok")
	os.WriteFile(p, []byte("hvs.CAESIabc\n"), 0o600)
	if tok, err := cli.ReadToken(p); err != nil || tok != "hvs.CAESIabc" {
		t.Errorf("control: %q %v", tok, err)
	}
}

// prune deletes the expired grants in Vault and leaves the live ones.
func TestPruneVault(t *testing.T) {
	s, c := clitest.AliceCustody(t)
	ctx := context.Background()
	now := time.Now()
	for _, ttl := range []time.Duration{2 * time.Second, time.Hour} {
		g, err := c.Transit.Mint(ctx, token.Grant{Principal: "vault:userpass-alice", Agent: token.MainAgent, Session: token.Any,
			Tool: "Bash", ArgHash: token.Any, Scope: "Bash(ls *)", Expiry: now.Add(ttl)}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PutGrant(ctx, &g, "", now); err != nil {
			t.Fatal(err)
		}
	}
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	m := &approve.Minter{Team: c, Principal: "vault:userpass-alice"}
	var out bytes.Buffer
	if err := pruneVault(ctx, &out, st, m, now); err != nil || !strings.Contains(out.String(), "Pruned 0 ") {
		t.Fatalf("nothing expired yet: %v %q", err, out.String())
	}
	out.Reset()
	if err := pruneVault(ctx, &out, st, m, now.Add(time.Minute)); err != nil || !strings.Contains(out.String(), "Pruned 1 ") {
		t.Fatalf("one expired: %v %q", err, out.String())
	}
	left, err := c.AllGrants(ctx)
	if err != nil || len(left) != 1 || !left[0].Grant.Expiry.After(now.Add(time.Minute)) {
		t.Fatalf("left: %+v %v", left, err)
	}
	// An agent machine's token lists but may not delete.
	agent, err := approve.VaultCustody(clitest.VaultConfig(t, s, s.AgentToken(t, "agent-a").Token))
	if err != nil {
		t.Fatal(err)
	}
	m.Team = agent
	if err := pruneVault(ctx, &out, st, m, now.Add(2*time.Hour)); err == nil {
		t.Error("the agent's token pruned a grant in Vault")
	}
}
