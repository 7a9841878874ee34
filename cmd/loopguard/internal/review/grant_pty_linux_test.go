//go:build linux

package review

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// chainDir makes a directory under the harness's project (/tmp) for a
// chain to cd into, and returns its path relative to the project.
func chainDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "lg-chain-")
	if err != nil {
		t.Skipf("no /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(dir)
}

// A held chain is approved with g: the narrowest rule of each part is
// listed above the prompt, exactly those rules are minted, the held call
// runs, and the same chain asked again goes through the hook as covered
// by them, part by part. A later chain whose cd a grant covers already
// mints only the rule of its other part. Controls: a chain that differs
// is held; a chain hiding a DANGER part (true && git reset --hard) gets
// no g, and its control (true && ls) does.
func TestReviewChainGrantPTY(t *testing.T) {
	h := clitest.NewHarness(t)
	sub := chainDir(t)
	scr := h.StartWaiting()

	chain := "cd " + sub + " && ls -la"
	held := h.Hold(clitest.BashCall("s-chain", chain, "toolu_1"))
	id := scr.Expect(t, `pending ([a-z2-7]+) \(held`)[1]
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `g approves this call once and grants, for each part of the chain:`)
	cdRule := scr.Expect(t, `  cd `+sub+`\r?\n      grant (Bash\(cd `+sub+`\)@builtin)\r?\n`)[1]
	lsRule := scr.Expect(t, `  ls -la\r?\n      grant (Bash\(ls -la\)@/[^\r\n]+)\r?\n`)[1]
	keys := scr.Expect(t, `(\[a\]pprove[^\n]*\[q\]uit)`)[1]
	if !strings.Contains(keys, "[g]rant the 2 rule(s) above") || strings.Contains(keys, "[w]ider") {
		t.Errorf("the chain's keys: %s", keys)
	}
	scr.Expect(t, ` > `)
	before := h.Typed
	h.Key("g")
	scr.Expect(t, `Approve this call once and grant, as [^,]+, until [^\n]+:\s+`+regexp.QuoteMeta(cdRule)+`\r?\n      the shell's own builtin[^\n]*\n  `+regexp.QuoteMeta(lsRule)+`\r?\n      runs /`)
	scr.Expect(t, `Type the first 4 characters of the digest to approve and grant`)
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+` \(grant [0-9a-f]+\) and granted [0-9a-f]+: `+regexp.QuoteMeta(cdRule)+`, [0-9a-f]+: `+regexp.QuoteMeta(lsRule)+`\. The held call runs now\.`)
	if n := h.Typed - before; n > 6 {
		t.Errorf("granting a chain took %d keystrokes", n)
	}
	clitest.WantAllowed(t, held, "the held chain")

	// The rules minted are the ones shown: grants lists exactly them.
	out, err := h.Run("", "grants")
	if err != nil {
		t.Fatalf("grants: %v\n%s", err, out)
	}
	for _, r := range []string{cdRule, lsRule} {
		if !strings.Contains(out, r) {
			t.Errorf("grants does not list %s:\n%s", r, out)
		}
	}

	// The same chain again, through the hook: covered part by part.
	out, err = h.Run(clitest.BashCall("s-chain", chain, "toolu_2"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) || !strings.Contains(out, "every part of the chain is covered") {
		t.Fatalf("the chain asked again was not covered by the rules minted: %v\n%s", err, out)
	}
	// Control: a chain that differs in one part is held.
	if out, err := h.Run(clitest.BashCall("s-chain", "cd "+sub+" && ls -l", "toolu_3"), "hook", "--event", "PreToolUse"); err == nil {
		t.Errorf("a different chain ran under the rules: %s", out)
	}
	scr.Expect(t, `command: "cd `+sub+` && ls -l"`)
	// Its cd is covered by the grant minted above: only ls -l's rule is
	// offered, and the cd's grant is named.
	scr.Expect(t, `  cd `+sub+`\r?\n      covered by grant [0-9a-f]+: `+regexp.QuoteMeta(cdRule))
	scr.Expect(t, `  ls -l\r?\n      grant Bash\(ls -l\)@/`)
	scr.Expect(t, `\[g\]rant the 1 rule\(s\) above`)
	scr.Expect(t, ` > `)
	h.Key("s")
	scr.Expect(t, `Skipped`)

	// Attack: a chain hiding a DANGER part. No g, and g says why.
	if out, err := h.Run(clitest.BashCall("s-chain", "true && git reset --hard", "toolu_4"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("true && git reset --hard ran: %s", out)
	}
	scr.Expect(t, `command: "true && git reset --hard"`)
	if keys := scr.Expect(t, `(\[a\]pprove[^\n]*\[q\]uit)`)[1]; strings.Contains(keys, "[g]rant") || strings.Contains(keys, "[w]ider") {
		t.Errorf("a grant offered for a chain with a DANGER part: %s", keys)
	}
	scr.Expect(t, ` > `)
	h.Key("g")
	scr.Expect(t, "No rule is offered for a chain with a DANGER part \\(the part `git reset --hard`: git reset --hard discards changes\\)")
	scr.Expect(t, ` > `)
	h.Key("s")
	scr.Expect(t, `Skipped`)

	// Control: the same shape with a harmless part is offered g.
	if out, err := h.Run(clitest.BashCall("s-chain", "true && ls", "toolu_5"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("true && ls ran with no grant: %s", out)
	}
	scr.Expect(t, `command: "true && ls"`)
	scr.Expect(t, `  true\r?\n      grant Bash\(true\)@builtin`)
	scr.Expect(t, `\[g\]rant the 2 rule\(s\) above`)
	scr.Expect(t, ` > `)
	h.Quit(`Review ended: 1 approved, 0 denied, 2 skipped`)
}

// w grants the rule one step wider than the command (program, subcommand,
// *), shown on the prompt beside the exact rule; the held call runs, and
// another call of the same subcommand is covered. Controls: the wider
// rule never covers go test -exec (an option that runs a program), nor
// another subcommand; rm -rf build (a file writer) is offered no wider
// rule.
func TestReviewWiderGrantPTY(t *testing.T) {
	h := clitest.NewHarness(t)
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Skip("no go in /usr/local/go/bin")
	}
	scr := h.StartWaiting()

	held := h.Hold(clitest.BashCall("s-wide", "go test -v ./...", "toolu_1"))
	id := scr.Expect(t, `pending ([a-z2-7]+) \(held`)[1]
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	m := scr.Expect(t, `\[g\]rant (Bash\(go test -v \./\.\.\.\)@/\S+)\s+\[w\]ider grant (Bash\(go test \*\)@/\S+)\s+\[d\]eny`)
	exact, wide := m[1], m[2]
	scr.Expect(t, ` > `)
	before := h.Typed
	h.Key("w")
	scr.Expect(t, `Approve this call once and grant, as [^,]+, until [^\n]+:\s+`+regexp.QuoteMeta(wide)+`\r?\n`)
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+` \(grant [0-9a-f]+\) and granted [0-9a-f]+: `+regexp.QuoteMeta(wide)+`\. The held call runs now\.`)
	if n := h.Typed - before; n > 6 {
		t.Errorf("a wider grant took %d keystrokes", n)
	}
	clitest.WantAllowed(t, held, "the held call")
	if out, _ := h.Run("", "grants"); !strings.Contains(out, wide) || strings.Contains(out, exact) {
		t.Errorf("grants after w: want %s only:\n%s", wide, out)
	}

	out, err := h.Run(clitest.BashCall("s-wide", "go test -run TestX ./pkg", "toolu_2"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("another go test was not covered by %s: %v\n%s", wide, err, out)
	}
	// Controls: what the wider rule never covers, each held for review.
	for i, cmd := range []string{"go test -exec evil ./...", "go test -toolexec evil ./...", "go run ./evil"} {
		if out, err := h.Run(clitest.BashCall("s-wide", cmd, "toolu_c"+string(rune('0'+i))), "hook", "--event", "PreToolUse"); err == nil {
			t.Errorf("%s ran under %s: %s", cmd, wide, out)
		}
		scr.Expect(t, `command: "`+regexp.QuoteMeta(cmd)+`"`)
		scr.Expect(t, ` > `)
		h.Key("s")
		scr.Expect(t, `Skipped`)
	}

	// Attack: rm -rf build is offered no wider rule (here, under the
	// project /tmp, it has a DANGER line too; in a project, rm is a file
	// writer, whose * scope refuses: TestWider); w says so.
	if out, err := h.Run(clitest.BashCall("s-wide", "rm -rf build", "toolu_3"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("rm -rf build ran: %s", out)
	}
	scr.Expect(t, `command: "rm -rf build"`)
	if keys := scr.Expect(t, `(\[a\]pprove[^\n]*\[q\]uit)`)[1]; strings.Contains(keys, "[w]ider") {
		t.Errorf("a wider rule offered for rm -rf build: %s", keys)
	}
	scr.Expect(t, ` > `)
	h.Key("w")
	scr.Expect(t, `No wider rule is offered for (this call|a call with a DANGER line)`)
	scr.Expect(t, ` > `)
	h.Quit(`Review ended: 1 approved, 0 denied, 3 skipped`)
}
