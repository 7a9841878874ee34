//go:build linux

package clitest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/internal/keyringtest"
	"golang.org/x/sys/unix"
)

// OpenPTY returns a pseudo-terminal's master and slave.
func OpenPTY(t *testing.T) (*os.File, *os.File) {
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

// Screen collects what the program writes to the terminal.
type Screen struct {
	SyncBuffer
	off int // where the next expect starts looking
}

// Expect waits for re to appear after the last match and returns the
// submatches.
func (s *Screen) Expect(t *testing.T, re string) []string {
	t.Helper()
	if m, ok := s.Wait(re, 20*time.Second); ok {
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("%q did not appear on the terminal; it shows:\n%s", re, s.b.String()[s.off:])
	return nil
}

// Wait waits up to d for re to appear after the last match, and returns
// the submatches and whether it did.
func (s *Screen) Wait(re string, d time.Duration) ([]string, bool) {
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		text := s.b.String()[s.off:]
		if loc := rx.FindStringSubmatchIndex(text); loc != nil {
			m := rx.FindStringSubmatch(text)
			s.off += loc[1]
			s.mu.Unlock()
			return m, true
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			return nil, false
		}
	}
}

// Harness runs `loopguard review` on a pseudo-terminal in a private
// HOME, and the hook as the agent's client would.
type Harness struct {
	T     *testing.T
	Bin   string
	Env   []string
	Home  string
	M     *os.File
	Scr   *Screen
	Typed int // bytes typed into review
	Done  chan error
	Cmd   *exec.Cmd
	Rows  uint16 // the terminal's height (0: the pty's default, no size)
	Cols  uint16 // its width, with rows (0: 120)
}

// LoopguardBinary is the loopguard on PATH (TestMain puts it there:
// the root command's, the test binary itself; Main, a build).
func LoopguardBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("loopguard")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// KeyringBinary is loopguardBinary for a test that needs the OS keyring:
// skipped without one (a failure when make test demands one).
func KeyringBinary(t *testing.T) string {
	t.Helper()
	if !keyringtest.Want(t) {
		t.Skip("needs the OS keyring: run through scripts/with-keyring (make test)")
	}
	return LoopguardBinary(t)
}

func NewHarness(t *testing.T) *Harness {
	bin := KeyringBinary(t)
	home := t.TempDir()
	h := &Harness{T: t, Bin: bin, Env: HarnessEnv(home), Home: home, Scr: &Screen{}}
	if out, err := h.Run("", "init", "--user", "--no-jail"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return h
}

// HarnessEnv is this process's environment with HOME and the state in
// home, no colour, and the hooks run as Claude Code runs them, told the
// project (the calls' cwd).
func HarnessEnv(home string, drop ...string) []string {
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

func (h *Harness) Run(stdin string, args ...string) (string, error) {
	cmd := exec.Command(h.Bin, args...)
	cmd.Env = h.Env
	cmd.Dir = h.Home
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	return string(out), err
}

// StartWaiting runs review with no call held yet, and waits until it says
// so; it returns its screen.
func (h *Harness) StartWaiting() *Screen {
	h.T.Helper()
	h.Start()
	h.Scr.Expect(h.T, `Waiting for calls`)
	return h.Scr
}

// Start runs review on a fresh pty.
func (h *Harness) Start(args ...string) {
	t := h.T
	m, s := OpenPTY(t)
	h.M = m
	if h.Rows > 0 {
		cols := h.Cols
		if cols == 0 {
			cols = 120
		}
		if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: h.Rows, Col: cols}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { m.Close() })
	h.Cmd = exec.Command(h.Bin, append([]string{"review"}, args...)...)
	h.Cmd.Env = h.Env
	h.Cmd.Dir = h.Home
	h.Cmd.Stdin, h.Cmd.Stdout, h.Cmd.Stderr = s, s, s
	h.Cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := h.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	h.Done = make(chan error, 1)
	go func() { h.Done <- h.Cmd.Wait() }()
	t.Cleanup(func() {
		if h.Done != nil {
			_ = h.Cmd.Process.Kill()
			<-h.Done
		}
	})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			h.Scr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
}

func (h *Harness) Key(s string) {
	h.Typed += len(s)
	if _, err := h.M.WriteString(s); err != nil {
		h.T.Fatal(err)
	}
}

func (h *Harness) Quit(want string) {
	h.Key("q")
	h.Scr.Expect(h.T, want)
	select {
	case err := <-h.Done:
		h.Done = nil
		if err != nil {
			h.T.Fatalf("review exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		h.T.Fatal("review did not exit on q")
	}
}

func BashCall(session, cmd, id string) string {
	return `{"session_id":"` + session + `","cwd":"/tmp","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + cmd + `"},"tool_use_id":"` + id + `"}`
}

type HookResult struct {
	Out string
	Err error
}

// Hold runs the hook in wait mode in the background.
func (h *Harness) Hold(payload string) chan HookResult {
	return h.HoldFor(payload, "30s")
}

// HoldFor is hold with a wait of its own.
// A hook still waiting when the test ends (a call the test skipped) is
// killed and waited for before the test's directories are removed: it
// would write its end of the wait into them after they were.
func (h *Harness) HoldFor(payload, wait string) chan HookResult {
	cmd := exec.Command(h.Bin, "hook", "--event", "PreToolUse", "--wait", wait)
	cmd.Env, cmd.Dir, cmd.Stdin = h.Env, h.Home, strings.NewReader(payload)
	var out bytes.Buffer
	cmd.Stdout = &out
	ch := make(chan HookResult, 1)
	if err := cmd.Start(); err != nil {
		ch <- HookResult{"", err}
		return ch
	}
	ended := make(chan struct{})
	go func() {
		err := cmd.Wait()
		ch <- HookResult{out.String(), err}
		close(ended)
	}()
	h.T.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
	})
	return ch
}

// HoldProcess starts the hook in wait mode for payload and returns its
// process once the call is listed as held.
func (h *Harness) HoldProcess(payload string) *exec.Cmd {
	t := h.T
	cmd := exec.Command(h.Bin, "hook", "--event", "PreToolUse", "--wait", "30s")
	cmd.Env, cmd.Dir, cmd.Stdin = h.Env, h.Home, strings.NewReader(payload)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if out, _ := h.Run("", "pending"); strings.Contains(out, "held") {
			return cmd
		}
		if i > 200 {
			t.Fatal("the call was never listed as held")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func WantAllowed(t *testing.T, ch chan HookResult, what string) {
	t.Helper()
	select {
	case r := <-ch:
		if r.Err != nil || !strings.Contains(r.Out, `"permissionDecision":"allow"`) {
			t.Fatalf("%s was not allowed: %v\n%s", what, r.Err, r.Out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s was not answered", what)
	}
}

// VaultHome is a machine sharing the Vault s with token tok: its own HOME
// and state, the Vault backend in its config, no keyring.
func VaultHome(t *testing.T, s *vaulttest.Server, tok string) *Harness {
	t.Helper()
	bin := LoopguardBinary(t)
	home := t.TempDir()
	// No keyring: the Vault backend never reads it.
	env := HarnessEnv(home, "DBUS_SESSION_BUS_ADDRESS")
	if err := s.WriteConfig(filepath.Join(home, ".config", "loopguard"), tok); err != nil {
		t.Fatal(err)
	}
	return &Harness{T: t, Bin: bin, Env: env, Home: home, Scr: &Screen{}}
}

func WantDecision(t *testing.T, out string, err error, behavior, reason string) {
	t.Helper()
	if !strings.Contains(out, `"permissionDecision":"`+behavior+`"`) || !strings.Contains(out, reason) {
		t.Errorf("want %s (%s); got %v\n%s", behavior, reason, err, out)
	}
}

// WantRefused waits for the hook of ch to be told a human refused its call.
func WantRefused(t *testing.T, ch chan HookResult, what string) {
	t.Helper()
	select {
	case r := <-ch:
		WantDecision(t, r.Out, r.Err, "deny", "denied_by_human")
	case <-time.After(20 * time.Second):
		t.Fatalf("%s was not answered", what)
	}
}
