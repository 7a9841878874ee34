package ticket

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestWaitClaimed: PostToolUse of a background call waits for the
// wrapper's claim before it spends the ticket. A claim is the used record
// (the wrapper could write the directory) or the wrapper's lock on the
// ticket file (the host's sandbox mounts it read-only), seen without
// taking the lock. The controls: no ticket returns at once, and a ticket
// nobody claims is waited for no longer than the bound.
func TestWaitClaimed(t *testing.T) {
	f := newFixture(t)
	nonceOf := func(marked string) string {
		n, _, ok := Unmark(marked)
		if !ok {
			t.Fatalf("not marked: %q", marked)
		}
		return n
	}

	start := time.Now()
	if f.store.WaitClaimed("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", time.Minute) {
		t.Error("a ticket never issued counts as claimed")
	}
	if time.Since(start) > 10*time.Second {
		t.Error("WaitClaimed waited for a ticket never issued")
	}

	// Nobody claims it: false, after the bound (the control).
	n := nonceOf(f.issue("s", "echo unclaimed"))
	if f.store.WaitClaimed(n, 50*time.Millisecond) {
		t.Error("an unclaimed ticket counts as claimed")
	}

	// The wrapper marks it used, a little later.
	n = nonceOf(f.issue("s", "echo used"))
	go func(n string) {
		time.Sleep(30 * time.Millisecond)
		_ = os.Rename(f.store.path(n), f.store.usedPath(n))
	}(n)
	if !f.store.WaitClaimed(n, 10*time.Second) {
		t.Error("a ticket the wrapper marked used is not seen claimed")
	}

	if runtime.GOOS != "linux" {
		return
	}
	// The wrapper holds its lock (read-only directory), a little later.
	n = nonceOf(f.issue("s", "echo locked"))
	held := make(chan *os.File, 1)
	go func(n string) {
		time.Sleep(30 * time.Millisecond)
		h, err := os.Open(f.store.path(n))
		if err == nil {
			err = syscall.Flock(int(h.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		}
		if err != nil {
			t.Error(err)
		}
		held <- h
	}(n)
	if !f.store.WaitClaimed(n, 10*time.Second) {
		t.Error("a ticket whose file the wrapper holds locked is not seen claimed")
	}
	h := <-held
	// The probe took no lock: the wrapper's own lockNB still works once
	// it lets go, and nothing else holds it.
	h.Close()
	g, err := os.Open(f.store.path(n))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := lockNB(g); err != nil {
		t.Errorf("the ticket's lock is held after the wrapper let go: %v", err)
	}
	if flockHeld(f.store.path(n)) != true {
		t.Error("flockHeld does not see this test's own lock")
	}
}
