package undo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/undo"
)

// inheritablePipe is a pipe whose write end has no close-on-exec, as a
// descriptor a parent left open arrives: every child started from now on
// inherits it. The caller closes the write end once the child it tests
// has started, and waits on the read end (ended).
func inheritablePipe(t *testing.T) (rfd, wfd int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]) })
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return p[0], p[1]
}

// ended reports whether the pipe of rfd has no writer left within d.
func ended(rfd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(rfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left < 0 {
			return false
		}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&unix.POLLHUP != 0
	}
}

// TestWatcherKeepsNothingInherited: the project's watcher, started as the
// launcher starts it, keeps no descriptor its starter was given: a pipe
// the starter held open ends for its reader while the watcher runs on
// (it had kept the agent's shell waiting for minutes). Control: a process
// started the same way that closes nothing (sleep) keeps the pipe open.
func TestWatcherKeepsNothingInherited(t *testing.T) {
	ex, _ := binaries(t)
	root := t.TempDir()
	proj, st := filepath.Join(root, "proj"), filepath.Join(root, "state")
	mustDo(t, os.MkdirAll(proj, 0o755), os.MkdirAll(st, 0o700), os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644))

	rfd, wfd := inheritablePipe(t)
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	unix.Close(wfd)
	if ended(rfd, 300*time.Millisecond) {
		t.Fatal("control: the pipe ended while sleep, which inherited it, ran: the test shows nothing")
	}
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	if !ended(rfd, 5*time.Second) {
		t.Fatal("control: the pipe did not end after sleep exited")
	}

	rfd, wfd = inheritablePipe(t)
	err := undo.StartWatching(st, proj, ex)
	unix.Close(wfd)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := undo.Open(st, proj)
	watching := func() bool { running, _ := s.WatchState(); return running }
	t.Cleanup(func() {
		// The watcher ends when its project is gone.
		os.RemoveAll(proj)
		for i := 0; i < 500 && watching(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	})
	for i := 0; i < 500 && !watching(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !watching() {
		t.Fatal("the watcher did not start")
	}
	if !ended(rfd, 5*time.Second) {
		t.Fatal("the watcher kept open a pipe its starter was given")
	}
	if !watching() {
		t.Error("the watcher ended: the pipe ended with it, not because it closed it")
	}
}
