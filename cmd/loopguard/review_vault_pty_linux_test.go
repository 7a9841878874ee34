//go:build linux

package main

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/token"
)

// vaultHome is a machine sharing the Vault s with token tok: its own HOME
// and state, the Vault backend in its config, no keyring.
func vaultHome(t *testing.T, s *vaulttest.Server, tok string) *reviewHarness {
	t.Helper()
	bin := loopguardBinary(t)
	home := t.TempDir()
	// No keyring: the Vault backend never reads it.
	env := harnessEnv(home, "DBUS_SESSION_BUS_ADDRESS")
	if err := s.WriteConfig(filepath.Join(home, ".config", "loopguard"), tok); err != nil {
		t.Fatal(err)
	}
	return &reviewHarness{t: t, bin: bin, env: env, home: home, scr: &screen{}}
}

func wantDecision(t *testing.T, out string, err error, behavior, reason string) {
	t.Helper()
	if !strings.Contains(out, `"permissionDecision":"`+behavior+`"`) || !strings.Contains(out, reason) {
		t.Errorf("want %s (%s); got %v\n%s", behavior, reason, err, out)
	}
}

// review --backend vault on machine B (alice's Vault login, its own HOME)
// shows the calls machine A's hook holds (A: an agent-policy token, no
// keyring, no state shared), rendered as local calls are, and decides them
// with review's keys through Vault: a approves once, d refuses, g approves
// and grants a scoped rule that A's next matching call finds in Vault; the
// prompts name alice's Vault identity; grants on B lists the grant and
// revoke on B takes it away from A.
func TestReviewVaultPTY(t *testing.T) {
	s := vaulttest.Start(t)
	a := vaultHome(t, s, s.AgentToken(t, "agent-machine-a").Token)
	b := vaultHome(t, s, s.AddApprover(t, "alice").Token)

	// Not held: the message names the command that works with Vault.
	out, err := a.run(bashCall("s-team", "echo first", "toolu_0"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "deny", "no_grant")
	if !strings.Contains(out, "loopguard review --backend vault") || !strings.Contains(out, "loopguard team approve ") {
		t.Errorf("the held message does not name the Vault approver commands:\n%s", out)
	}
	if strings.Contains(out, "`loopguard approve ") {
		t.Errorf("the held message names the local approve:\n%s", out)
	}

	b.start("--backend", "vault")
	scr := b.scr
	scr.expect(t, `decided as vault:userpass-alice`)
	// The first call is not held: it is queued all the same (its agent
	// retries after an approval); skip it.
	scr.expect(t, `command: "echo first"`)
	scr.expect(t, `After an approval a hook that waits runs the call once`)
	scr.expect(t, `\[q\]uit:`)
	b.key("s")
	scr.expect(t, `Waiting for calls across the team`)

	held := a.hold(bashCall("s-team", "echo held", "toolu_1"))
	// The machine as Vault knows it (the identity team enroll gave it),
	// not as the record says.
	scr.expect(t, `machine: agent-machine-a \(Vault identity [0-9a-f-]+\)`)
	id := scr.expect(t, `pending ([a-z2-7]+) \(`)[1]
	// The header (with the digest) comes before the call in full.
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	// That the hook waits is the machine's word, in its block.
	scr.expect(t, `The agent machine says \(its own words; loopguard checked none of this\):`)
	scr.expect(t, `  \| its hook waits for your answer until `)
	scr.expect(t, `command: "echo held"`)
	scr.expect(t, `\[a\]pprove  \[g\]rant Bash\(echo held\)@[^ ]+  \[d\]eny  \[s\]kip  \[v\]iew  \[q\]uit:`)
	b.key("a")
	scr.expect(t, `Approve this exact call once, for 10m0s, as vault:userpass-alice\?`)
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	b.key(digest[:4] + "\r")
	scr.expect(t, `Approved `+id+`: grant [0-9a-f]+, single use, valid until [^.]*\. The waiting hook on agent-machine-a runs it once\.`)
	wantAllowed(t, held, "the held call")

	// d refuses a held call; A's hook is told a human refused it.
	refused := a.hold(bashCall("s-team", "echo refused", "toolu_2"))
	scr.expect(t, `command: "echo refused"`)
	scr.expect(t, `\[q\]uit:`)
	b.key("d")
	scr.expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	select {
	case r := <-refused:
		wantDecision(t, r.out, r.err, "deny", "denied_by_human")
		if !strings.Contains(r.out, "vault:userpass-alice") {
			t.Errorf("the refusal does not name alice: %s", r.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the refused call was not answered")
	}

	// g: approve once and grant; the grant lives in Vault.
	granted := a.hold(bashCall("s-team", "ls -la", "toolu_3"))
	gd := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `command: "ls -la"`)
	rule := scr.expect(t, `\[g\]rant (Bash\(ls -la\)@/[^ ]+)  \[d\]eny`)[1]
	b.key("g")
	scr.expect(t, `Approve this call once and grant, as vault:userpass-alice, until [^\n]+:\s+`+regexp.QuoteMeta(rule))
	scr.expect(t, `Type the first 4 characters of the digest to approve and grant \(the call's digest, shown above\)`)
	b.key(gd[:4] + "\r")
	scr.expect(t, `granted ([0-9a-f]+): `+regexp.QuoteMeta(rule)+`\. The waiting hook on [^\n]+ runs it once\.`)
	wantAllowed(t, granted, "the call approved with g")
	b.quit(`Review ended: 2 approved, 1 denied, 1 skipped`)

	// team deny takes a unique prefix of the id, as the local deny does;
	// an ambiguous or unknown prefix changes nothing.
	out, err = a.run(bashCall("s-team", "echo later", "toolu_6"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "deny", "no_grant")
	later := regexp.MustCompile(`team approve ([a-z2-7]{24})`).FindStringSubmatch(out)
	if later == nil {
		t.Fatalf("no pending id in A's message:\n%s", out)
	}
	if out, err := b.run("", "team", "deny", "zzzzzz"); err == nil {
		t.Errorf("team deny of an unknown prefix succeeded: %s", out)
	}
	if out, err := b.run("", "team", "deny", later[1][:6]); err != nil || !strings.Contains(out, "Denied "+later[1]+" as vault:userpass-alice") {
		t.Fatalf("team deny by prefix: %v\n%s", err, out)
	}
	out, err = a.run(bashCall("s-team", "echo later", "toolu_7"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "deny", "denied_by_human")

	// A's next matching call, in a new session of the project, runs on
	// the grant from Vault without a decision.
	out, err = a.run(bashCall("s-team-2", "ls -la", "toolu_4"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "allow", "granted by vault:userpass-alice")
	// A's disk holds no scoped grant: it came from Vault.
	if list, _ := a.run("", "grants", "--json"); strings.Contains(list, `"kind": "scoped"`) && !strings.Contains(list, `"path": "vault:`) {
		t.Errorf("a scoped grant on A's disk:\n%s", list)
	}
	list, err := b.run("", "grants")
	if err != nil || !strings.Contains(list, "Bash(ls -la)") || !strings.Contains(list, "vault:userpass-alice") {
		t.Fatalf("grants on B: %v\n%s", err, list)
	}
	gid := regexp.MustCompile(`(?m)^([0-9a-f]{12}) +scoped +Bash\(ls -la\)`).FindStringSubmatch(list)
	if gid == nil {
		t.Fatalf("no scoped grant row on B:\n%s", list)
	}
	// The agent machine's token cannot revoke it (the policy: read, list).
	if out, err := a.run("", "revoke", gid[1][:6]); err == nil {
		t.Errorf("revoke with the agent's token succeeded: %s", out)
	}
	out, err = a.run(bashCall("s-team-2", "ls -la", "toolu_4b"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "allow", "granted by vault:userpass-alice")
	if out, err := b.run("", "revoke", gid[1][:6]); err != nil || !strings.Contains(out, "Revoked 1 grant(s).") {
		t.Fatalf("revoke on B: %v\n%s", err, out)
	}
	out, err = a.run(bashCall("s-team-2", "ls -la", "toolu_5"), "hook", "--event", "PreToolUse")
	wantDecision(t, out, err, "deny", "no_grant")
}

// The attacks on review --backend vault, each with its control: a DANGER
// call is offered no rule and g grants none (control: TestReviewVaultPTY's
// g); a call arriving while one is on screen never replaces it (control:
// it is shown and approved next, with its own digest); a record rewritten
// by its machine while the human types the digest is not approved
// (control: restored, the same keys approve it); a call decided elsewhere
// while on screen is decided by no key here.
func TestReviewVaultAttacksPTY(t *testing.T) {
	s := vaulttest.Start(t)
	agent := s.AgentToken(t, "agent-machine-a")
	alice := s.AddApprover(t, "alice")
	a := vaultHome(t, s, agent.Token)
	b := vaultHome(t, s, alice.Token)
	b.start("--backend", "vault")
	scr := b.scr
	scr.expect(t, `Waiting for calls across the team`)
	// approve approves the call on screen with a and the first characters
	// of digest; it returns the id approved.
	approve := func(digest string) string {
		t.Helper()
		scr.expect(t, `\[q\]uit:`)
		b.key("a")
		scr.expect(t, `Type the first 4 characters of the digest to approve`)
		b.key(digest[:4] + "\r")
		return scr.expect(t, `Approved ([a-z2-7]+): grant`)[1]
	}

	// A DANGER call: no [g]rant, and g says why.
	danger := a.hold(bashCall("s-danger", "rm -rf /var/tmp/x", "toolu_1"))
	scr.expect(t, `!!! DANGER`)
	if keys := scr.expect(t, `(\[a\]pprove[^\n]*\[q\]uit:)`)[1]; strings.Contains(keys, "[g]rant") {
		t.Errorf("g offered on a DANGER call: %s", keys)
	}
	b.key("g")
	scr.expect(t, `No rule is offered for a call with a DANGER line; approve it once with a\.`)
	// review drops keys typed before its prompt: wait for it.
	scr.expect(t, `\[q\]uit:`)
	b.key("d")
	scr.expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	wantRefused(t, danger, "the DANGER call")

	// A newer call does not replace the one on screen: it is redrawn,
	// with the newer one counted, and a approves the call shown.
	x := a.hold(bashCall("s-x", "echo x", "toolu_2"))
	xd := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `command: "echo x"`)
	scr.expect(t, `\[q\]uit:`)
	y := a.hold(bashCall("s-y", "echo y", "toolu_3"))
	scr.expect(t, `The queue changed; redrawing\.`)
	if got := scr.expect(t, `command: "echo ([xy])"`)[1]; got != "x" {
		t.Fatalf("the newer call replaced the one on screen")
	}
	scr.expect(t, `\(1 more waiting\)`)
	approve(xd)
	wantAllowed(t, x, "the call on screen")
	yd := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `command: "echo y"`)
	approve(yd)
	wantAllowed(t, y, "the newer call, shown after")

	// The machine rewrites its record (another call under the same key)
	// while the human types the digest of the call shown: refused.
	z := a.hold(bashCall("s-z", "echo z", "toolu_4"))
	zid := scr.expect(t, `pending ([a-z2-7]+) \(`)[1]
	zd := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `\[q\]uit:`)
	kv := &vault.KV{C: agent, Mount: "secret", Prefix: "loopguard"}
	ctx := context.Background()
	e, err := (&vault.Custody{KV: kv}).Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Read as the approver (the agent's token may only write it).
	rec, err := (&vault.KV{C: alice, Mount: "secret", Prefix: "loopguard"}).Get(ctx, "pending/"+e+"/"+zid)
	if err != nil {
		t.Fatal(err)
	}
	swapped := map[string]any{}
	for k, v := range rec {
		swapped[k] = v
	}
	d := token.Descriptor{Tool: "Bash", Cwd: "/tmp", Input: map[string]any{"command": "rm -rf ~"}, Executables: map[string]string{}}
	other, _, err := d.Encodings()
	if err != nil {
		t.Fatal(err)
	}
	swapped["call"] = base64.StdEncoding.EncodeToString(other)
	b.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	if err := kv.Put(ctx, "pending/"+e+"/"+zid, swapped); err != nil {
		t.Fatal(err)
	}
	b.key(zd[:4] + "\r")
	scr.expect(t, `loopguard: error: unreadable: pending/`+e+`/`+zid)
	if strings.Contains(scr.String(), "Approved "+zid) {
		t.Fatal("the rewritten record was approved")
	}
	// Control: the record as it was; the same keys approve it.
	if err := kv.Put(ctx, "pending/"+e+"/"+zid, rec); err != nil {
		t.Fatal(err)
	}
	b.key("v")
	scr.expect(t, `command: "echo z"`)
	if got := approve(zd); got != zid {
		t.Errorf("approved %s, not the restored %s", got, zid)
	}
	wantAllowed(t, z, "the record restored")

	// Decided elsewhere while on screen: a key here decides nothing.
	w := a.hold(bashCall("s-w", "echo w", "toolu_5"))
	wid := scr.expect(t, `pending ([a-z2-7]+) \(`)[1]
	scr.expect(t, `\[q\]uit:`)
	if out, err := b.run("", "team", "deny", wid); err != nil {
		t.Fatalf("team deny: %v\n%s", err, out)
	}
	b.key("a")
	scr.expect(t, `was decided elsewhere meanwhile; moving on\.|The queue changed; redrawing\.`)
	wantRefused(t, w, "the call decided elsewhere")
	b.quit(`Review ended: 3 approved, 1 denied, 0 skipped`)
}

// wantRefused waits for the hook of ch to be told a human refused its call.
func wantRefused(t *testing.T, ch chan hookResult, what string) {
	t.Helper()
	select {
	case r := <-ch:
		wantDecision(t, r.out, r.err, "deny", "denied_by_human")
	case <-time.After(20 * time.Second):
		t.Fatalf("%s was not answered", what)
	}
}
