//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal's master and slave.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// screen collects what the program writes to the terminal.
type screen struct {
	syncBuffer
	off int // where the next expect starts looking
}

// expect waits for re to appear after the last match and returns the
// submatches.
func (s *screen) expect(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		text := s.b.String()[s.off:]
		if loc := rx.FindStringSubmatchIndex(text); loc != nil {
			m := rx.FindStringSubmatch(text)
			s.off += loc[1]
			s.mu.Unlock()
			return m
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("%q did not appear on the terminal; it shows:\n%s", re, s.b.String()[s.off:])
	return nil
}

// reviewHarness runs `loopguard review` on a pseudo-terminal in a private
// HOME, and the hook as the agent's client would.
type reviewHarness struct {
	t     *testing.T
	bin   string
	env   []string
	home  string
	m     *os.File
	scr   *screen
	typed int // bytes typed into review
	done  chan error
	cmd   *exec.Cmd
	rows  uint16 // the terminal's height (0: the pty's default, no size)
	cols  uint16 // its width, with rows (0: 120)
}

// loopguardBinary is the loopguard on PATH (TestMain builds it there).
func loopguardBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("loopguard")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// keyringBinary is loopguardBinary for a test that needs the OS keyring:
// skipped without one (a failure when make test demands one).
func keyringBinary(t *testing.T) string {
	t.Helper()
	if !realKeyring(t) {
		t.Skip("needs the OS keyring: run through scripts/with-keyring (make test)")
	}
	return loopguardBinary(t)
}

func newReviewHarness(t *testing.T) *reviewHarness {
	bin := keyringBinary(t)
	home := t.TempDir()
	h := &reviewHarness{t: t, bin: bin, env: harnessEnv(home), home: home, scr: &screen{}}
	if out, err := h.run("", "init", "--user", "--no-jail"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return h
}

// harnessEnv is this process's environment with HOME and the state in
// home, no colour, and the hooks run as Claude Code runs them, told the
// project (the calls' cwd).
func harnessEnv(home string, drop ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CLAUDECODE", "NO_COLOR", "TERM", "CLAUDE_PROJECT_DIR":
			continue
		}
		if slices.Contains(drop, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "NO_COLOR=1", "TERM=xterm", "CLAUDE_PROJECT_DIR=/tmp")
}

func (h *reviewHarness) run(stdin string, args ...string) (string, error) {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = h.env
	cmd.Dir = h.home
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	return string(out), err
}

// startWaiting runs review with no call held yet, and waits until it says
// so; it returns its screen.
func (h *reviewHarness) startWaiting() *screen {
	h.t.Helper()
	h.start()
	h.scr.expect(h.t, `Waiting for calls`)
	return h.scr
}

// start runs review on a fresh pty.
func (h *reviewHarness) start(args ...string) {
	t := h.t
	m, s := openPTY(t)
	h.m = m
	if h.rows > 0 {
		cols := h.cols
		if cols == 0 {
			cols = 120
		}
		if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: h.rows, Col: cols}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { m.Close() })
	h.cmd = exec.Command(h.bin, append([]string{"review"}, args...)...)
	h.cmd.Env = h.env
	h.cmd.Dir = h.home
	h.cmd.Stdin, h.cmd.Stdout, h.cmd.Stderr = s, s, s
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	h.done = make(chan error, 1)
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		if h.done != nil {
			_ = h.cmd.Process.Kill()
			<-h.done
		}
	})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			h.scr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
}

func (h *reviewHarness) key(s string) {
	h.typed += len(s)
	if _, err := h.m.WriteString(s); err != nil {
		h.t.Fatal(err)
	}
}

