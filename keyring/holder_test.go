//go:build linux

package keyring

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The answer's encoding: what encodeHeld writes decodeHeld reads back; a
// key of another size, a length that overruns, a trailing byte, an anchor
// that is not printable ASCII, another magic: refused.
func TestHeldAnswer(t *testing.T) {
	key := bytes.Repeat([]byte{7}, KeySize)
	k, a, err := decodeHeld(encodeHeld(key, `{"v":1}`))
	if err != nil || !bytes.Equal(k, key) || a != `{"v":1}` {
		t.Fatalf("control: %x %q %v", k, a, err)
	}
	if k, a, err := decodeHeld(encodeHeld(key, "")); err != nil || !bytes.Equal(k, key) || a != "" {
		t.Fatalf("no anchor: %x %q %v", k, a, err)
	}
	good := encodeHeld(key, "ab")
	for name, b := range map[string][]byte{
		"short key":        encodeHeld(key[:31], "ab"),
		"long key":         encodeHeld(append(key, 1), "ab"),
		"trailing byte":    append(append([]byte{}, good...), 'x'),
		"truncated":        good[:len(good)-1],
		"anchor not ASCII": encodeHeld(key, "a\nb"),
		"other magic":      append([]byte("LGK2"), good[4:]...),
		"empty":            nil,
	} {
		if _, _, err := decodeHeld(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// LoadHeld passes over what is not a holder: no socket, a path too long
// for one, a server that answers something else, one that never answers
// (within holderWait). Control: a server of this user that answers as the
// holder does is read.
func TestLoadHeldPassesOver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, _, ok := LoadHeld(ctx, dir); ok {
		t.Fatal("no socket: ok")
	}
	if _, _, ok := LoadHeld(ctx, "/"+strings.Repeat("d", 120)); ok {
		t.Fatal("a path too long: ok")
	}
	key := bytes.Repeat([]byte{9}, KeySize)
	serve := func(answer func(c net.Conn)) {
		t.Helper()
		l, err := net.Listen("unix", filepath.Join(dir, "key.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				answer(c)
			}
		}()
	}
	serve(func(c net.Conn) {
		defer c.Close()
		var req [1]byte
		_, _ = c.Read(req[:])
		if req[0] == reqKey {
			_, _ = c.Write(encodeHeld(key, "an"))
		}
	})
	if k, a, ok := LoadHeld(ctx, dir); !ok || !bytes.Equal(k, key) || a != "an" {
		t.Fatalf("control: %x %q %v", k, a, ok)
	}
	for name, answer := range map[string]func(c net.Conn){
		"garbage": func(c net.Conn) { _, _ = c.Write([]byte("hello")); c.Close() },
		"silence": func(c net.Conn) { time.AfterFunc(2*time.Second, func() { c.Close() }) },
	} {
		dir = t.TempDir()
		serve(answer)
		start := time.Now()
		if _, _, ok := LoadHeld(ctx, dir); ok {
			t.Errorf("%s: ok", name)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		// A holder that takes the connection and never answers loses its
		// socket, so the next read does not wait for it again; one that
		// answered, even garbage, keeps it.
		_, err := os.Lstat(filepath.Join(dir, "key.sock"))
		if gone := err != nil; gone != (name == "silence") {
			t.Errorf("%s: the socket removed %v", name, gone)
		}
	}
}

func init() {
	holdFor = func(dir string, idle time.Duration) error { return hold(dir, idle, HolderLife) }
}

// LoadHeld takes no answer from a holder of another user: a server run as
// nobody, answering as the holder does, on a socket this user can reach.
// Control: the same server run as this user is read.
func TestLoadHeldRefusesAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting a process as another user needs root")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []bool{false, true} {
		// Where the other user reaches the test binary and the socket.
		dir, err := os.MkdirTemp("", "holder-peer-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(dir, "fake-holder")
		if err := os.WriteFile(exe, body, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fakeHolderEnv+"="+filepath.Join(dir, "key.sock"))
		if other {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		var ok bool
		for i := 0; i < 500 && !ok; i++ {
			time.Sleep(10 * time.Millisecond)
			if _, err := os.Stat(filepath.Join(dir, "key.sock")); err == nil {
				_, _, ok = LoadHeld(context.Background(), dir)
				if other {
					// Give it the time to answer, then keep refusing.
					time.Sleep(100 * time.Millisecond)
					_, _, ok = LoadHeld(context.Background(), dir)
					break
				}
			}
		}
		if ok == other {
			t.Errorf("a holder of another user %v: answer taken %v", other, ok)
		}
	}
}

// StartHolder starts no holder within failedRetry of one that failed to
// start (key.failed), where a start on every allowed call would cost each
// one; a failure older than that, or none, starts one.
func TestStartHolderAfterAFailure(t *testing.T) {
	t.Setenv(busEnv, "unix:path=/nonexistent/bus")
	dir := t.TempDir()
	bin, starts := countingHolder(t)
	if err := StartHolder(dir, bin); err != nil || starts() != 1 {
		t.Fatalf("control, no failure: %v, %d starts", err, starts())
	}
	if err := os.WriteFile(holderFailed(dir), []byte("no key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := StartHolder(dir, bin); err != nil || starts() != 1 {
		t.Fatalf("a failure just now: %v, %d starts", err, starts())
	}
	old := time.Now().Add(-failedRetry - time.Minute)
	if err := os.Chtimes(holderFailed(dir), old, old); err != nil {
		t.Fatal(err)
	}
	if err := StartHolder(dir, bin); err != nil || starts() != 2 {
		t.Fatalf("a failure an hour ago: %v, %d starts", err, starts())
	}
}

// StartHolder starts no holder while another process holds the lock (one
// starting, or one that stopped answering and whose socket the hook
// removed): it would exit at once, a process started on every call for
// nothing. Control: the lock let go, the next call starts one.
func TestStartHolderWhileLocked(t *testing.T) {
	t.Setenv(busEnv, "unix:path=/nonexistent/bus")
	dir := t.TempDir()
	bin, starts := countingHolder(t)
	lock, err := os.OpenFile(holderLock(dir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := StartHolder(dir, bin); err != nil || starts() != 0 {
		t.Fatalf("the lock held: %v, %d starts", err, starts())
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := StartHolder(dir, bin); err != nil || starts() != 1 {
		t.Fatalf("control, the lock let go: %v, %d starts", err, starts())
	}
}

// countingHolder is a holder binary that only counts its starts, and how
// many it has counted (after waiting for a start that may be under way).
func countingHolder(t *testing.T) (bin string, starts func() int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "started")
	bin = filepath.Join(t.TempDir(), "holder")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\" >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() int {
		time.Sleep(200 * time.Millisecond)
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n")
	}
}
