//go:build linux

package review

import (
	"context"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/token"
)

// review --backend vault on machine B (alice's Vault login, its own HOME)
// shows the calls machine A's hook holds (A: an agent-policy token, no
// keyring, no state shared), rendered as local calls are, and decides them
// with review's keys through Vault: a approves once, d refuses, g approves
// and grants a scoped rule that A's next matching call finds in Vault; the
// prompts name alice's Vault identity; grants on B lists the grant and
// revoke on B takes it away from A.
func TestReviewVaultPTY(t *testing.T) {
	s := vaulttest.Start(t)
	a := clitest.VaultHome(t, s, s.AgentToken(t, "agent-machine-a").Token)
	b := clitest.VaultHome(t, s, s.AddApprover(t, "alice").Token)

	// Not held: the message names the command that works with Vault.
	out, err := a.Run(clitest.BashCall("s-team", "echo first", "toolu_0"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "no_grant")
	if !strings.Contains(out, "loopguard review --backend vault") || !strings.Contains(out, "loopguard team approve ") {
		t.Errorf("the held message does not name the Vault approver commands:\n%s", out)
	}
	if strings.Contains(out, "`loopguard approve ") {
		t.Errorf("the held message names the local approve:\n%s", out)
	}

	b.Start("--backend", "vault")
	scr := b.Scr
	scr.Expect(t, `decided as vault:userpass-alice`)
	// The first call is not held: it is queued all the same (its agent
	// retries after an approval); skip it.
	scr.Expect(t, `command: "echo first"`)
	scr.Expect(t, `After an approval a hook that waits runs the call once`)
	scr.Expect(t, `\[q\]uit:`)
	b.Key("s")
	scr.Expect(t, `Waiting for calls across the team`)

	held := a.Hold(clitest.BashCall("s-team", "echo held", "toolu_1"))
	// The machine as Vault knows it (the identity team enroll gave it),
	// not as the record says.
	scr.Expect(t, `machine: agent-machine-a \(Vault identity [0-9a-f-]+\)`)
	id := scr.Expect(t, `pending ([a-z2-7]+) \(`)[1]
	// The header (with the digest) comes before the call in full.
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	// That the hook waits is the machine's word, in its block.
	scr.Expect(t, `The agent machine says \(its own words; loopguard checked none of this\):`)
	scr.Expect(t, `  \| its hook waits for your answer until `)
	scr.Expect(t, `command: "echo held"`)
	scr.Expect(t, `\[a\]pprove  \[g\]rant Bash\(echo held\)@[^ ]+  \[d\]eny  \[s\]kip  \[v\]iew  \[q\]uit:`)
	b.Key("a")
	scr.Expect(t, `Approve this exact call once, for 10m0s, as vault:userpass-alice\?`)
	scr.Expect(t, `Type the first 4 characters of the digest to approve`)
	b.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+`: grant [0-9a-f]+, single use, valid until [^.]*\. The waiting hook on agent-machine-a runs it once\.`)
	clitest.WantAllowed(t, held, "the held call")

	// d refuses a held call; A's hook is told a human refused it.
	refused := a.Hold(clitest.BashCall("s-team", "echo refused", "toolu_2"))
	scr.Expect(t, `command: "echo refused"`)
	scr.Expect(t, `\[q\]uit:`)
	b.Key("d")
	scr.Expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	select {
	case r := <-refused:
		clitest.WantDecision(t, r.Out, r.Err, "deny", "denied_by_human")
		if !strings.Contains(r.Out, "vault:userpass-alice") {
			t.Errorf("the refusal does not name alice: %s", r.Out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the refused call was not answered")
	}

	// g: approve once and grant; the grant lives in Vault.
	granted := a.Hold(clitest.BashCall("s-team", "ls -la", "toolu_3"))
	gd := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `command: "ls -la"`)
	rule := scr.Expect(t, `\[g\]rant (Bash\(ls -la\)@/[^ ]+)  \[d\]eny`)[1]
	b.Key("g")
	scr.Expect(t, `Approve this call once and grant, as vault:userpass-alice, until [^\n]+:\s+`+regexp.QuoteMeta(rule))
	scr.Expect(t, `Type the first 4 characters of the digest to approve and grant \(the call's digest, shown above\)`)
	b.Key(gd[:4] + "\r")
	scr.Expect(t, `granted ([0-9a-f]+): `+regexp.QuoteMeta(rule)+`\. The waiting hook on [^\n]+ runs it once\.`)
	clitest.WantAllowed(t, granted, "the call approved with g")
	b.Quit(`Review ended: 2 approved, 1 denied, 1 skipped`)

	// team deny takes a unique prefix of the id, as the local deny does;
	// an ambiguous or unknown prefix changes nothing.
	out, err = a.Run(clitest.BashCall("s-team", "echo later", "toolu_6"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "no_grant")
	later := regexp.MustCompile(`team approve ([a-z2-7]{24})`).FindStringSubmatch(out)
	if later == nil {
		t.Fatalf("no pending id in A's message:\n%s", out)
	}
	if out, err := b.Run("", "team", "deny", "zzzzzz"); err == nil {
		t.Errorf("team deny of an unknown prefix succeeded: %s", out)
	}
	if out, err := b.Run("", "team", "deny", later[1][:6]); err != nil || !strings.Contains(out, "Denied "+later[1]+" as vault:userpass-alice") {
		t.Fatalf("team deny by prefix: %v\n%s", err, out)
	}
	out, err = a.Run(clitest.BashCall("s-team", "echo later", "toolu_7"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "denied_by_human")

	// A's next matching call, in a new session of the project, runs on
	// the grant from Vault without a decision.
	out, err = a.Run(clitest.BashCall("s-team-2", "ls -la", "toolu_4"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "allow", "granted by vault:userpass-alice")
	// A's disk holds no scoped grant: it came from Vault.
	if list, _ := a.Run("", "grants", "--json"); strings.Contains(list, `"kind": "scoped"`) && !strings.Contains(list, `"path": "vault:`) {
		t.Errorf("a scoped grant on A's disk:\n%s", list)
	}
	list, err := b.Run("", "grants")
	if err != nil || !strings.Contains(list, "Bash(ls -la)") || !strings.Contains(list, "vault:userpass-alice") {
		t.Fatalf("grants on B: %v\n%s", err, list)
	}
	gid := regexp.MustCompile(`(?m)^([0-9a-f]{12}) +scoped +Bash\(ls -la\)`).FindStringSubmatch(list)
	if gid == nil {
		t.Fatalf("no scoped grant row on B:\n%s", list)
	}
	// The agent machine's token cannot revoke it (the policy: read, list).
	if out, err := a.Run("", "revoke", gid[1][:6]); err == nil {
		t.Errorf("revoke with the agent's token succeeded: %s", out)
	}
	out, err = a.Run(clitest.BashCall("s-team-2", "ls -la", "toolu_4b"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "allow", "granted by vault:userpass-alice")
	if out, err := b.Run("", "revoke", gid[1][:6]); err != nil || !strings.Contains(out, "Revoked 1 grant(s).") {
		t.Fatalf("revoke on B: %v\n%s", err, out)
	}
	out, err = a.Run(clitest.BashCall("s-team-2", "ls -la", "toolu_5"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "no_grant")
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
	a := clitest.VaultHome(t, s, agent.Token)
	b := clitest.VaultHome(t, s, alice.Token)
	b.Start("--backend", "vault")
	scr := b.Scr
	scr.Expect(t, `Waiting for calls across the team`)
	// approve approves the call on screen with a and the first characters
	// of digest; it returns the id approved.
	approve := func(digest string) string {
		t.Helper()
		scr.Expect(t, `\[q\]uit:`)
		b.Key("a")
		scr.Expect(t, `Type the first 4 characters of the digest to approve`)
		b.Key(digest[:4] + "\r")
		return scr.Expect(t, `Approved ([a-z2-7]+): grant`)[1]
	}

	// A DANGER call: no [g]rant, and g says why.
	danger := a.Hold(clitest.BashCall("s-danger", "rm -rf /var/tmp/x", "toolu_1"))
	scr.Expect(t, `!!! DANGER`)
	if keys := scr.Expect(t, `(\[a\]pprove[^\n]*\[q\]uit:)`)[1]; strings.Contains(keys, "[g]rant") {
		t.Errorf("g offered on a DANGER call: %s", keys)
	}
	b.Key("g")
	scr.Expect(t, `No rule is offered for a call with a DANGER line; approve it once with a\.`)
	// review drops keys typed before its prompt: wait for it.
	scr.Expect(t, `\[q\]uit:`)
	b.Key("d")
	scr.Expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	clitest.WantRefused(t, danger, "the DANGER call")

	// A newer call does not replace the one on screen: it is redrawn,
	// with the newer one counted, and a approves the call shown.
	x := a.Hold(clitest.BashCall("s-x", "echo x", "toolu_2"))
	xd := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `command: "echo x"`)
	scr.Expect(t, `\[q\]uit:`)
	y := a.Hold(clitest.BashCall("s-y", "echo y", "toolu_3"))
	scr.Expect(t, `The queue changed; redrawing\.`)
	if got := scr.Expect(t, `command: "echo ([xy])"`)[1]; got != "x" {
		t.Fatalf("the newer call replaced the one on screen")
	}
	scr.Expect(t, `\(1 more waiting\)`)
	approve(xd)
	clitest.WantAllowed(t, x, "the call on screen")
	yd := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `command: "echo y"`)
	approve(yd)
	clitest.WantAllowed(t, y, "the newer call, shown after")

	// The machine rewrites its record (another call under the same key)
	// while the human types the digest of the call shown: refused.
	z := a.Hold(clitest.BashCall("s-z", "echo z", "toolu_4"))
	zid := scr.Expect(t, `pending ([a-z2-7]+) \(`)[1]
	zd := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `\[q\]uit:`)
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
	b.Key("a")
	scr.Expect(t, `Type the first 4 characters of the digest to approve`)
	if err := kv.Put(ctx, "pending/"+e+"/"+zid, swapped); err != nil {
		t.Fatal(err)
	}
	b.Key(zd[:4] + "\r")
	scr.Expect(t, `loopguard: error: unreadable: pending/`+e+`/`+zid)
	if strings.Contains(scr.String(), "Approved "+zid) {
		t.Fatal("the rewritten record was approved")
	}
	// Control: the record as it was; the same keys approve it.
	if err := kv.Put(ctx, "pending/"+e+"/"+zid, rec); err != nil {
		t.Fatal(err)
	}
	// The console may show the record it read last (the rewritten one)
	// until it reads it again: view until the restored one is shown (a
	// clean clone's run once found the old one on the only view).
	for i := 0; ; i++ {
		b.Key("v")
		if _, ok := scr.Wait(`command: "echo z"`, 2*time.Second); ok {
			break
		}
		if i == 10 {
			t.Fatalf("the restored record was never shown; the terminal shows:\n%s", scr.String())
		}
	}
	if got := approve(zd); got != zid {
		t.Errorf("approved %s, not the restored %s", got, zid)
	}
	clitest.WantAllowed(t, z, "the record restored")

	// Decided elsewhere while on screen: a key here decides nothing.
	w := a.Hold(clitest.BashCall("s-w", "echo w", "toolu_5"))
	wid := scr.Expect(t, `pending ([a-z2-7]+) \(`)[1]
	scr.Expect(t, `\[q\]uit:`)
	if out, err := b.Run("", "team", "deny", wid); err != nil {
		t.Fatalf("team deny: %v\n%s", err, out)
	}
	b.Key("a")
	scr.Expect(t, `was decided elsewhere meanwhile; moving on\.|The queue changed; redrawing\.`)
	clitest.WantRefused(t, w, "the call decided elsewhere")
	b.Quit(`Review ended: 3 approved, 1 denied, 0 skipped`)
}
