package vault_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/token"
)

const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func transit(c *vault.Client) *vault.Transit {
	return &vault.Transit{C: c, Mount: "transit", Key: "loopguard"}
}

func exactGrant(principal string, now time.Time) token.Grant {
	return token.Grant{Principal: principal, Agent: token.MainAgent, Session: "s1", Tool: "Bash",
		ArgHash: digest, Scope: token.ScopeCall, Expiry: now.Add(10 * time.Minute)}
}

var call = token.Call{Session: "s1", Agent: token.MainAgent, Tool: "Bash", Digest: digest}

// mint has the approver alice mint an exact grant under her Vault identity.
func mint(t *testing.T, s *vaulttest.Server) (*token.Grant, *vault.Client) {
	t.Helper()
	alice := s.AddApprover(t, "alice")
	self, err := alice.LookupSelf(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g, err := transit(alice).Mint(ctx(t), exactGrant(self.Principal(), now), now)
	if err != nil {
		t.Fatal(err)
	}
	// Through the token string, as a grant travels.
	p, err := token.Parse(g.String())
	if err != nil {
		t.Fatal(err)
	}
	return p, alice
}

func TestMintOnApproverVerifyOnAgent(t *testing.T) {
	s := vaulttest.Start(t)
	g, _ := mint(t, s)
	if g.Principal != "vault:userpass-alice" {
		t.Fatalf("principal = %q, want the approver's Vault identity", g.Principal)
	}
	agent := transit(s.AgentToken(t, "agent-a"))
	now := time.Now()
	// Control: the approved call verifies on the agent's token.
	if err := agent.Verify(ctx(t), g, call, now); err != nil {
		t.Fatalf("approved call: %v", err)
	}
	// Another call, another session, a flipped MAC bit, a changed principal,
	// a later expiry: each refused, each for its own reason.
	other := call
	other.Digest = strings.Repeat("f", 64)
	if err := agent.Verify(ctx(t), g, other, now); !errors.Is(err, token.ErrWrongDigest) {
		t.Errorf("other call: %v", err)
	}
	other = call
	other.Session = "s2"
	if err := agent.Verify(ctx(t), g, other, now); !errors.Is(err, token.ErrWrongSession) {
		t.Errorf("other session: %v", err)
	}
	bad := *g
	bad.MAC = append([]byte(nil), g.MAC...)
	bad.MAC[0] ^= 1
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrBadMAC) {
		t.Errorf("flipped MAC: %v", err)
	}
	bad = *g
	bad.Principal = "vault:userpass-mallory"
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrBadMAC) {
		t.Errorf("changed principal: %v", err)
	}
	bad = *g
	bad.Expiry = g.Expiry.Add(24 * time.Hour)
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrBadMAC) {
		t.Errorf("stretched expiry: %v", err)
	}
	if err := agent.Verify(ctx(t), g, call, g.Expiry); !errors.Is(err, token.ErrExpired) {
		t.Errorf("at expiry: %v", err)
	}
	// A token under the keyring's key ID, or another Transit key's, is
	// another key, not a tampered token.
	k, _ := token.NewKeys(make([]byte, token.MasterKeySize))
	bad = *g
	bad.KeyID = k.ID
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrWrongKey) {
		t.Errorf("keyring key id: %v", err)
	}
	bad = *g
	bad.KeyID = (&vault.Transit{Mount: "transit", Key: "other"}).KeyID(1)
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrWrongKey) {
		t.Errorf("other transit key: %v", err)
	}
}

