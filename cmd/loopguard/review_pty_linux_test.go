//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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
	mu  sync.Mutex
	buf bytes.Buffer
	off int // where the next expect starts looking
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// expect waits for re to appear after the last match and returns the
// submatches.
func (s *screen) expect(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		text := s.buf.String()[s.off:]
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
	t.Fatalf("%q did not appear on the terminal; it shows:\n%s", re, s.buf.String()[s.off:])
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
}

func newReviewHarness(t *testing.T) *reviewHarness {
	if !realKeyring(t) {
		t.Skip("needs the OS keyring: run through scripts/with-keyring (make test)")
	}
	bin, err := exec.LookPath("loopguard")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	h := &reviewHarness{t: t, bin: bin, env: harnessEnv(home), home: home, scr: &screen{}}
	if out, err := h.run("", "init", "--user"); err != nil {
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

// start runs review on a fresh pty.
func (h *reviewHarness) start(args ...string) {
	t := h.t
	m, s := openPTY(t)
	h.m = m
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
	ch := make(chan hookResult, 1)
	go func() {
		out, err := h.run(payload, "hook", "--event", "PreToolUse", "--wait", "30s")
		ch <- hookResult{out, err}
	}()
	return ch
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
// with a, 4 digest characters and Enter (6 keystrokes) and runs without a
// retry; another is denied with d and a reason the agent is shown.
func TestReviewConsolePTY(t *testing.T) {
	h := newReviewHarness(t)

	// A held call whose hook is gone before review starts is not queued;
	// pending --all says its wait is over.
	gone := exec.Command(h.bin, "hook", "--event", "PreToolUse", "--wait", "30s")
	gone.Env, gone.Dir, gone.Stdin = h.env, h.home, strings.NewReader(bashCall("s-pty", "echo gone", "toolu_0"))
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if out, _ := h.run("", "pending"); strings.Contains(out, "held") {
			break
		}
		if i > 200 {
			t.Fatal("the held call was never listed as held")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = gone.Process.Kill()
	_ = gone.Wait()
	if out, _ := h.run("", "pending", "--all"); !strings.Contains(out, "wait over") || !strings.Contains(out, "STATUS") {
		t.Errorf("pending --all after the hook died:\n%s", out)
	}

	h.start()
	scr := h.scr
	scr.expect(t, `Waiting for calls`)

	// A call arrives while the console waits; its hook holds it.
	held := h.hold(bashCall("s-pty", "echo held", "toolu_1"))
	heldID := scr.expect(t, `pending ([a-z2-7]+) \(held, [0-9]+s left\)`)[1]
	scr.expect(t, `command: "echo held"`)
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `HELD: the agent waits for your answer`)
	scr.expect(t, `\[a\]pprove  \[g\]rant Bash\(echo held\)@[^ ]+  \[d\]eny  \[s\]kip  \[q\]uit:`)
	before := h.typed
	h.key("a")
	scr.expect(t, `Type the first 4 characters of the digest to approve`)
	h.key(digest[:4] + "\r")
	scr.expect(t, `Approved `+heldID+`: grant [0-9a-f]+, single use, valid until [^.]*\. The held call runs now\.`)
	if n := h.typed - before; n > 6 {
		t.Errorf("one approval took %d keystrokes", n)
	}
	t.Logf("keystrokes for one approval in review: %d", h.typed-before)
	wantAllowed(t, held, "the held call")

	// A second call, not held (default mode): denied with d and a reason.
	if out, err := h.run(bashCall("s-pty", "echo refused", "toolu_2"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("a call without approval ran: %s", out)
	}
	refusedID := scr.expect(t, `pending ([a-z2-7]+) \(open\)`)[1]
	scr.expect(t, `command: "echo refused"`)
	scr.expect(t, `Not held: after an approval the agent must retry`)
	scr.expect(t, `\[q\]uit:`)
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
	scr.mu.Lock()
	defer scr.mu.Unlock()
	text := scr.buf.String()
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
	h.start()
	scr := h.scr
	scr.expect(t, `Waiting for calls`)

	held := h.hold(bashCall("s-grant", "ls -la", "toolu_1"))
	scr.expect(t, `command: "ls -la"`)
	rule := scr.expect(t, `\[g\]rant (Bash\(ls -la\)@/[^ ]+)  \[d\]eny`)[1]
	before := h.typed
	h.key("g")
	scr.expect(t, `Approve this call once and grant, as [^,]+, until [^\n]+:\s+`+regexp.QuoteMeta(rule))
	scr.expect(t, `session: every session of the project /tmp`)
	digest := scr.expect(t, `digest:  ([0-9a-f]{64})`)[1]
	scr.expect(t, `Type the first 4 characters of the digest to approve and grant`)
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
	h.key("s")
	scr.expect(t, `Skipped`)

	// A dangerous call is shown with a loud warning and its reason; the
	// control above (ls -l) had none.
	if _, err := h.run(bashCall("s-grant", "rm -rf /var/tmp/x", "toolu_6"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("rm ran without an approval")
	}
	scr.expect(t, `!!! DANGER: rm deletes recursively outside the project \(/var/tmp/x\)`)
	scr.expect(t, `command: "rm -rf /var/tmp/x"`)
	scr.expect(t, `\[q\]uit:`)
	h.key("s")
	scr.expect(t, `Skipped`)

	// A chained command: no rule is offered, and g says so.
	if _, err := h.run(bashCall("s-grant", "ls; id", "toolu_4"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatal("a chained command ran")
	}
	scr.expect(t, `command: "ls; id"`)
	prompt := scr.expect(t, `(\[a\]pprove.*\[q\]uit:)`)[1]
	if strings.Contains(prompt, "[g]rant") {
		t.Errorf("a rule was offered for a chained command: %s", prompt)
	}
	h.key("g")
	scr.expect(t, `No rule is offered for this call`)
	h.quit(`Review ended: 1 approved, 0 denied, 2 skipped`)
	scr.mu.Lock()
	text := scr.buf.String()
	scr.mu.Unlock()
	if i, j := strings.Index(text, "!!! DANGER"), strings.Index(text, `command: "ls -l"`); i < j {
		t.Errorf("a warning before the harmless calls (control): %d < %d", i, j)
	}
}

// t approves every call of one turn, shown together, with one confirmation.
func TestReviewTurnPTY(t *testing.T) {
	h := newReviewHarness(t)
	h.start()
	scr := h.scr
	scr.expect(t, `Waiting for calls`)
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
	h.key("t")
	scr.expect(t, `--- call 2 of 2 ---`)
	digest := scr.expect(t, `Approve these 2 calls, each once[^\n]*\ndigest:  ([0-9a-f]{64})`)[1]
	h.key(digest[:4] + "\r")
	scr.expect(t, `Approved [a-z2-7]+: grant`)
	scr.expect(t, `Approved [a-z2-7]+: grant`)
	wantAllowed(t, one, "the first call of the turn")
	wantAllowed(t, two, "the second call of the turn")
	h.quit(`Review ended: 2 approved, 0 denied, 0 skipped`)
}