func (h *reviewHarness) quit(want string) {
	h.key("q")
	h.scr.expect(h.t, want)
	select {
	case err := <-h.done:
		h.done = nil
		if err != nil {
			h.t.Fatalf("review exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatal("review did not exit on q")
	}
}

func bashCall(session, cmd, id string) string {
	return `{"session_id":"` + session + `","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + cmd + `"},"tool_use_id":"` + id + `"}`
}

type hookResult struct {
	out string
	err error
}

// hold runs the hook in wait mode in the background.
func (h *reviewHarness) hold(payload string) chan hookResult {
	return h.holdFor(payload, "30s")
}

// holdFor is hold with a wait of its own.
func (h *reviewHarness) holdFor(payload, wait string) chan hookResult {
	ch := make(chan hookResult, 1)
	go func() {
		out, err := h.run(payload, "hook", "--event", "PreToolUse", "--wait", wait)
		ch <- hookResult{out, err}
	}()
	return ch
}

// holdProcess starts the hook in wait mode for payload and returns its
// process once the call is listed as held.
func (h *reviewHarness) holdProcess(payload string) *exec.Cmd {
	t := h.t
	cmd := exec.Command(h.bin, "hook", "--event", "PreToolUse", "--wait", "30s")
	cmd.Env, cmd.Dir, cmd.Stdin = h.env, h.home, strings.NewReader(payload)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if out, _ := h.run("", "pending"); strings.Contains(out, "held") {
			return cmd
		}
		if i > 200 {
			t.Fatal("the call was never listed as held")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func wantAllowed(t *testing.T, ch chan hookResult, what string) {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil || !strings.Contains(r.out, `"permissionDecision":"allow"`) {
			t.Fatalf("%s was not allowed: %v\n%s", what, r.err, r.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s was not answered", what)
	}
}

// The review console, driven key by key through a pseudo-terminal: it is
// started first, and calls arrive while it waits. A held call is approved
// with one key, a, and runs without a retry; another is denied with d and
// a reason the agent is shown.
func TestReviewConsolePTY(t *testing.T) {
	h := newReviewHarness(t)

	// A held call whose hook is gone before review starts is not queued;
	// pending --all says it was abandoned (not "wait over", which is
	// review's WAIT OVER: the agent was told, and it stays queued).
	gone := h.holdProcess(bashCall("s-pty", "echo gone", "toolu_0"))
	_ = gone.Process.Kill()
	_ = gone.Wait()
	if out, _ := h.run("", "pending", "--all"); !strings.Contains(out, "abandoned") || strings.Contains(out, "wait over") || !strings.Contains(out, "STATUS") {
		t.Errorf("pending --all after the hook died:\n%s", out)
	}

	scr := h.startWaiting()

	// A call arrives while the console waits; its hook holds it.
	held := h.hold(bashCall("s-pty", "echo held", "toolu_1"))
	heldID := scr.expect(t, `pending ([a-z2-7]+) \(held, [0-9]+s left\)`)[1]
	// The header (the call in one line, its digest) comes before the call
	// in full.
	scr.expect(t, `call:    Bash echo held`)
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `command: "echo held"`)
	scr.expect(t, `\[a\]pprove\s+\[g\]rant Bash\(echo held\)@[^ ]+\s+\[d\]eny\s+\[s\]kip\s+\[v\]iew\s+\[q\]uit`)
	scr.expect(t, `HELD: the agent waits for your answer, [0-9]+s left > `)
	before := h.typed
	h.key("a")
	scr.expect(t, `Approved `+heldID+`: grant [0-9a-f]+, single use, valid until [^.]*\. The held call runs now\.`)
	if n := h.typed - before; n != 1 {
		t.Errorf("one approval of an ordinary call took %d keystrokes; want 1", n)
	}
	t.Logf("keystrokes for one approval in review: %d (digest %.8s... never typed)", h.typed-before, digest)
	wantAllowed(t, held, "the held call")

	// A second call, not held (default mode): denied with d and a reason.
	if out, err := h.run(bashCall("s-pty", "echo refused", "toolu_2"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("a call without approval ran: %s", out)
	}
	refusedID := scr.expect(t, `pending ([a-z2-7]+) \(open\)`)[1]
	scr.expect(t, `command: "echo refused"`)
	scr.expect(t, `\[q\]uit`)
	scr.expect(t, `Not held: after an approval the agent must retry`)
	h.key("d")
	scr.expect(t, `Reason for the agent \(optional; Enter for none\):`)
	h.key("run make test instead\r")
	scr.expect(t, `Denied `+refusedID)
	scr.expect(t, `Waiting for calls`)
	h.quit(`Review ended: 1 approved, 1 denied, 0 skipped`)
	out, _ := h.run(bashCall("s-pty", "echo refused", "toolu_2"), "hook", "--event", "PreToolUse")
	if !strings.Contains(out, "denied_by_human") || !strings.Contains(out, `saying: \"run make test instead\"`) {
		t.Errorf("the denied call: %s", out)
	}
	text := scr.String()
	if strings.Contains(text, "\x1b[") {
		t.Error("colour escapes with NO_COLOR set")
	}
	if !strings.Contains(text, "\a") || !strings.Contains(text, "\x1b]2;loopguard: 1 call(s) waiting\a") {
		t.Error("no bell or title for a new call")
	}
}

// g approves the held call and grants the narrowest rule, shown before it
// is minted; the next identical call runs without a decision, a different
// one does not. A call for which any rule would be refused offers no g.
func TestReviewGrantPTY(t *testing.T) {
	h := newReviewHarness(t)
	scr := h.startWaiting()

	held := h.hold(bashCall("s-grant", "ls -la", "toolu_1"))
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `command: "ls -la"`)
	rule := scr.expect(t, `\[g\]rant (Bash\(ls -la\)@/[^ ]+)\s+\[d\]eny`)[1]
	scr.expect(t, ` > `)
	before := h.typed
	h.key("g")
	scr.expect(t, `Approve this call once and grant, as [^,]+, until [^\n]+:\s+`+regexp.QuoteMeta(rule))
	scr.expect(t, `session: every session of the project /tmp`)
	// The characters asked for are the call's digest's, shown with it:
	// never a second digest.
	scr.expect(t, `Type the first 4 characters of the digest to approve and grant \(the call's digest, shown above\)`)
	h.key(digest[:4] + "\r")
	scr.expect(t, `granted [0-9a-f]+: `+regexp.QuoteMeta(rule)+`\. The held call runs now\.`)
	if n := h.typed - before; n > 6 {
		t.Errorf("approve and grant took %d keystrokes", n)
	}
	wantAllowed(t, held, "the held call")
	out, err := h.run(bashCall("s-grant", "ls -la", "toolu_2"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) || !strings.Contains(out, "granted by") {
		t.Errorf("the next identical call was not covered by the grant: %v\n%s", err, out)
	}
	// The grant is the project's: a new session there (a restart) is
	// covered too.
	out, err = h.run(bashCall("s-grant-restarted", "ls -la", "toolu_5"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("a new session of the project was not covered by the grant: %v\n%s", err, out)
	}
	// Control: another command still needs a decision.
	if out, err := h.run(bashCall("s-grant", "ls -l", "toolu_3"), "hook", "--event", "PreToolUse"); err == nil {
		t.Errorf("a different call ran under the grant: %s", out)
	}
	scr.expect(t, `command: "ls -l"`)
	scr.expect(t, `\[g\]rant Bash\(ls -l\)@`) // control: offered on an ordinary call
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)

	// A dangerous call is shown with a loud warning and its reason; the
	// control above (ls -l) had none. No rule is offered for it.
	if _, err := h.run(bashCall("s-grant", "rm -rf /var/tmp/x", "toolu_6"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("rm ran without an approval")
	}
	scr.expect(t, `!!! DANGER: rm deletes recursively outside the project \(/var/tmp/x\)`)
	scr.expect(t, `command: "rm -rf /var/tmp/x"`)
	if keys := scr.expect(t, `(\[a\]pprove[^\n]*)\r?\n`)[1]; strings.Contains(keys, "[g]rant") {
		t.Errorf("g offered on a DANGER call: %s", keys)
	}
	scr.expect(t, ` > `)
	h.key("g")
	scr.expect(t, `No rule is offered for a call with a DANGER line`)
	// Keys typed before a prompt is drawn are thrown away: wait for it.
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)

	// A chain with a part no rule may cover (an interpreter's script):
	// no rule is offered, and g says why (a chain whose parts can be
	// granted is offered g: TestReviewChainGrantPTY).
	if _, err := h.run(bashCall("s-grant", "ls && python3 x.py", "toolu_4"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("a chained command ran")
	}
	scr.expect(t, `command: "ls && python3 x.py"`)
	prompt := scr.expect(t, `(\[a\]pprove.*\[q\]uit)`)[1]
	if strings.Contains(prompt, "[g]rant") {
		t.Errorf("a rule was offered for a chained command: %s", prompt)
	}
	scr.expect(t, ` > `)
	h.key("g")
	scr.expect(t, "No rule is offered for this call \\(.*a chain is granted part by part only when each part is a simple command \\(.*python3")
	scr.expect(t, ` > `)
	h.quit(`Review ended: 1 approved, 0 denied, 2 skipped`)
	text := scr.String()
	if i, j := strings.Index(text, "!!! DANGER"), strings.Index(text, `command: "ls -l"`); i < j {
		t.Errorf("a warning before the harmless calls (control): %d < %d", i, j)
	}
}

// t approves every call of one turn, shown together, then y: two keys.
func TestReviewTurnPTY(t *testing.T) {
	h := newReviewHarness(t)
	scr := h.startWaiting()
	one := h.hold(bashCall("s-turn", "echo one", "toolu_1"))
	two := h.hold(bashCall("s-turn", "echo two", "toolu_2"))
	// Both must be recorded before the key: wait for the offer.
	for i := 0; ; i++ {
		if out, _ := h.run("", "pending"); strings.Count(out, "held") == 2 {
			break
		}
		if i > 200 {
			t.Fatal("the two calls were never both held")
		}
		time.Sleep(50 * time.Millisecond)
	}
	scr.expect(t, `\[t\]urn: all 2`)
	scr.expect(t, ` > `)
	before := h.typed
	h.key("t")
	scr.expect(t, `--- call 2 of 2 ---`)
	scr.expect(t, `Approve these 2 calls, each once[^\n]*y approves them all, any other key cancels: `)
	h.key("y")
	scr.expect(t, `Approved [a-z2-7]+: grant`)
	scr.expect(t, `Approved [a-z2-7]+: grant`)
	wantAllowed(t, one, "the first call of the turn")
	wantAllowed(t, two, "the second call of the turn")
	if n := h.typed - before; n != 2 {
		t.Errorf("the turn took %d keystrokes; want 2", n)
	}
	h.quit(`Review ended: 2 approved, 0 denied, 0 skipped`)
}

func fileCall(session, tool, path string, input map[string]any, id string) string {
	in := map[string]any{"file_path": path}
	for k, v := range input {
		in[k] = v
	}
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/tmp", "permission_mode": "default", "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_input": in, "tool_use_id": id})
	return string(b)
}

// Edits are shown as diffs in review: an Edit's lines, replace_all's count,
// an edit Claude Code would refuse, escape sequences in the new text
// escaped; after an approval, the file changed (drift) shows what changed
// since. The header with the digest comes before the diff.
func TestReviewDiffPTY(t *testing.T) {
	h := newReviewHarness(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "main.go")
	os.WriteFile(f, []byte("package main\n\nfunc main() {\n\tfoo()\n}\n"), 0o644)
	edit := fileCall("s-diff", "Edit", f, map[string]any{"old_string": "foo()", "new_string": "bar()"}, "toolu_e1")
	if _, err := h.run(edit, "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("an edit ran without an approval")
	}
	h.start()
	scr := h.scr
	scr.expect(t, `call:    Edit `+regexp.QuoteMeta(f))
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `CHANGES: Edit `+regexp.QuoteMeta(f)+`: 1 line\(s\) added, 1 removed`)
	scr.expect(t, `(?s)@@ -1,5 \+1,5 @@.*-\\tfoo\(\)\r?\n\+\\tbar\(\)`)
	scr.expect(t, `\[q\]uit`)
	scr.expect(t, ` > `)
	h.key("a")
	scr.expect(t, `Approved `)
	_ = digest

	// The file changes after the approval: the retry is a drift, shown as
	// what changed since.
	os.WriteFile(f, []byte("package main\n\nfunc main() {\n\tfoo()\n\tevil()\n}\n"), 0o644)
	out, _ := h.run(edit, "hook", "--event", "PreToolUse")
	if !strings.Contains(out, "target_state_drift") {
		t.Fatalf("not a drift: %s", out)
	}
	scr.expect(t, `reason:  target_state_drift`)
	scr.expect(t, `the approved call it resembles: pending [a-z2-7]+`)
	scr.expect(t, `SINCE APPROVAL: `+regexp.QuoteMeta(f)+` changed since the call was approved: 1 line\(s\) added, 0 removed`)
	scr.expect(t, `\+\\tevil\(\)`)
	// It differs from the call approved: a second look.
	scr.expect(t, `SECOND LOOK \(it differs from a call you approved\)`)
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)

	// replace_all: the count of matches.
	g := filepath.Join(dir, "g.go")
	os.WriteFile(g, []byte("x := old\ny := old\nz := old\n"), 0o644)
	h.run(fileCall("s-diff", "Edit", g, map[string]any{"old_string": "old", "new_string": "new", "replace_all": true}, "toolu_e2"), "hook", "--event", "PreToolUse")
	scr.expect(t, `CHANGES: Edit `+regexp.QuoteMeta(g)+`: 3 line\(s\) added, 3 removed; replace_all: 3 match\(es\) replaced`)
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)

	// Attack: the new text drives the terminal (clear screen, CR, bidi).
	// It is shown escaped; an old_string that is not there is said.
	h.run(fileCall("s-diff", "Edit", g, map[string]any{"old_string": "y := old", "new_string": "y := new\x1b[2J\r// \u202egnp.exe"}, "toolu_e3"), "hook", "--event", "PreToolUse")
	scr.expect(t, `\+y := new\\x1b\[2J\\r// \\u\{202e\}gnp\.exe`)
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)
	h.run(fileCall("s-diff", "Edit", g, map[string]any{"old_string": "absent", "new_string": "x"}, "toolu_e4"), "hook", "--event", "PreToolUse")
	scr.expect(t, `old_string does not occur in the file as it is now: Claude Code would refuse the edit`)
	scr.expect(t, ` > `)
	h.quit(`Review ended: 1 approved, 0 denied, 3 skipped`)
	text := scr.String()
	for _, raw := range []string{"\x1b[2J", "\r// ", "\u202e"} {
		if strings.Contains(text, raw) {
			t.Errorf("raw %q reached the terminal", raw)
		}
	}

	// show (no terminal: everything) says the same for the drift and the
	// replace_all.
	out, err := h.run("", "pending", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ ID, Reason, Summary string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows {
		shown, err := h.run("", "show", r.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Reason == "target_state_drift":
			seen++
			if !strings.Contains(shown, "SINCE APPROVAL: "+f+" changed since the call was approved") || !strings.Contains(shown, "+\\tevil()") {
				t.Errorf("show of the drift:\n%s", shown)
			}
		case strings.Contains(shown, `"replace_all": true`) || strings.Contains(shown, "replace_all: true"):
			seen++
			if !strings.Contains(shown, "replace_all: 3 match(es) replaced") {
				t.Errorf("show of replace_all:\n%s", shown)
			}
		}
	}
	if seen != 2 {
		t.Errorf("show checked %d of the 2 calls; pending: %s", seen, out)
	}
}

// A rendering taller than the terminal is paged after its header: the
// digest and the call in one line come first, q stops paging, and the
// header is repeated in short before the prompt. show without a terminal
// prints everything; with one, it goes through $PAGER, header first.
func TestReviewPagedPTY(t *testing.T) {
	h := newReviewHarness(t)
	h.rows = 24
	f := filepath.Join(t.TempDir(), "long.txt")
	var content strings.Builder
	for i := range 300 {
		fmt.Fprintf(&content, "line %d\n", i)
	}
	call := fileCall("s-page", "Write", f, map[string]any{"content": content.String()}, "toolu_p1")
	if _, err := h.run(call, "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("a write ran without an approval")
	}
	h.start()
	scr := h.scr
	id := scr.expect(t, `pending ([a-z2-7]{24}) \(`)[1]
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `-- more: [0-9]+ of [0-9]+ lines shown; Space for more, q to stop --`)
	h.key(" ")
	scr.expect(t, `-- more: `)
	h.key("q")
	scr.expect(t, `more lines not shown; v shows the call again`)
	scr.expect(t, `Write `+regexp.QuoteMeta(f)+` \| 0 danger line\(s\), 0 warning\(s\) \| digest `+digest[:16])
	scr.expect(t, ` > `)
	h.quit(`Review ended`)

	// show: no terminal, everything, header first.
	out, err := h.run("", "show", id)
	if err != nil {
		var ee *exec.ExitError
		errors.As(err, &ee)
		t.Fatalf("show: %v\n%s", err, ee.Stderr)
	}
	if !strings.Contains(out, "+line 299") || strings.Index(out, "digest: ") > strings.Index(out, "CHANGES:") {
		t.Errorf("show without a terminal:\n%.600s", out)
	}
	// show on a terminal: through $PAGER.
	paged := filepath.Join(t.TempDir(), "paged.txt")
	m, s := openPTY(t)
	defer m.Close()
	unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 120})
	cmd := exec.Command(h.bin, "show", id)
	cmd.Env = append(h.env, "PAGER=cat > "+paged)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	go func() { _, _ = io.Copy(io.Discard, m) }()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := os.ReadFile(paged)
	if err != nil || !strings.HasPrefix(string(got), "pending "+id) || !strings.Contains(string(got), "+line 299") {
		t.Errorf("show through the pager: %v\n%.300s", err, got)
	}
}

