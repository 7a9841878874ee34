//go:build linux

package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	webconsole "github.com/loopguard/loopguard/console"
)

// serve --backend vault on machine B (alice's Vault login) sees the call
// machine A's hook holds and decides it through Vault as alice, as team
// approve does: A's hook runs it; a deny reaches A as denied_by_human. The
// signed decision is kept in B's audit log with its proof. (The proof's
// checks are the console's; this is the backend behind them.)
func TestServeVaultBackend(t *testing.T) {
	s := vaulttest.Start(t)
	a := clitest.VaultHome(t, s, s.AgentToken(t, "agent-machine-a").Token)
	b := clitest.VaultHome(t, s, s.AddApprover(t, "alice").Token)
	t.Setenv("HOME", b.Home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(b.Home, "state"))
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CLAUDECODE", "")
	ctx := context.Background()
	m, err := approve.LoadTeam(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cli.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	ge, _ := cli.CurrentGrantEnv()
	tc := &teamConsole{st: st, m: m, ttl: 10 * time.Minute, grantTTL: time.Hour, offer: offer{ge}}
	proof := webconsole.Proof{Passkey: "cred-1", Signed: `{"v":"test"}`, Assertion: "a.b.c"}

	find := func(cmd string) webconsole.Call {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			calls, _ := tc.Queue(ctx)
			for _, c := range calls {
				if strings.Contains(string(c.Pending.Descriptor), cmd) && c.Held {
					return c
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the held call %q did not reach the team queue", cmd)
		return webconsole.Call{}
	}
	held := a.Hold(clitest.BashCall("s-serve", "echo from the console", "toolu_1"))
	c := find("echo from the console")
	head, _ := tc.Render(c)
	if len(head) == 0 || head[0].Kind != "title" || !strings.Contains(c.Status, "held on agent-machine-a (its machine says)") {
		t.Errorf("rendering %+v, status %q", head, c.Status)
	}
	// The machine as Vault knows it; what the machine says in plain lines
	// after the labelled line, never marked up as loopguard's own.
	says := -1
	for i, l := range head {
		if l.Text == "The agent machine says (its own words; loopguard checked none of this):" {
			says = i
		}
		if says >= 0 && i > says && (!strings.HasPrefix(l.Text, "  | ") || l.Kind != "") {
			t.Errorf("line %d after the machine's block header: %+v", i, l)
		}
	}
	if !strings.HasPrefix(head[0].Text, "machine: agent-machine-a (Vault identity ") || says < 0 {
		t.Errorf("rendering %+v", head)
	}
	msg, err := tc.Decide(ctx, c, webconsole.Decision{Kind: webconsole.Approve}, proof)
	if err != nil || !strings.Contains(msg, "as vault:userpass-alice") {
		t.Fatalf("approve through Vault: %v %s", err, msg)
	}
	clitest.WantAllowed(t, held, "the call approved from the console")
	if _, err := tc.Get(ctx, c.Pending.ID); !errors.Is(err, webconsole.ErrNotOpen) {
		t.Errorf("Get after the approval: %v; want ErrNotOpen", err)
	}

	refused := a.Hold(clitest.BashCall("s-serve", "echo refused", "toolu_2"))
	c = find("echo refused")
	if _, err := tc.Decide(ctx, c, webconsole.Decision{Kind: webconsole.Deny}, proof); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-refused:
		clitest.WantDecision(t, r.Out, r.Err, "deny", "denied_by_human")
	case <-time.After(20 * time.Second):
		t.Fatal("the refused call was not answered")
	}

	// B's diary keeps both decisions, signed, as alice.
	signed := 0
	_ = cli.AuditLog(st).Read(func(_ []byte, e audit.Entry) error {
		if e.Passkey == "cred-1" && e.Principal == "vault:userpass-alice" && (e.Decision == "approve" || e.Decision == "deny-pending") {
			signed++
		}
		return nil
	})
	if signed != 2 {
		t.Errorf("%d signed decisions in B's audit log; want 2", signed)
	}
}
