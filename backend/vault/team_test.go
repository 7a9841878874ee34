package vault_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/token"
)

func custody(c *vault.Client) *vault.Custody {
	return &vault.Custody{Transit: transit(c), KV: &vault.KV{C: c, Mount: "secret", Prefix: "loopguard"}}
}

func scopedGrant(t *testing.T, alice *vault.Client, session, rule string) *token.Grant {
	t.Helper()
	now := time.Now()
	g, err := transit(alice).Mint(ctx(t), token.Grant{Principal: "vault:userpass-alice", Agent: token.MainAgent, Session: session,
		Tool: "Bash", ArgHash: token.Any, Scope: rule, Expiry: now.Add(time.Hour)}, now)
	if err != nil {
		t.Fatal(err)
	}
	return &g
}

// Scoped grants in KV: the approver writes (once), lists and revokes them;
// the agent's token reads and lists them and can do nothing else there
// (the policies in backend/vault/policies, as deployed).
func TestScopedGrantsAgentReadsApproverWrites(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC := s.AddApprover(t, "alice")
	alice, agent := custody(aliceC), custody(s.AgentToken(t, "agent-a"))
	const project = "project:/work/app"
	g := scopedGrant(t, aliceC, project, "Bash(ls *)")
	other := scopedGrant(t, aliceC, "s-other", "Bash(ls *)")
	anyG := scopedGrant(t, aliceC, token.Any, "Bash(git status)")
	for _, x := range []*token.Grant{g, other, anyG} {
		if err := alice.PutGrant(ctx(t), x, "", time.Now()); err != nil {
			t.Fatalf("approver publishes: %v", err)
		}
	}
	// Written once: the approver policy has no update there (403).
	if err := alice.PutGrant(ctx(t), g, "", time.Now()); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("republish: %v, want 403", err)
	}
	// The agent finds the grants of its bindings and of every session,
	// not the other session's, and they verify on its token.
	got, err := agent.ScopedGrants(ctx(t), "s1", project)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, gf := range got {
		if gf.Err != nil {
			t.Fatalf("record: %v", gf.Err)
		}
		ids[gf.Grant.ID()] = true
	}
	if len(got) != 2 || !ids[g.ID()] || !ids[anyG.ID()] {
		t.Fatalf("agent sees %v; want %s and %s", ids, g.ID(), anyG.ID())
	}
	if err := agent.Transit.Verify(ctx(t), g, token.Call{Session: project, Agent: token.MainAgent, Tool: "Bash"}, time.Now()); err != nil {
		t.Fatalf("agent verifies the published grant: %v", err)
	}
	// The agent writes nothing there: not a grant alice minted, not over
	// one, not a deletion.
	fresh := scopedGrant(t, aliceC, project, "Bash(cat *)")
	if err := agent.PutGrant(ctx(t), fresh, "", time.Now()); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("agent publishes: %v, want 403", err)
	}
	if err := agent.KV.Put(ctx(t), strings.TrimPrefix(got[0].Path, ""), map[string]any{"token": fresh.String()}); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("agent overwrites: %v, want 403", err)
	}
	if err := agent.RevokeGrant(ctx(t), got[0].Path); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("agent deletes: %v, want 403", err)
	}
	// The approver lists all three and revokes one: gone for the agent.
	all, err := alice.AllGrants(ctx(t))
	if err != nil || len(all) != 3 {
		t.Fatalf("approver lists %d grants, %v", len(all), err)
	}
	for _, gf := range all {
		if gf.Grant != nil && gf.Grant.ID() == g.ID() {
			if err := alice.RevokeGrant(ctx(t), gf.Path); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err = agent.ScopedGrants(ctx(t), "s1", project)
	if err != nil || len(got) != 1 || got[0].Grant.ID() != anyG.ID() {
		t.Fatalf("after revoke the agent sees %+v, %v", got, err)
	}
	// Revoked stays revoked: the approver cannot write the id again, nor
	// undelete it.
	if err := alice.PutGrant(ctx(t), g, "", time.Now()); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("republish after revoke: %v, want 403", err)
	}
	for _, gf := range all {
		if gf.Grant != nil && gf.Grant.ID() == g.ID() {
			err := aliceC.Do(ctx(t), "POST", "secret/undelete/loopguard/"+gf.Path, map[string]any{"versions": []int{1}}, nil)
			if !errors.Is(err, vault.ErrDenied) {
				t.Errorf("approver undeletes: %v, want 403", err)
			}
		}
	}
}