// bashCallDescribed is bashCall with Bash's description, which is shown
// apart and left out of the digest (policy.ShownOnly).
func bashCallDescribed(session, cmd, description, id string) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": "/tmp", "permission_mode": "default", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd, "description": description}, "tool_use_id": id})
	return string(b)
}

// A missed wait costs nothing: a call whose wait ran out stays in review,
// marked WAIT OVER; one key approves it, and the agent's retry runs, with
// its description reworded too. A retry with another command does not,
// nor does a second retry (single use). A held call whose hook is stopped
// (Claude Code sends SIGTERM on Esc) leaves the queue and is audited as
// held_abandoned; one whose hook is killed leaves it too.
func TestReviewWaitOverPTY(t *testing.T) {
	h := newReviewHarness(t)

	// Esc in the agent: the hook gets SIGTERM while it holds the call.
	esc := h.holdProcess(bashCall("s-wait", "echo abandoned", "toolu_0"))
	if err := esc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = esc.Wait()
	out, err := h.run("", "audit", "--json")
	if err != nil || !strings.Contains(out, `"reason":"held_abandoned"`) || !strings.Contains(out, `"summary":"Bash echo abandoned"`) {
		t.Errorf("no held_abandoned entry for the call abandoned with SIGTERM (%v):\n%s", err, out)
	}

	scr := h.startWaiting()
	late := h.holdFor(bashCallDescribed("s-wait", "echo late >> /tmp/never", "Append a line", "toolu_1"), "2s")
	id := scr.expect(t, `pending ([a-z2-7]+) \(held`)[1]
	scr.expect(t, `HELD: the agent waits for your answer, [0-9]+s left`)
	var told string
	select {
	case r := <-late:
		told = r.out
	case <-time.After(20 * time.Second):
		t.Fatal("the held call's wait did not end")
	}
	for _, want := range []string{"nobody decided, so it did not run", "once they approve it there, retry the identical call"} {
		if !strings.Contains(told, want) {
			t.Errorf("the agent was not told %q:\n%s", want, told)
		}
	}
	// The same call stays on screen; its line says the wait is over, and
	// pending --all says so in the same words; the call abandoned with
	// SIGTERM, which left the queue, is "abandoned" there.
	scr.expect(t, `WAIT OVER: the agent was told; approve for its retry > `)
	if out, _ := h.run("", "pending", "--all"); !rowHas(out, "echo late", "wait over") || !rowHas(out, "echo abandoned", "abandoned") || rowHas(out, "echo abandoned", "wait over") {
		t.Errorf("pending --all while review shows WAIT OVER:\n%s", out)
	}
	before := h.typed
	h.key("a")
	scr.expect(t, `Approved `+id+`: grant [0-9a-f]+, single use, valid until [^.]*\. The agent may now retry the identical call\.`)
	if n := h.typed - before; n != 1 {
		t.Errorf("approving after the wait took %d keystrokes; want 1", n)
	}
	t.Logf("keystrokes to approve a call whose wait was over: %d", h.typed-before)
	scr.expect(t, `Waiting for calls`)

	// The retry, its description reworded: covered by the approval.
	out, err = h.run(bashCallDescribed("s-wait", "echo late >> /tmp/never", "Add one line to the file", "toolu_2"), "hook", "--event", "PreToolUse")
	if err != nil || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("the retry with a reworded description was not allowed: %v\n%s", err, out)
	}
	// Attack: another command on the same approval.
	if out, err := h.run(bashCallDescribed("s-wait", "echo later >> /tmp/never", "Append a line", "toolu_3"), "hook", "--event", "PreToolUse"); err == nil || strings.Contains(out, `"allow"`) {
		t.Errorf("another command ran on the approval: %s", out)
	}
	// And the identical call once more: single use.
	if out, err := h.run(bashCallDescribed("s-wait", "echo late >> /tmp/never", "Append a line", "toolu_4"), "hook", "--event", "PreToolUse"); err == nil || !strings.Contains(out, "approval_consumed") {
		t.Errorf("a second retry: %v %s", err, out)
	}
	// The refused calls are queued again (not held); the abandoned one
	// never came back.
	scr.expect(t, `Not held`)
	h.quit(`Review ended: 1 approved, 0 denied, 0 skipped`)
	text := scr.String()
	if strings.Contains(text, "echo abandoned") {
		t.Error("the call abandoned with SIGTERM was queued")
	}
}