// The agent's token verifies but cannot mint: transit/hmac is 403, and so is
// reading the key.
func TestAgentTokenCannotMint(t *testing.T) {
	s := vaulttest.Start(t)
	agent := transit(s.AgentToken(t, "agent-a"))
	now := time.Now()
	_, err := agent.MintVersion(ctx(t), exactGrant("vault:agent", now), 1, now)
	if !errors.Is(err, vault.ErrDenied) || vault.Reason(err) != vault.ReasonDenied {
		t.Fatalf("agent mint: %v, want 403", err)
	}
	var ve *vault.Error
	if !errors.As(err, &ve) || ve.Status != 403 {
		t.Fatalf("agent mint: %v, want HTTP 403", err)
	}
	if _, err := agent.LatestVersion(ctx(t)); !errors.Is(err, vault.ErrDenied) {
		t.Fatalf("agent reads the key: %v, want 403", err)
	}
	// The probe doctor runs says the same.
	if can, err := agent.CanMint(ctx(t)); can || err != nil {
		t.Fatalf("agent CanMint = %v, %v", can, err)
	}
	if err := agent.CanVerify(ctx(t)); err != nil {
		t.Fatalf("agent CanVerify: %v", err)
	}
	// Control: the approver's token mints, and the probe says so.
	alice := transit(s.AddApprover(t, "alice"))
	if can, err := alice.CanMint(ctx(t)); !can || err != nil {
		t.Fatalf("approver CanMint = %v, %v", can, err)
	}
	if _, err := alice.Mint(ctx(t), exactGrant("vault:userpass-alice", now), now); err != nil {
		t.Fatalf("approver mint: %v", err)
	}
}

// Rotation: a grant names its key version; grants minted before a rotation
// still verify, new ones are minted under the new version.
func TestRotation(t *testing.T) {
	s := vaulttest.Start(t)
	old, alice := mint(t, s)
	if err := s.Root.Do(ctx(t), "POST", "transit/keys/loopguard/rotate", nil, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g, err := transit(alice).Mint(ctx(t), exactGrant("vault:userpass-alice", now), now)
	if err != nil {
		t.Fatal(err)
	}
	if g.KeyID == old.KeyID || g.KeyID != transit(alice).KeyID(2) {
		t.Fatalf("key id after rotation: %s (before %s)", g.KeyID, old.KeyID)
	}
	agent := transit(s.AgentToken(t, "agent-a"))
	for _, x := range []*token.Grant{old, &g} {
		if err := agent.Verify(ctx(t), x, call, now); err != nil {
			t.Errorf("grant under %s: %v", x.KeyID, err)
		}
	}
	// The v2 MAC relabelled as v1 does not verify.
	bad := g
	bad.KeyID = old.KeyID
	if err := agent.Verify(ctx(t), &bad, call, now); !errors.Is(err, token.ErrBadMAC) {
		t.Errorf("v2 mac as v1: %v", err)
	}
}

// Exactly one of 16 concurrent claimers wins each of 100 rounds, each on
// its own connection with the agent's token; the losers are told the grant
// was claimed (not a Vault failure).
func TestClaimOneWinner(t *testing.T) {
	s := vaulttest.Start(t)
	const claimers, rounds = 16, 100
	kvs := make([]*vault.KV, claimers)
	for i := range kvs {
		c := s.AgentToken(t, "agent") // 16 tokens of one machine
		kvs[i] = &vault.KV{C: c, Mount: "secret", Prefix: "loopguard"}
	}
	e, err := custody(kvs[0].C).Entity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		id := e + "/round-" + string(rune('a'+r%26)) + "-" + time.Now().Format("150405.000000000")
		var wins, lost atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, claimers)
		for i := range claimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				switch err := kvs[i].Claim(context.Background(), id, map[string]any{"by": i}); {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, vault.ErrClaimed):
					lost.Add(1)
				default:
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", r, err)
		}
		if wins.Load() != 1 || lost.Load() != claimers-1 {
			t.Fatalf("round %d: %d winners, %d losers", r, wins.Load(), lost.Load())
		}
	}
}

func TestSealedIsDenyReason(t *testing.T) {
	s := vaulttest.Start(t)
	g, _ := mint(t, s)
	agent := transit(s.AgentToken(t, "agent-a"))
	if err := agent.Verify(ctx(t), g, call, time.Now()); err != nil {
		t.Fatalf("control before sealing: %v", err)
	}
	s.Seal(t)
	err := agent.Verify(ctx(t), g, call, time.Now())
	if vault.Reason(err) != vault.ReasonSealed {
		t.Fatalf("sealed: %v (reason %q)", err, vault.Reason(err))
	}
}

