//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	webconsole "github.com/loopguard/loopguard/console"
)

// floodTeam has the agent machine c write a record of 1 MiB and n records
// of junk under its own identity, as its token may.
func floodTeam(t *testing.T, c *vault.Custody, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := c.Entity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.KV.Put(ctx, "pending/"+e+"/aaaabig", map[string]any{"record": strings.Repeat("A", 1<<20)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := c.KV.Put(ctx, fmt.Sprintf("pending/%s/zzzz%05d", e, i), map[string]any{"record": "junk"}); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

// stderrOf is the standard error of a command run returned.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// Issue 38, T1 to T4, through the real binaries and a real Vault: machine
// F floods the team (a record of 1 MiB and 2,000 of junk, under its own
// identity); machine A's calls stay visible and approvable on B in team
// pending, in serve --backend vault's queue and in review --backend vault;
// A's `rm -rf` of an absolute path under the cwd it chose shows DANGER on
// B; the identical call, asked again after its approval ran, is approved
// again and runs again; a call alice denied stays denied when bob decides
// it, and bob's team pending says "denied by vault:userpass-alice".
func TestTeamBoundsAndDecisionsPTY(t *testing.T) {
	s := vaulttest.Start(t)
	aliceC, bobC := s.AddApprover(t, "alice"), s.AddApprover(t, "bob")
	a := clitest.VaultHome(t, s, s.AgentToken(t, "agent-machine-a").Token)
	b := clitest.VaultHome(t, s, aliceC.Token)
	bob := clitest.VaultHome(t, s, bobC.Token)
	floodTeam(t, clitest.CustodyOf(s.AgentToken(t, "flooder")), 2000)

	// team pending: A's call listed, open; F's records in a few lines.
	out, err := a.Run(clitest.BashCall("s-flood", "echo visible", "toolu_0"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "no_grant")
	m := regexp.MustCompile(`team approve ([a-z2-7]{24})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pending id in A's message:\n%s", out)
	}
	visible := m[1]
	list, err := b.Run("", "team", "pending")
	if err != nil {
		t.Fatalf("team pending after the flood: %v\n%s%s", err, list, stderrOf(err))
	}
	if !regexp.MustCompile(`(?m)^` + visible + ` .*agent-machine-a .* open +Bash echo visible`).MatchString(list) {
		t.Errorf("A's call is not listed open:\n%s", list)
	}
	if n := strings.Count(list, "unreadable:"); n == 0 || n > 12 || !strings.Contains(list, "this machine published 2001 records") ||
		!strings.Contains(list, "it is larger than 1048576 bytes") {
		t.Errorf("F's records take %d lines:\n%s", n, list)
	}

	// serve --backend vault's queue has it, and approves it.
	t.Setenv("HOME", b.Home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(b.Home, "state"))
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CLAUDECODE", "")
	ctx := context.Background()
	mnt, err := approve.LoadTeam(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cli.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	ge, _ := cli.CurrentGrantEnv()
	tc := &teamConsole{st: st, m: mnt, ttl: 10 * time.Minute, grantTTL: time.Hour, offer: offer{ge}}
	calls, err := tc.Queue(ctx)
	var c *webconsole.Call
	for i := range calls {
		if calls[i].Pending.ID == visible {
			c = &calls[i]
		}
	}
	if err != nil || c == nil {
		t.Fatalf("serve's queue after the flood: %d calls, %v", len(calls), err)
	}
	proof := webconsole.Proof{Passkey: "cred-1", Signed: `{"v":"test"}`, Assertion: "a.b.c"}
	if msg, err := tc.Decide(ctx, *c, webconsole.Decision{Kind: webconsole.Approve}, proof); err != nil {
		t.Fatalf("serve approves: %v", err)
	} else if !strings.Contains(msg, "as vault:userpass-alice") {
		t.Errorf("serve: %s", msg)
	}
	out, err = a.Run(clitest.BashCall("s-flood", "echo visible", "toolu_0b"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "allow", "approved by vault:userpass-alice")

	// review --backend vault: DANGER from any cwd (T1), then a call
	// approved, run, asked again, approved again, run again (T3).
	// A terminal wide enough for the DANGER line's temp path: review
	// folds a wider line (cli.Fold), and the expectations are one line.
	b.Rows, b.Cols = 200, 250
	b.Start("--backend", "vault")
	scr := b.Scr
	scr.Expect(t, `Waiting for calls across the team`)
	approve := func(what string) {
		t.Helper()
		d := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
		scr.Expect(t, `command: "`+regexp.QuoteMeta(what)+`"`)
		scr.Expect(t, `\[q\]uit:`)
		b.Key("a")
		scr.Expect(t, `Type the first 4 characters of the digest to approve`)
		b.Key(d[:4] + "\r")
		scr.Expect(t, `Approved [a-z2-7]+: grant`)
	}
	up := t.TempDir() // one level up from the project it deletes
	rm := strings.Replace(clitest.BashCall("s-t1", "rm -rf "+up+"/app", "toolu_1"), `"cwd":"/tmp"`, `"cwd":"`+up+`"`, 1)
	danger := a.Hold(rm)
	scr.Expect(t, `call: +Bash rm -rf `+regexp.QuoteMeta(up)+`/app\r?\n!!! DANGER: rm deletes recursively outside the project \(`+regexp.QuoteMeta(up)+`/app\)`)
	scr.Expect(t, `\[q\]uit:`)
	b.Key("d")
	scr.Expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	clitest.WantRefused(t, danger, "the rm -rf")
	// Control: a relative delete below the cwd has no DANGER line.
	rel := strings.Replace(clitest.BashCall("s-t1", "rm -rf build", "toolu_1b"), `"cwd":"/tmp"`, `"cwd":"`+up+`"`, 1)
	relHeld := a.Hold(rel)
	scr.Expect(t, `call: +Bash rm -rf build\r?\n(note:[^\n]*\n)*digest: `)
	scr.Expect(t, `\[q\]uit:`)
	b.Key("d")
	scr.Expect(t, `Denied [a-z2-7]+ as vault:userpass-alice`)
	clitest.WantRefused(t, relHeld, "rm -rf build")

	held := a.Hold(clitest.BashCall("s-again", "echo again", "toolu_2"))
	approve("echo again")
	clitest.WantAllowed(t, held, "the held call")
	again := a.Hold(clitest.BashCall("s-again", "echo again", "toolu_3"))
	scr.Expect(t, `state: open again \(approved by vault:userpass-alice, used\)`)
	approve("echo again")
	clitest.WantAllowed(t, again, "the same call approved again")
	b.Quit(`Review ended: 2 approved, 2 denied`)

	list, err = b.Run("", "team", "pending")
	if err != nil || !regexp.MustCompile(`used \(approved by vault:userpass-alice\) +Bash echo again`).MatchString(list) {
		t.Errorf("team pending after the second run: %v\n%s", err, list)
	}

	// T4: alice denies; bob cannot approve or deny over it, and sees it.
	out, err = a.Run(clitest.BashCall("s-deny", "echo denied", "toolu_4"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "no_grant")
	m = regexp.MustCompile(`team approve ([a-z2-7]{24})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pending id:\n%s", out)
	}
	if out, err := b.Run("", "team", "deny", m[1]); err != nil || !strings.Contains(out, "Denied "+m[1]+" as vault:userpass-alice") {
		t.Fatalf("alice denies: %v\n%s", err, out)
	}
	out, err = bob.Run("", "team", "deny", m[1])
	if err == nil || !strings.Contains(stderrOf(err), "pending call "+m[1]+" is denied by vault:userpass-alice: a decision is written once") {
		t.Errorf("bob denies over alice: %v\n%s%s", err, out, stderrOf(err))
	}
	list, err = bob.Run("", "team", "pending")
	if err != nil || !regexp.MustCompile(`(?m)^`+m[1]+` .*denied by vault:userpass-alice +Bash echo denied`).MatchString(list) {
		t.Errorf("bob's team pending: %v\n%s", err, list)
	}
	out, err = a.Run(clitest.BashCall("s-deny", "echo denied", "toolu_5"), "hook", "--event", "PreToolUse")
	clitest.WantDecision(t, out, err, "deny", "denied_by_human")
	if !strings.Contains(out, "vault:userpass-alice") {
		t.Errorf("A is not told alice refused it:\n%s", out)
	}
}