// rowHas reports whether a line of out holds both call and status.
func rowHas(out, call, status string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, call) && strings.Contains(l, status) {
			return true
		}
	}
	return false
}

// A call worth a second look asks for the first characters of the digest
// shown with it: a DANGER line, a chained command. Wrong characters
// approve nothing. Keys typed ahead never decide the next call, and a call
// that arrives while one is on screen does not replace it.
func TestReviewSecondLookPTY(t *testing.T) {
	h := newReviewHarness(t)
	scr := h.startWaiting()

	danger := h.hold(bashCall("s-look", "rm -rf /var/tmp/x", "toolu_1"))
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `SECOND LOOK \(a DANGER line\): a asks for the first 4 characters of the digest\s+shown above\.`)
	scr.expect(t, ` > `)
	h.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	wrong := "0000"
	if strings.HasPrefix(digest, wrong) {
		wrong = "ffff"
	}
	h.key(wrong + "\r")
	scr.expect(t, `Not confirmed; nothing was changed`)
	if out, _ := h.run("", "pending"); !strings.Contains(out, "held") {
		t.Fatalf("the DANGER call is no longer held after a wrong confirmation:\n%s", out)
	}
	scr.expect(t, ` > `)
	before := h.typed
	h.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	h.key(digest[:4] + "\r")
	scr.expect(t, `Approved [a-z2-7]+: grant`)
	t.Logf("keystrokes to approve a DANGER call: %d", h.typed-before)
	wantAllowed(t, danger, "the DANGER call, confirmed")

	chained := h.hold(bashCall("s-look", "ls; id", "toolu_2"))
	scr.expect(t, `command: "ls; id"`)
	scr.expect(t, `SECOND LOOK \(a chained command\)`)
	scr.expect(t, ` > `)
	h.key("s")
	scr.expect(t, `Skipped`)
	_ = chained

	// Typed ahead: a double a on the first call approves it alone; the
	// second a is thrown away when the next call's prompt is drawn.
	first := h.hold(bashCall("s-look-1", "echo first", "toolu_3"))
	scr.expect(t, `command: "echo first"`)
	scr.expect(t, ` > `)
	second := h.hold(bashCall("s-look-2", "echo second", "toolu_4"))
	// Not replaced: the newer call is counted, the first stays.
	scr.expect(t, `\(1 more waiting\) > `)
	h.key("aa")
	firstID := scr.expect(t, `Approved ([a-z2-7]+): grant`)[1]
	wantAllowed(t, first, "the first call")
	scr.expect(t, `command: "echo second"`)
	scr.expect(t, ` > `)
	time.Sleep(time.Second)
	out, _ := h.run("", "pending", "--json")
	var rows []struct{ ID, Summary, Status, State string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Summary == "Bash echo second" && (r.Status != "open" || !strings.HasPrefix(r.State, "held")) {
			t.Errorf("the typed-ahead key decided the second call: %+v", r)
		}
		if r.ID == firstID && r.Summary != "Bash echo first" {
			t.Errorf("the approval went to %s, not the call on screen", r.Summary)
		}
	}
	h.key("d\r")
	scr.expect(t, `Denied `)
	select {
	case r := <-second:
		if !strings.Contains(r.out, "denied_by_human") {
			t.Errorf("the second call: %s", r.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the second call was not answered")
	}
	h.quit(`Review ended: 2 approved, 1 denied, 1 skipped`)
}

// On a terminal 60 columns wide, what review writes of its own (the keys,
// the second-look line, the prompt line) fits the width.
func TestReviewNarrowPTY(t *testing.T) {
	h := newReviewHarness(t)
	h.rows, h.cols = 30, 60
	scr := h.startWaiting()
	held := h.hold(bashCall("s-narrow", "rm -rf /var/tmp/narrow && echo done", "toolu_1"))
	scr.expect(t, `SECOND LOOK`)
	scr.expect(t, `\[q\]uit`)
	scr.expect(t, `HELD[^>]*> `)
	h.key("d\r")
	scr.expect(t, `Denied `)
	<-held
	h.quit(`Review ended`)
	text := scr.String()
	// Review's own lines: its greeting (up to the idle line), and from the
	// end of the call's rendering to the prompt line.
	var own []string
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	mine := true
	for _, l := range lines {
		switch {
		case strings.Contains(l, "Waiting for calls"):
			mine = false
		case strings.HasPrefix(l, `v: "loopguard.descriptor.v1"`):
			mine = true
			continue
		}
		if mine {
			// A redrawn prompt line: each state is a line of its own.
			for _, part := range strings.Split(l, "\r") {
				own = append(own, strings.TrimRight(part, " \b"))
			}
		}
		if strings.Contains(l, " > ") {
			mine = false
		}
	}
	if len(own) < 4 {
		t.Fatalf("review's own lines were not found:\n%s", text)
	}
	for _, l := range own {
		if len(l) > 60 {
			t.Errorf("a line of review's own is %d columns wide on a 60-column terminal: %q", len(l), l)
		}
	}
}

// The call a asks the digest of is the call approved: a record whose call
// is swapped while the human types the digest approves nothing, and its
// hook still waits. Control: the record restored, the same keys approve
// it.
func TestReviewChangedRecordPTY(t *testing.T) {
	h := newReviewHarness(t)
	scr := h.startWaiting()
	held := h.hold(bashCall("s-swap", "rm -rf /var/tmp/x", "toolu_1"))
	id := scr.expect(t, `pending ([a-z2-7]+) \(`)[1]
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, ` > `)
	h.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	call := filepath.Join(h.home, "state", "loopguard", "pending", id+".call")
	orig, err := os.ReadFile(call)
	if err != nil {
		t.Fatal(err)
	}
	swapped := bytes.Replace(orig, []byte("/var/tmp/x"), []byte("$HOME/.ssh"), 1)
	if bytes.Equal(swapped, orig) {
		t.Fatalf("the call file does not hold the command:\n%s", orig)
	}
	if err := os.WriteFile(call, swapped, 0o600); err != nil {
		t.Fatal(err)
	}
	h.key(digest[:4] + "\r")
	scr.expect(t, `pending call `+id+` changed while it was shown: refusing to approve`)
	if err := os.WriteFile(call, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := h.run("", "pending"); !strings.Contains(out, "held") {
		t.Fatalf("the call is no longer held after the refused approval:\n%s", out)
	}
	scr.expect(t, ` > `)
	h.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	h.key(digest[:4] + "\r")
	scr.expect(t, `Approved `+id+`: grant`)
	wantAllowed(t, held, "the call restored")
	h.quit(`Review ended: 1 approved, 0 denied, 0 skipped`)
}