func TestRevokedTokenIsDenyReason(t *testing.T) {
	s := vaulttest.Start(t)
	g, _ := mint(t, s)
	c := s.AgentToken(t, "agent-a")
	agent := transit(c)
	if err := agent.Verify(ctx(t), g, call, time.Now()); err != nil {
		t.Fatalf("control before revoking: %v", err)
	}
	s.Revoke(t, c.Token)
	err := agent.Verify(ctx(t), g, call, time.Now())
	if vault.Reason(err) != vault.ReasonDenied {
		t.Fatalf("revoked: %v (reason %q)", err, vault.Reason(err))
	}
}

func TestDownIsDenyReason(t *testing.T) {
	s := vaulttest.Start(t)
	g, _ := mint(t, s)
	agent := transit(s.AgentToken(t, "agent-a"))
	if err := agent.Verify(ctx(t), g, call, time.Now()); err != nil {
		t.Fatalf("control while up: %v", err)
	}
	s.Stop()
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := agent.Verify(c, g, call, time.Now())
	if vault.Reason(err) != vault.ReasonUnavailable {
		t.Fatalf("down: %v (reason %q)", err, vault.Reason(err))
	}
}

// A Vault that accepts the connection and never answers: the deadline is
// kept, and the reason says so.
func TestSlowIsTimeout(t *testing.T) {
	c, err := vault.NewClient("http://"+vaulttest.SilentListener(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g := exactGrant("vault:x", now)
	tr := transit(c)
	g.KeyID = tr.KeyID(1)
	g.MAC = make([]byte, 32)
	cx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err = tr.Verify(cx, &g, call, now)
	if vault.Reason(err) != vault.ReasonTimeout {
		t.Fatalf("slow vault: %v (reason %q)", err, vault.Reason(err))
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("slow vault held the caller %v past a 300 ms deadline", took)
	}
}

func TestNewClientRefusesBadAddress(t *testing.T) {
	for _, a := range []string{"", "127.0.0.1:8200", "file:///x", "http://h:1/v1", "http://h:1?x=1", "unix:///s"} {
		if _, err := vault.NewClient(a, "t"); err == nil {
			t.Errorf("NewClient(%q) accepted", a)
		}
	}
	if _, err := vault.NewClient("https://vault.example.internal:8200", "t"); err != nil {
		t.Errorf("control: %v", err)
	}
}

// One grant check: the keyring key in process, and transit/verify on a
// loopback Vault with the agent's token (kept-alive connection).
func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	b.Run("keyring", func(b *testing.B) {
		k, _ := token.NewKeys(make([]byte, token.MasterKeySize))
		g, err := k.Mint(exactGrant("alice", now), now)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := k.Verify(&g, call, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("vault", func(b *testing.B) {
		s := vaulttest.Start(b)
		alice := transit(s.AddApprover(b, "alice"))
		g, err := alice.Mint(context.Background(), exactGrant("vault:userpass-alice", now), now)
		if err != nil {
			b.Fatal(err)
		}
		agent := transit(s.AgentToken(b, "agent-a"))
		for b.Loop() {
			if err := agent.Verify(context.Background(), &g, call, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Paths built from ids a person typed or a record named stay under the
// prefix: no traversal, no query, no encoded bytes (checked before any
// request, so no server is needed).
func TestKVPathRefused(t *testing.T) {
	c, _ := vault.NewClient("http://127.0.0.1:1", "t")
	kv := &vault.KV{C: c, Mount: "secret", Prefix: "loopguard"}
	for _, id := range []string{"", "..", "a/../../sys", "a?list=true", "a#b", "a%2f", "a b", "a\\b", "é"} {
		if _, err := kv.Get(context.Background(), "pending/"+id); err == nil || vault.Reason(err) != "" {
			t.Errorf("%q: %v, want a refusal before any request", id, err)
		}
	}
	// Control: a real id reaches the (absent) server.
	if _, err := kv.Get(context.Background(), "pending/k3v9x2abqw7dn4ygh5mse6ct"); vault.Reason(err) != vault.ReasonUnavailable {
		t.Errorf("control: %v", err)
	}
}

// The hook asks Vault who its token is once per process (Custody.Entity):
// the cost it adds to a call that publishes, fetches an approval or claims.
func BenchmarkEntity(b *testing.B) {
	s := vaulttest.Start(b)
	c := s.AgentToken(b, "agent-a")
	for b.Loop() {
		if _, err := custody(c).Entity(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
