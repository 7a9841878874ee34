package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// doctor passes with the agent's token (Vault refuses to mint with it) and
// fails with an approver's (which can mint), and with a revoked token.
func TestDoctorVault(t *testing.T) {
	s := vaulttest.Start(t)
	ctx := context.Background()
	status := func(rs []checkResult) map[string]checkStatus {
		m := map[string]checkStatus{}
		for _, r := range rs {
			m[r.name] = r.status
		}
		return m
	}
	agent := s.AgentToken(t, "agent-a")
	got := status(checkVault(ctx, clitest.VaultConfig(t, s, agent.Token)))
	for _, name := range []string{"vault", "vault token", "vault identity", "vault verify", "vault grants", "vault mint refused"} {
		if got[name] != statusOK {
			t.Errorf("agent token: %s = %v", name, got[name])
		}
	}
	alice := s.AddApprover(t, "alice")
	rs := checkVault(ctx, clitest.VaultConfig(t, s, alice.Token))
	if got := status(rs); got["vault mint refused"] != statusFail {
		t.Errorf("approver token on an agent machine: %+v", rs)
	}
	// An agent policy without the grants (before they were published in
	// Vault): doctor says so.
	s.Do(t, "PUT", "sys/policies/acl/old-agent", map[string]any{"policy": `
path "transit/verify/loopguard" { capabilities = ["update"] }
path "auth/token/lookup-self" { capabilities = ["read"] }`}, nil)
	var old struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	s.Do(t, "POST", "auth/token/create", map[string]any{"policies": []string{"old-agent"}, "no_default_policy": true}, &old)
	if got := status(checkVault(ctx, clitest.VaultConfig(t, s, old.Auth.ClientToken))); got["vault identity"] != statusFail || got["vault token"] != statusOK {
		t.Errorf("an old agent token, with no identity: %+v", got)
	}
	// An agent-policy token made before `team enroll` (no identity): it
	// could publish nothing, so doctor says enroll.
	rs = checkVault(ctx, clitest.VaultConfig(t, s, s.UnenrolledAgentToken(t, "agent-old").Token))
	if got := status(rs); got["vault identity"] != statusFail {
		t.Errorf("unenrolled agent token: %+v", rs)
	}
	for _, r := range rs {
		if r.name == "vault identity" && !strings.Contains(r.fix, "team enroll") {
			t.Errorf("fix: %q", r.fix)
		}
	}
	s.Revoke(t, agent.Token)
	if got := status(checkVault(ctx, clitest.VaultConfig(t, s, agent.Token))); got["vault token"] != statusFail {
		t.Errorf("revoked token: %+v", got)
	}
}

// A token `team enroll` makes (vault.Enroll) passes doctor.
func TestDoctorVaultEnrolledToken(t *testing.T) {
	s := vaulttest.Start(t)
	ctx := context.Background()
	e, err := vault.Enroll(ctx, s.Enroller(t, "admin"), "build-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range checkVault(ctx, clitest.VaultConfig(t, s, e.Token)) {
		if r.status != statusOK {
			t.Errorf("doctor with the enrolled token: %s %v: %s", r.name, r.status, r.detail)
		}
	}
}
