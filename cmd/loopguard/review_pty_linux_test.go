//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// The review console, driven key by key through a pseudo-terminal: it is
// started first, and calls arrive while it waits. One call (held in wait
// mode) is approved by typing its digest prefix and then runs without a
// retry; another is denied with one key.
func TestReviewConsolePTY(t *testing.T) {
	if !realKeyring(t) {
		t.Skip("needs the OS keyring: run through scripts/with-keyring (make test)")
	}
	bin, err := exec.LookPath("loopguard")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CLAUDECODE", "NO_COLOR", "TERM":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "NO_COLOR=1", "TERM=xterm")
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Dir = home
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		return string(out), err
	}
	if out, err := run("", "init", "--user"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}

	m, s := openPTY(t)
	defer m.Close()
	review := exec.Command(bin, "review")
	review.Env = env
	review.Dir = home
	review.Stdin, review.Stdout, review.Stderr = s, s, s
	review.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := review.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() { done <- review.Wait() }()
	exited := false
	defer func() {
		if !exited {
			_ = review.Process.Kill()
			<-done
		}
	}()
	scr := &screen{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			scr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	key := func(s string) {
		if _, err := m.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}

	scr.expect(t, `Waiting for calls`)

	// A call arrives while the console waits; its hook holds it.
	call := func(cmd, id string) string {
		return `{"session_id":"s-pty","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + cmd + `"},"tool_use_id":"` + id + `"}`
	}
	type result struct {
		out string
		err error
	}
	held := make(chan result, 1)
	go func() {
		out, err := run(call("echo held", "toolu_1"), "hook", "--event", "PreToolUse", "--wait", "30s")
		held <- result{out, err}
	}()
	got := scr.expect(t, `pending ([a-z2-7]+) \(open\)`)
	heldID := got[1]
	scr.expect(t, `command: "echo held"`)
	digest := scr.expect(t, `digest: ([0-9a-f]{64})`)[1]
	scr.expect(t, `\[a\]pprove  \[d\]eny  \[s\]kip  \[q\]uit:`)
	key("a")
	scr.expect(t, `Type the first 8 characters of the digest to approve`)
	key(digest[:8] + "\r")
	scr.expect(t, `Approved `+heldID+`: grant [0-9a-f]+, single use`)
	select {
	case r := <-held:
		if r.err != nil || !strings.Contains(r.out, `"permissionDecision":"allow"`) {
			t.Fatalf("the held call was not allowed: %v\n%s", r.err, r.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held call was not answered")
	}

	// A second call, denied with one key.
	if out, err := run(call("echo refused", "toolu_2"), "hook", "--event", "PreToolUse"); err == nil {
		t.Fatalf("a call without approval ran: %s", out)
	}
	got = scr.expect(t, `pending ([a-z2-7]+) \(open\)`)
	refusedID := got[1]
	scr.expect(t, `command: "echo refused"`)
	scr.expect(t, `\[q\]uit:`)
	key("d")
	scr.expect(t, `Denied `+refusedID)
	scr.expect(t, `Waiting for calls`)
	key("q")
	scr.expect(t, `Review ended: 1 approved, 1 denied, 0 skipped`)
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Fatalf("review exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("review did not exit on q")
	}
	if out, _ := run(call("echo refused", "toolu_2"), "hook", "--event", "PreToolUse"); !strings.Contains(out, "denied_by_human") {
		t.Errorf("the denied call: %s", out)
	}
	scr.mu.Lock()
	defer scr.mu.Unlock()
	if bytes.Contains(scr.buf.Bytes(), []byte("\x1b[")) {
		t.Error("colour escapes with NO_COLOR set")
	}
}
