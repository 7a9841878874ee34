//go:build linux

package keyring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/keyringtest"
)

// holderProc is a holder started as a child process (TestMain's holderEnv).
type holderProc struct {
	cmd    *exec.Cmd
	exited chan error
}

// startHolder starts the holder of state on rk's bus (idle "" for
// HoldMain's own) and waits until it answers.
func startHolder(t *testing.T, rk *realKeyring, state, idle string) *holderProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = withEnv(append(append([]string{}, rk.env...), holderEnv+"="+state, holderIdleEnv+"="+idle, "GORACE=atexit_sleep_ms=0"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holderProc{cmd: cmd, exited: make(chan error, 1)}
	go func() { h.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-h.exited })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Lstat(filepath.Join(state, "key.sock")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return h
		}
		select {
		case err := <-h.exited:
			h.exited <- err
			t.Fatalf("the holder exited before it listened: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the holder did not listen within 10s")
	return nil
}

// gone waits up to within for the holder to exit, and says whether it did.
func (h *holderProc) gone(within time.Duration) bool {
	select {
	case err := <-h.exited:
		h.exited <- err
		return true
	case <-time.After(within):
		return false
	}
}

// TestRealKeyHolder: the holder answers the key and the anchor the
// keyring holds, one at a time per directory, and ends at every change of
// what it holds or of its place: the key rotated, the anchor stored again,
// its socket removed, loopguard's stop, its idle time, the collection
// locked. After each end the hook's read finds no holder and goes to the
// keyring. Control, before each: the holder answers.
func TestRealKeyHolder(t *testing.T) {
	keyringtest.Require(t)
	rk := startKeyring(t, true)
	state := t.TempDir()
	env := append(append([]string{}, rk.env...), stateEnv+"="+state)
	run := func(ops ...string) []helperResult { return runHelper(t, envDrop, env, ops...) }
	wantResults(t, run("create"), "")
	// No anchor in the keyring (a directory set up before anchors): no
	// holder, since the hook takes no answer without one.
	noAnchor := startHolderNoWait(t, rk, state)
	if !noAnchor.gone(10*time.Second) || noAnchor.cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("a holder without an anchor: %v", noAnchor.cmd.ProcessState)
	}
	if b, err := os.ReadFile(filepath.Join(state, "key.failed")); err != nil || !strings.Contains(string(b), "no anchor") {
		t.Fatalf("a holder without an anchor left %q (%v)", b, err)
	}
	if err := os.Remove(filepath.Join(state, "key.failed")); err != nil {
		t.Fatal(err)
	}
	wantResults(t, run("store-anchor"), "")
	want := run("load-anchor")[0]
	if want.KeyFp == "" || want.Fp == "" {
		t.Fatalf("the keyring's key and anchor: %+v", want)
	}
	if r := run("held")[0]; r.Quick {
		t.Fatal("a holder answered before one ran")
	}
	serving := func(what string) {
		t.Helper()
		want := run("load-anchor")[0]
		if r := run("held")[0]; !r.Quick || r.KeyFp != want.KeyFp || r.Fp != want.Fp || r.KeyLen != KeySize {
			t.Fatalf("%s: the holder's answer %+v, the keyring's %+v", what, r, want)
		}
	}
	ended := func(what string, h *holderProc) {
		t.Helper()
		if !h.gone(5 * time.Second) {
			t.Fatalf("%s: the holder still runs", what)
		}
		if r := run("held")[0]; r.Quick {
			t.Fatalf("%s: a holder still answers", what)
		}
		if _, err := os.Lstat(filepath.Join(state, "key.sock")); err == nil {
			t.Errorf("%s: the holder left its socket", what)
		}
	}

	// The holder outlives the hook that starts it: a pipe the hook was
	// given (no close-on-exec: every child inherits it) ends for its
	// reader while the holder serves on.
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pipe[0])
	if _, err := unix.FcntlInt(uintptr(pipe[0]), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	h := startHolder(t, rk, state, "")
	unix.Close(pipe[1])
	fds := []unix.PollFd{{Fd: int32(pipe[0]), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 5000)
	for err == unix.EINTR {
		n, err = unix.Poll(fds, 5000)
	}
	if err != nil || n != 1 || fds[0].Revents&unix.POLLHUP == 0 {
		t.Errorf("the holder kept open a pipe the process that started it was given (poll: %d, %v)", n, err)
	}
	serving("started")
	// One holder a directory: a second exits at once, the first serves on.
	second := startHolderNoWait(t, rk, state)
	if !second.gone(5*time.Second) || second.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("a second holder of the directory: %v", second.cmd.ProcessState)
	}
	serving("after a second holder")
	wantResults(t, run("rotate"), "")
	ended("the key rotated", h)

	h = startHolder(t, rk, state, "")
	serving("after the rotation")
	env = append(env, "LOOPGUARD_KEYRING_ANCHOR_SUFFIX=x")
	wantResults(t, run("store-anchor"), "")
	ended("the anchor stored again", h)

	h = startHolder(t, rk, state, "")
	serving("after the anchor")
	if err := os.Remove(filepath.Join(state, "key.sock")); err != nil {
		t.Fatal(err)
	}
	ended("its socket removed", h)

	h = startHolder(t, rk, state, "")
	serving("after the socket")
	wantResults(t, run("stop-holder"), "")
	// Once StopHolder returns the holder has let go of its lock: it
	// answers no more, and exits.
	if r := run("held")[0]; r.Quick {
		t.Fatal("StopHolder returned while the holder still answered")
	}
	ended("stopped", h)
	wantResults(t, run("stop-holder"), "") // none runs: no error

	h = startHolder(t, rk, state, "300ms")
	serving("with a short idle time")
	ended("idle", h)

	h = startHolder(t, rk, state, "")
	serving("before the lock")
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	if err := rk.conn(t).Object(ssName, ssPath).Call(ssService+".Lock", 0, []dbus.ObjectPath{ssLoginPath}).Store(&locked, &prompt); err != nil || len(locked) != 1 {
		t.Fatalf("lock: %v %v", locked, err)
	}
	ended("the collection locked", h)
	// A holder that cannot read the key (the collection still locked)
	// exits 1 and leaves key.failed, so that the hook starts no other for
	// a while (TestStartHolderAfterAFailure).
	failed := startHolderNoWait(t, rk, state)
	if !failed.gone(10*time.Second) || failed.cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("a holder of a locked collection: %v", failed.cmd.ProcessState)
	}
	if b, err := os.ReadFile(filepath.Join(state, "key.failed")); err != nil || len(b) == 0 {
		t.Errorf("no key.failed after a failed start: %v", err)
	}
}

// startHolderNoWait starts a holder of state without waiting for it.
func startHolderNoWait(t *testing.T, rk *realKeyring, state string) *holderProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = withEnv(append(append([]string{}, rk.env...), holderEnv+"="+state, "GORACE=atexit_sleep_ms=0"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holderProc{cmd: cmd, exited: make(chan error, 1)}
	go func() { h.exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-h.exited })
	return h
}
