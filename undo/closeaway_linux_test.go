//go:build linux

package undo

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseAway: the child closeAway forks holds the inotify instance and
// the pipe's read end and nothing else (not the descriptors this process
// has open, such as a call's output pipe, which the agent reads to its
// end), and exits 0 once this process has let go of both; here the
// instance is closed. It takes a name of its own, so that the launcher's
// command line (the call's command) is not seen running after the call.
// The control: the child is seen holding the instance before it is
// released, so a child that did nothing would fail.
func TestCloseAway(t *testing.T) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify here:", err)
	}
	if _, err := unix.InotifyAddWatch(fd, t.TempDir(), watchMask); err != nil {
		t.Fatal(err)
	}
	// A descriptor of this process's, as the call's output pipe is.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var held []string
	var cmdline, comm []byte
	testCloseAwayForked = func(pid int) {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Errorf("reading the child's descriptors: %v", err)
				return
			}
			held = held[:0]
			for _, e := range ents {
				l, _ := os.Readlink(dir + "/" + e.Name())
				held = append(held, l)
			}
			if len(held) == 2 {
				cmdline, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				comm, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
				return
			}
		}
	}
	defer func() { testCloseAwayForked = nil }()
	pid := closeAway(fd)
	if pid <= 0 {
		t.Fatalf("closeAway forked no child (%d)", pid)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("the instance is still open here: %v", err)
	}
	slices.Sort(held)
	if len(held) != 2 || held[0] != "anon_inode:inotify" || !slices.ContainsFunc(held, func(s string) bool { return len(s) > 5 && s[:5] == "pipe:" }) {
		t.Fatalf("the child holds %q; want the inotify instance and one pipe end", held)
	}
	// Its own name: not the launcher's command line, which holds the
	// call's command.
	if got := strings.TrimRight(string(cmdline), "\x00"); got != closerName {
		t.Errorf("the child's command line is %q; want %q", got, closerName)
	}
	if got := strings.TrimSpace(string(comm)); got != "lg-undo-close" {
		t.Errorf("the child's name is %q", got)
	}
	var ws unix.WaitStatus
	for {
		_, err = unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("the child ended with %v (%v); want exit 0", ws, err)
	}
	if closeAway(-1) != 0 {
		t.Error("closeAway(-1) forked")
	}
}

// TestCloseAwayLetsTheLockGo: a lock this process holds, as a record
// holds the project's, is free once this process lets it go after
// closeAway has returned: the child's copy of its descriptor (a flock
// lives as long as any) is closed by then. The next call's record takes
// that lock without waiting. Twenty rounds: a child that closes its
// copies only some time later leaves the lock held in most. The control:
// the lock is refused while this process holds it.
func TestCloseAwayLetsTheLockGo(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "lock")
	for round := range 20 {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			t.Skip("no inotify here:", err)
		}
		if _, err := unix.InotifyAddWatch(fd, t.TempDir(), watchMask); err != nil {
			t.Fatal(err)
		}
		lock, err := os.Create(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		other, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
			t.Fatalf("round %d: the lock was not held (control): %v", round, err)
		}
		pid := closeAway(fd)
		lock.Close()
		err = unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		other.Close()
		if pid > 0 {
			var ws unix.WaitStatus
			for {
				if _, werr := unix.Wait4(pid, &ws, 0, nil); werr != unix.EINTR {
					break
				}
			}
		}
		if err != nil {
			t.Fatalf("round %d: the lock is still held once this process let it go: %v", round, err)
		}
	}
}
