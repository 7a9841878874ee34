package vault_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// approval has approver c mint the exact approval of p, under principal.
func approval(t *testing.T, c *vault.Client, p *state.Pending, principal string) string {
	t.Helper()
	g, err := transit(c).Mint(ctx(t), token.Grant{Principal: principal, Agent: p.Agent, Session: p.Session,
		Tool: p.Tool, ArgHash: p.Digest, Scope: token.ScopeCall, Expiry: time.Now().Add(time.Minute)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return g.String()
}

// find is the entry of list at key, or nil.
func find(list []vault.TeamPending, key string) *vault.TeamPending {
	for i := range list {
		if list[i].Key == key {
			return &list[i]
		}
	}
	return nil
}

// flood has machine c write n records of junk under its own identity, as
// its token may (8 writers at once); it returns c's entity.
func flood(t *testing.T, c *vault.Custody, n int, data func(i int) map[string]any) string {
	t.Helper()
	e, err := c.Entity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := c.KV.Put(context.Background(), fmt.Sprintf("pending/%s/zzzz%05d", e, i), data(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return e
}

// One enrolled machine, writing only under its own identity, cannot hide
// another machine's call from approvers (issue 38, T2): machine F
// publishes a record of 1 MiB, 3,000 records of junk and a record nested
// a level down; machine B's call is still listed, verified and open, read
// within the time an approver's command allows, and alice's approval of
// it reaches B. F's records are flagged in a bounded number of lines that
// say what was not read. The honest hook refuses to publish a record
// larger than a reader reads. Control: B's call before the flood, and an
// honest call of F's own published before the flood is read too.
func TestTeamOneMachineCannotBlind(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC := s.AddApprover(t, "alice")
	alice := custody(aliceC)
	b, f := custody(s.AgentToken(t, "machine-b")), custody(s.AgentToken(t, "flooder"))
	eb, err := b.Entity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	pb := pendingCall(t, "sb", "make deploy", "/work/b")
	if err := b.Publish(ctx(t), pb); err != nil {
		t.Fatal(err)
	}
	keyB := eb + "/" + pb.ID
	list, err := alice.TeamList(ctx(t))
	if tp := find(list, keyB); err != nil || tp == nil || tp.Err != nil || !tp.Open() {
		t.Fatalf("control: B's call before the flood: %+v, %v", tp, err)
	}
	// F's own honest call (its key sorts before the junk's "zzzz...").
	pf := pendingCall(t, "sf", "echo honest", "/work/f")
	if err := f.Publish(ctx(t), pf); err != nil {
		t.Fatal(err)
	}

	// The honest hook refuses a record larger than a reader reads.
	huge := pendingCall(t, "sf", "echo "+strings.Repeat("x", 900<<10), "/work/f")
	if err := f.Publish(ctx(t), huge); err == nil || !strings.Contains(err.Error(), "too large to publish") {
		t.Errorf("a %d-byte call published: %v", len(huge.Descriptor), err)
	}

	ef := flood(t, f, 3000, func(i int) map[string]any { return map[string]any{"record": fmt.Sprintf("junk %d", i)} })
	big := map[string]any{"record": strings.Repeat("A", 1<<20), "call": "x"}
	if err := f.KV.Put(ctx(t), "pending/"+ef+"/aaaabig", big); err != nil {
		t.Fatal(err)
	}
	if err := f.KV.Put(ctx(t), "pending/"+ef+"/aaaanest/deeper", map[string]any{"record": "x"}); err != nil {
		t.Fatal(err)
	}

	// Within an approver command's deadline (cmd/loopguard's vaultTimeout).
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	list, err = alice.TeamList(cctx)
	if err != nil {
		t.Fatalf("the team's list after the flood: %v (after %s)", err, time.Since(start))
	}
	t.Logf("listed in %s, %d entries", time.Since(start), len(list))
	tp := find(list, keyB)
	if tp == nil || tp.Err != nil || !tp.Open() || tp.Pending.Digest != pb.Digest {
		t.Fatalf("B's call after the flood: %+v", tp)
	}
	if tp := find(list, ef+"/"+pf.ID); tp == nil || tp.Err != nil {
		t.Errorf("control: F's own honest call, read before its bounds: %+v", tp)
	}
	var fLines []string
	for _, tp := range list {
		if tp.Machine == ef && tp.Err != nil {
			fLines = append(fLines, tp.Key+": "+tp.Err.Error())
		}
	}
	all := strings.Join(fLines, "\n")
	if len(fLines) > 12 {
		t.Errorf("F's records take %d lines:\n%s", len(fLines), all)
	}
	for _, want := range []string{
		ef + "/aaaabig: it is larger than 1048576 bytes",
		ef + "/aaaanest/: not under an agent machine's identity",
		ef + "/: this machine published 3003 records; 256 of them",
		"more unreadable records of this machine not listed",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("F's lines lack %q:\n%s", want, all)
		}
	}
	// The ids resolve too: B's key is among the team's keys.
	keys, err := alice.TeamKeys(ctx(t))
	if err != nil || !strings.Contains(strings.Join(keys, " "), keyB) {
		t.Errorf("B's key among %d keys: %v", len(keys), err)
	}

	// Approvable: alice's approval reaches B.
	tok := approval(t, aliceC, pb, "vault:userpass-alice")
	if err := alice.Decide(ctx(t), keyB, tok, "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatalf("alice approves B's call: %v", err)
	}
	if got, _, _, err := b.Fetch(ctx(t), pb.ID); err != nil || got != tok {
		t.Fatalf("B reads its approval: %v", err)
	}
}

// A machine's records past the bytes a listing reads of it (16 MiB: 20
// records just under 1 MiB each) are not read, said on one line; another
// machine's call is read all the same.
func TestTeamMachineByteBound(t *testing.T) {
	s := vaulttest.Start(t)
	alice := custody(s.AddApprover(t, "alice"))
	b, f := custody(s.AgentToken(t, "machine-b")), custody(s.AgentToken(t, "flooder"))
	pb := pendingCall(t, "sb", "make deploy", "/work/b")
	if err := b.Publish(ctx(t), pb); err != nil {
		t.Fatal(err)
	}
	eb, _ := b.Entity(ctx(t))
	ef := flood(t, f, 20, func(int) map[string]any { return map[string]any{"record": strings.Repeat("B", 1000<<10)} })
	list, err := alice.TeamList(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if tp := find(list, eb+"/"+pb.ID); tp == nil || tp.Err != nil {
		t.Fatalf("B's call: %+v", tp)
	}
	// F's lines under its key "E/": its unreadable records counted, and
	// the bound.
	var bound []string
	for _, tp := range list {
		if tp.Key == ef+"/" && tp.Err != nil {
			bound = append(bound, tp.Err.Error())
		}
	}
	if all := strings.Join(bound, "\n"); !strings.Contains(all, "this machine published 20 records") || !strings.Contains(all, "the other 3 are not shown") {
		t.Fatalf("F's bound: %q", bound)
	}
}

// Records expire (issue 38, T2): the reader deletes a record Vault wrote
// longer ago than its TTL, all its versions, so it leaves the listing for
// good; a call published again is new. Control: a fresh record stays.
func TestTeamRecordsExpire(t *testing.T) {
	s := vaulttest.Start(t)
	alice := custody(s.AddApprover(t, "alice"))
	alice.RecordTTL = 2 * time.Second
	b := custody(s.AgentToken(t, "machine-b"))
	eb, _ := b.Entity(ctx(t))
	old := pendingCall(t, "sb", "echo old", "/work/b")
	if err := b.Publish(ctx(t), old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	fresh := pendingCall(t, "sb", "echo fresh", "/work/b")
	if err := b.Publish(ctx(t), fresh); err != nil {
		t.Fatal(err)
	}
	list, err := alice.TeamList(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if find(list, eb+"/"+old.ID) != nil {
		t.Error("the expired record is listed")
	}
	if tp := find(list, eb+"/"+fresh.ID); tp == nil || tp.Err != nil {
		t.Errorf("control: the fresh record: %+v", tp)
	}
	keys, err := alice.TeamKeys(ctx(t))
	if err != nil || strings.Contains(strings.Join(keys, " "), old.ID) || !strings.Contains(strings.Join(keys, " "), fresh.ID) {
		t.Errorf("keys after expiry: %v, %v", keys, err)
	}
	// Published again, the call is new: listed.
	if err := b.Publish(ctx(t), old); err != nil {
		t.Fatal(err)
	}
	if tp := find(mustList(t, alice), eb+"/"+old.ID); tp == nil || tp.Err != nil {
		t.Errorf("published again, the call is listed: %+v", tp)
	}
}

func mustList(t *testing.T, c *vault.Custody) []vault.TeamPending {
	t.Helper()
	list, err := c.TeamList(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// A decision is written once (issue 38, T4): alice denies B's call; bob's
// approval is refused with the decision that stands (denied by alice), and
// B still reads alice's refusal. Two approvers deciding one call at once:
// exactly one wins, 12 rounds, and B reads the winner's decision.
func TestTeamDecisionWrittenOnce(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC, bobC := s.AddApprover(t, "alice"), s.AddApprover(t, "bob")
	alice, bob := custody(aliceC), custody(bobC)
	b := custody(s.AgentToken(t, "machine-b"))
	eb, _ := b.Entity(ctx(t))
	p := pendingCall(t, "sb", "make deploy", "/work/b")
	if err := b.Publish(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	key := eb + "/" + p.ID
	if err := alice.Decide(ctx(t), key, "", "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatalf("alice denies: %v", err)
	}
	tok := approval(t, bobC, p, "vault:userpass-bob")
	err := bob.Decide(ctx(t), key, tok, "vault:userpass-bob", time.Time{}, time.Now())
	var de *vault.DecidedError
	if !errors.As(err, &de) || de.Decision == nil || !de.Decision.Denied || de.Decision.Principal != "vault:userpass-alice" {
		t.Fatalf("bob approves over alice's refusal: %v", err)
	}
	if got, by, _, err := b.Fetch(ctx(t), p.ID); err != nil || got != "" || by != "vault:userpass-alice" {
		t.Fatalf("B reads %q, denied by %q, %v", got, by, err)
	}
	tp, err := bob.TeamGet(ctx(t), key)
	if err != nil || tp.Open() || !tp.Decision.Denied {
		t.Fatalf("bob's listing of it: %+v, %v", tp, err)
	}
	// A raw write by bob over it would succeed (approvers are trusted to
	// write with check-and-set): the control that the refusal above is
	// loopguard's check, not Vault's policy refusing bob.
	if err := bob.KV.PutCAS(ctx(t), "approvals/"+key, map[string]any{"denied_by": "vault:userpass-alice"}, tp.Decision.Version); err != nil {
		t.Fatalf("control: bob may write there: %v", err)
	}

	for round := range 12 {
		p := pendingCall(t, fmt.Sprintf("race-%d", round), "make deploy", "/work/b")
		if err := b.Publish(ctx(t), p); err != nil {
			t.Fatal(err)
		}
		key := eb + "/" + p.ID
		tok := approval(t, aliceC, p, "vault:userpass-alice")
		errs := make([]error, 2)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i, d := range []func() error{
			func() error { return alice.Decide(ctx(t), key, tok, "vault:userpass-alice", time.Time{}, time.Now()) },
			func() error { return bob.Decide(ctx(t), key, "", "vault:userpass-bob", time.Time{}, time.Now()) },
		} {
			wg.Add(1)
			go func() { defer wg.Done(); <-gate; errs[i] = d() }()
		}
		close(gate)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, vault.ErrDecided):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners (%v)", round, won, errs)
		}
		got, by, _, _ := b.Fetch(ctx(t), p.ID)
		if (errs[0] == nil) != (got == tok) || (errs[1] == nil) != (by == "vault:userpass-bob") {
			t.Fatalf("round %d: B reads %q/%q for errors %v", round, got, by, errs)
		}
	}
}

// A used approval does not block a new approval of the same call (issue
// 38, T3): alice approves; until B uses it the call is decided (no second
// approval); B claims it, and when B publishes the identical call again it
// is open again and alice's second approval is written and read by B, a
// new grant. Controls: used but not asked again, the call stays decided;
// an approval expired unused opens the call again the same way.
func TestTeamReapproval(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC := s.AddApprover(t, "alice")
	alice := custody(aliceC)
	b := custody(s.AgentToken(t, "machine-b"))
	eb, _ := b.Entity(ctx(t))
	p := pendingCall(t, "sb", "make deploy", "/work/b")
	if err := b.Publish(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	key := eb + "/" + p.ID
	first := approval(t, aliceC, p, "vault:userpass-alice")
	if err := alice.Decide(ctx(t), key, first, "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Approved, not used: decided.
	if err := b.Publish(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	if err := alice.Decide(ctx(t), key, approval(t, aliceC, p, "vault:userpass-alice"), "vault:userpass-alice", time.Time{}, time.Now()); !errors.Is(err, vault.ErrDecided) {
		t.Fatalf("a second approval while the first is unused: %v", err)
	}
	// B uses it.
	g, err := token.Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Claim(ctx(t), g); err != nil {
		t.Fatal(err)
	}
	tp, err := alice.TeamGet(ctx(t), key)
	if err != nil || tp.Open() || !tp.Decision.Used {
		t.Fatalf("used, not asked again: %+v, %v", tp, err)
	}
	// B asks again: open again, and a second approval is written.
	time.Sleep(10 * time.Millisecond)
	if err := b.Publish(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	list := mustList(t, alice)
	if tp := find(list, key); tp == nil || !tp.Open() || tp.Decision == nil || !tp.Decision.Used {
		t.Fatalf("asked again: %+v", tp)
	}
	// A grant has no nonce and its expiry is in whole seconds: minted in
	// the same second as the first, the second would be the very grant B
	// used. A human approves again seconds later; so does this test.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	second := approval(t, aliceC, p, "vault:userpass-alice")
	if err := alice.Decide(ctx(t), key, second, "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatalf("the second approval: %v", err)
	}
	if got, _, _, err := b.Fetch(ctx(t), p.ID); err != nil || got != second || got == first {
		t.Fatalf("B reads %v", err)
	}
	g2, _ := token.Parse(second)
	if err := b.Claim(ctx(t), g2); err != nil {
		t.Fatalf("B uses the second approval: %v", err)
	}

	// Expired unused: open again once asked again.
	q := pendingCall(t, "sb", "make test", "/work/b")
	if err := b.Publish(ctx(t), q); err != nil {
		t.Fatal(err)
	}
	qk := eb + "/" + q.ID
	short, err := transit(aliceC).Mint(ctx(t), token.Grant{Principal: "vault:userpass-alice", Agent: q.Agent, Session: q.Session,
		Tool: q.Tool, ArgHash: q.Digest, Scope: token.ScopeCall, Expiry: time.Now().Add(time.Second)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.Decide(ctx(t), qk, short.String(), "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if tp, _ := alice.TeamGet(ctx(t), qk); tp == nil || tp.Open() || !tp.Decision.Void {
		t.Fatalf("expired, not asked again: %+v", tp)
	}
	if err := b.Publish(ctx(t), q); err != nil {
		t.Fatal(err)
	}
	if err := alice.Decide(ctx(t), qk, approval(t, aliceC, q, "vault:userpass-alice"), "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatalf("approved again after the first expired: %v", err)
	}
}