// A grant minted with a preset keeps the preset's name in Vault, so grants
// folds the preset and revoke --preset finds it on any approver's machine;
// a grant minted without one has none.
func TestScopedGrantPresetNote(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC := s.AddApprover(t, "alice")
	alice := custody(aliceC)
	pre := scopedGrant(t, aliceC, "s1", "Bash(ls *)")
	plain := scopedGrant(t, aliceC, "s1", "Bash(git status)")
	if err := alice.PutGrant(ctx(t), pre, "readonly", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := alice.PutGrant(ctx(t), plain, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	all, err := alice.AllGrants(ctx(t))
	if err != nil || len(all) != 2 {
		t.Fatal(all, err)
	}
	for _, gf := range all {
		want := ""
		if gf.Grant.ID() == pre.ID() {
			want = "readonly"
		}
		if gf.Record.Preset != want {
			t.Errorf("grant %s: preset %q, want %q", gf.Grant.Scope, gf.Record.Preset, want)
		}
	}
}

// A record filed under one binding that holds another session's grant (or
// an exact grant, or not a grant) covers nothing: it comes back as an
// error, not as a grant. Written with the root token, as a Vault admin
// could.
func TestScopedGrantMisfiled(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC := s.AddApprover(t, "alice")
	alice, agent := custody(aliceC), custody(s.AgentToken(t, "agent-a"))
	mine := scopedGrant(t, aliceC, "s1", "Bash(ls *)")
	if err := alice.PutGrant(ctx(t), mine, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	all, err := alice.AllGrants(ctx(t))
	if err != nil || len(all) != 1 {
		t.Fatal(all, err)
	}
	dir := path.Dir(all[0].Path)
	theirs := scopedGrant(t, aliceC, "s2", "Bash(rm *)")
	root := custody(s.Root)
	for name, tok := range map[string]string{theirs.ID(): theirs.String(), "0123456789ab": "not a grant"} {
		if err := root.KV.Put(ctx(t), dir+"/"+name, map[string]any{"token": tok}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := agent.ScopedGrants(ctx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	good, bad := 0, 0
	for _, gf := range got {
		switch {
		case gf.Err != nil:
			bad++
		case gf.Grant.ID() == mine.ID():
			good++
		default:
			t.Errorf("misfiled record returned as a grant: %s", gf.Grant)
		}
	}
	if good != 1 || bad != 2 {
		t.Errorf("%d good, %d refused; want 1 and 2", good, bad)
	}
}

// The principal is Vault's identity of the approver: the login's display
// name when it names a user; the entity's name when an administrator gave
// one (whatever method the login used); no principal at all for a login
// that names no one (approle, until its entity is named).
func TestIdentity(t *testing.T) {
	s := vaulttest.Start(t)
	alice := s.AddApprover(t, "alice")
	if who, _, err := alice.Identity(ctx(t)); err != nil || who != "vault:userpass-alice" {
		t.Errorf("userpass alice: %q, %v", who, err)
	}
	// approle: the display name is "approle" for every role.
	s.Do(t, "POST", "sys/auth/approle", map[string]any{"type": "approle"}, nil)
	s.Do(t, "POST", "auth/approle/role/ci", map[string]any{"token_policies": "loopguard-approver"}, nil)
	var rid, sid struct {
		Data map[string]any `json:"data"`
	}
	s.Do(t, "GET", "auth/approle/role/ci/role-id", nil, &rid)
	s.Do(t, "POST", "auth/approle/role/ci/secret-id", map[string]any{}, &sid)
	var login struct {
		Auth struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	s.Do(t, "POST", "auth/approle/login", map[string]any{"role_id": rid.Data["role_id"], "secret_id": sid.Data["secret_id"]}, &login)
	ci, _ := vault.NewClient(s.Addr, login.Auth.ClientToken)
	who, self, err := ci.Identity(ctx(t))
	if !errors.Is(err, vault.ErrNoPerson) {
		t.Fatalf("approle without a named entity: %q, %v; want ErrNoPerson", who, err)
	}
	// The login cannot name its own entity (the approver policy has no
	// identity write)...
	err = ci.Do(ctx(t), "POST", "identity/entity/id/"+self.EntityID, map[string]any{"name": "alice"}, nil)
	if !errors.Is(err, vault.ErrDenied) {
		t.Fatalf("approver renames its entity: %v, want 403", err)
	}
	// ...an administrator can, and that name is the principal.
	s.Do(t, "POST", "identity/entity/id/"+self.EntityID, map[string]any{"name": "ci-bot"}, nil)
	if who, _, err := ci.Identity(ctx(t)); err != nil || who != "vault:ci-bot" {
		t.Errorf("approle with the entity ci-bot: %q, %v", who, err)
	}
	// A userpass login whose entity an administrator named.
	bob := s.AddApprover(t, "bob")
	_, bself, err := bob.Identity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Do(t, "POST", "identity/entity/id/"+bself.EntityID, map[string]any{"name": "robert"}, nil)
	if who, _, err := bob.Identity(ctx(t)); err != nil || who != "vault:robert" {
		t.Errorf("userpass bob with the entity robert: %q, %v", who, err)
	}
	// A token made by hand names what its maker said, behind "token-".
	if who, _, err := s.AgentToken(t, "agent-a").Identity(ctx(t)); err != nil || who != "vault:token-agent-a" {
		t.Errorf("agent token: %q, %v", who, err)
	}
	// The root token names no one.
	if who, _, err := s.Root.Identity(ctx(t)); !errors.Is(err, vault.ErrNoPerson) {
		t.Errorf("root: %q, %v; want ErrNoPerson", who, err)
	}
}

// Vault's audit device records the mint, the verify and the claim with
// the identity of who asked (the approver, the agent machine), and no
// token, MAC or grant message in clear (Vault HMACs them).
func TestAuditDevice(t *testing.T) {
	s := vaulttest.Start(t)
	log := s.EnableAudit(t)
	g, aliceC := mint(t, s)
	agentC := s.AgentToken(t, "agent-a")
	agent := custody(agentC)
	if err := agent.Verify(ctx(t), g, call, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := agent.Claim(ctx(t), g); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ path, who string }
	got := map[seen]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			Auth struct {
				DisplayName string `json:"display_name"`
				ClientToken string `json:"client_token"`
			} `json:"auth"`
			Request struct {
				Path string `json:"path"`
			} `json:"request"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line: %v", err)
		}
		if e.Type != "request" {
			continue
		}
		p := e.Request.Path
		if strings.HasPrefix(p, "secret/data/loopguard/claims/") {
			p = "claims"
		}
		got[seen{p, e.Auth.DisplayName}] = true
		if e.Auth.ClientToken != "" && !strings.HasPrefix(e.Auth.ClientToken, "hmac-sha256:") {
			t.Errorf("a client token in clear in the audit log: %.12s...", e.Auth.ClientToken)
		}
	}
	for _, want := range []seen{
		{"transit/hmac/loopguard", "userpass-alice"},
		{"transit/verify/loopguard", "token-agent-a"},
		{"claims", "token-agent-a"},
	} {
		if !got[want] {
			t.Errorf("no audit record of %s by %s; have %v", want.path, want.who, got)
		}
	}
	msg, err := g.SignedFor(call)
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{
		"alice's token": aliceC.Token, "the agent's token": agentC.Token, "the root token": s.RootToken,
		"the grant's MAC": base64.StdEncoding.EncodeToString(g.MAC), "the grant message": base64.StdEncoding.EncodeToString(msg),
	} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("%s appears in clear in the audit log", name)
		}
	}
}
