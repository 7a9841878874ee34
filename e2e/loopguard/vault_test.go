package loopguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/e2e/claudetest"
)

// useVault points a guard's config at the Vault server with the token tok.
func useVault(t *testing.T, g *Guard, s *vaulttest.Server, tok string) {
	t.Helper()
	dir := filepath.Join(g.Home, ".config", "loopguard")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "vault-token")
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"v":1,"backend":"vault","vault":{"address":%q,"token_file":%q}}`, s.Addr, tokFile)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The real client on "machine A" (one HOME, an agent-policy Vault token)
// is held; alice approves the call from "machine B" (another HOME, her
// Vault login, no state shared with A: only Vault), with `loopguard team
// approve` at a terminal; A's identical retry runs once, under alice's Vault
// identity, and the next retry is consumed.
func TestVaultApprovalFromAnotherMachineRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // machine A: init registers the hooks in the project
	s := vaulttest.Start(t)
	useVault(t, e.g, s, s.AgentToken(t, "agent-machine-a").Token)
	b, err := NewGuard(lgBin, t.TempDir()) // machine B
	if err != nil {
		t.Fatal(err)
	}
	useVault(t, b, s, s.AddApprover(t, "alice").Token)

	approveOnB := func() error {
		list, err := b.Run(e.ctx, b.Home, "team", "pending")
		if err != nil {
			return err
		}
		p, err := e.g.OnlyPending(e.ctx) // for the digest prefix the human types
		if err != nil {
			return err
		}
		if !strings.Contains(list, p.ID) {
			return fmt.Errorf("machine B's team pending does not list %s:\n%s", p.ID, list)
		}
		screen, err := b.onTTY(e.ctx, b.Home, func(string) (string, error) { return p.Digest[:8], nil }, "team", "approve", p.ID)
		if err != nil {
			return err
		}
		if !strings.Contains(screen, "Approved "+p.ID) || !strings.Contains(screen, "vault:userpass-alice") {
			return fmt.Errorf("team approve did not approve as alice:\n%s", screen)
		}
		return nil
	}
	const cmd = "echo one >> runs.txt"
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_va1", cmd)),
		claudetest.Tools(bash("toolu_va2", cmd)), // the identical retry, after B approved
		claudetest.Tools(bash("toolu_va3", cmd)), // once more
		claudetest.Text("done"),
	}}, func(p *Proxy) { p.OnToolResult("toolu_va1", approveOnB) })

	wantDenied(t, api, "toolu_va1", "no_grant")
	wantRan(t, api, "toolu_va2")
	wantDenied(t, api, "toolu_va3", "approval_consumed")
	if got := e.read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
	last, err := e.g.Audit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range last {
		if a.Decision == "allow" && a.Reason == "exact_grant" {
			found = true
		}
	}
	if !found {
		t.Errorf("no exact_grant allow in A's audit log: %+v", last)
	}
}
