//go:build linux

package review

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/confine"
)

// Under the jail grant, a call that leaves the jail for the network alone
// (curl) is held; review offers n, its exact command pinned with
// +network:443, and no g; the line above the prompt says it also reaches
// services on this machine and the local network; n approves the call
// and mints exactly that rule, which grants lists, and the same call
// asked again runs under it, confined with the network to port 443.
// Controls: npm ci, which runs the project's install scripts, is offered
// no n, and the line names the form that runs none.
func TestReviewNetworkGrantPTY(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skip("no Landlock: no jail")
	}
	h := clitest.NewHarness(t)
	// A project apart from the home (a project that holds the home gets
	// no jail).
	proj, err := os.MkdirTemp("/tmp", "lg-net-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(proj) })
	h.Env = append(h.Env, "CLAUDE_PROJECT_DIR="+proj)
	if out, err := h.Run("", "init", "--user"); err != nil {
		t.Fatalf("init with the jail: %v\n%s", err, out)
	}
	bashCall := func(session, cmd, id string) string {
		return strings.Replace(clitest.BashCall(session, cmd, id), `"cwd":"/tmp"`, `"cwd":"`+proj+`"`, 1)
	}
	scr := h.StartWaiting()

	cmd := "curl -fsS https://example.com/x"
	held := h.Hold(bashCall("s-net", cmd, "toolu_1"))
	id := scr.Expect(t, `pending ([a-z2-7]+) \(held`)[1]
	digest := scr.Expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.Expect(t, `n approves this call once and grants\s+Bash\(curl\s+-fsS\s+https://example\.com/x\)@/\S+\s+\+network:443:\s+network:\s+TCP\s+connect\s+to\s+port\s+443\s+\(no\s+listener\)\s+and\s+UDP;\s+it\s+also\s+reaches\s+services\s+on\s+this\s+machine\s+and\s+the\s+local\s+network`)
	keys := scr.Expect(t, `(\[a\]pprove[^$]*?\[q\]uit)`)[1]
	rule := regexp.MustCompile(`\[n\]etwork grant (Bash\(curl -fsS https://example\.com/x\)@/\S+ \+network:443)`).FindStringSubmatch(keys)
	if rule == nil || strings.Contains(keys, "[g]rant") || strings.Contains(keys, "[w]ider") {
		t.Fatalf("the keys for a call that needs the network: %s", keys)
	}
	scr.Expect(t, ` > `)
	h.Key("n")
	scr.Expect(t, `Approve this call once and grant, as [^,]+, until [^\n]+:\s+`+regexp.QuoteMeta(rule[1])+`\r?\n`)
	scr.Expect(t, `network: TCP connect to port 443`)
	h.Key(digest[:4] + "\r")
	scr.Expect(t, `Approved `+id+` \(grant [0-9a-f]+\) and granted [0-9a-f]+: `+regexp.QuoteMeta(rule[1])+`\. The held call runs now\.`)
	clitest.WantAllowed(t, held, "the held call")
	if out, _ := h.Run("", "grants"); !strings.Contains(out, rule[1]) {
		t.Errorf("grants after n: want %s:\n%s", rule[1], out)
	}
	out, err := h.Run(bashCall("s-net", cmd, "toolu_2"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) || !strings.Contains(out, `network:443`) {
		t.Errorf("the same call asked again was not run under %s: %v\n%s", rule[1], err, out)
	}

	// Control: npm ci runs the project's scripts: no n, and why.
	if out, err := h.Run(bashCall("s-net", "npm ci", "toolu_3"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("npm ci ran: %s", out)
	}
	scr.Expect(t, `command: "npm ci"`)
	scr.Expect(t, `No network grant is offered: no standing network for npm ci`)
	if keys := scr.Expect(t, `(\[a\]pprove[^\n]*\[q\]uit)`)[1]; strings.Contains(keys, "[n]") {
		t.Errorf("n offered for npm ci: %s", keys)
	}
	scr.Expect(t, ` > `)
	h.Quit(`Review ended: 1 approved, 0 denied, 0 skipped`)
}
