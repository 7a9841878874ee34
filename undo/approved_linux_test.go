//go:build linux

package undo

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestHoldForApproved: an approved call's hold takes the project's lock
// (a jailed call's record waits for it) and says it runs
// (ApprovedRunning); a second approved call, or one while a confined call
// holds the project, is refused (ErrBusy). Control: let go, nothing runs,
// and the lock is free again.
func TestHoldForApproved(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	project := t.TempDir()
	if running, err := ApprovedRunning(state, project); err != nil || running {
		t.Fatalf("before any store: running %v, %v", running, err)
	}
	held, err := HoldForApproved(state, project, "test")
	if err != nil || len(held) != 2 {
		t.Fatalf("HoldForApproved: %v (%d files)", err, len(held))
	}
	if running, err := ApprovedRunning(state, project); err != nil || !running {
		t.Errorf("while held: running %v, %v", running, err)
	}
	if f, err := LockProject(state, project, false, nil); !errors.Is(err, ErrBusy) {
		if f != nil {
			f.Close()
		}
		t.Errorf("a jailed call's lock while an approved call runs: %v, want ErrBusy", err)
	}
	if _, err := HoldForApproved(state, project, "test"); !errors.Is(err, ErrBusy) {
		t.Errorf("a second approved call: %v, want ErrBusy", err)
	}
	// Another project is its own (control).
	other := t.TempDir()
	if running, _ := ApprovedRunning(state, other); running {
		t.Error("another project: running")
	}
	for _, f := range held {
		f.Close()
	}
	if running, err := ApprovedRunning(state, project); err != nil || running {
		t.Errorf("let go: running %v, %v", running, err)
	}
	lock, err := LockProject(state, project, false, nil)
	if err != nil {
		t.Fatalf("let go, the lock: %v", err)
	}
	// A confined call holds the project: the approved call is refused.
	if _, err := HoldForApproved(state, project, "test"); !errors.Is(err, ErrBusy) {
		t.Errorf("an approved call while a confined call runs: %v, want ErrBusy", err)
	}
	lock.Close()
	held, err = HoldForApproved(state, project, "test")
	if err != nil {
		t.Fatalf("once the confined call ended (control): %v", err)
	}
	for _, f := range held {
		f.Close()
	}
}

// TestHoldForApprovedNearProjects: the hold is of the projects that hold
// the approved call's or lie in it too (a session whose project is its
// sub/ writes sub/deploy.sh under its own lock): they see it running, a
// confined call of theirs waits for it (WaitApproved), and one still
// running refuses it. Control: a sibling project is its own.
func TestHoldForApprovedNearProjects(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	base := t.TempDir()
	p, sub, sib := filepath.Join(base, "p"), filepath.Join(base, "p", "sub"), filepath.Join(base, "sib")
	// sub and sib have stores (a jailed call ran there once).
	for _, q := range []string{sub, sib} {
		s, _ := Open(state, q)
		if err := s.create(); err != nil {
			t.Fatal(err)
		}
	}
	held, err := HoldForApproved(state, p, "test")
	if err != nil {
		t.Fatal(err)
	}
	if running, err := ApprovedRunning(state, sub); err != nil || !running {
		t.Errorf("sub/ while p's approved call runs: running %v, %v", running, err)
	}
	if running, _ := ApprovedRunning(state, sib); running {
		t.Error("a sibling project (control): running")
	}
	if waited, err := WaitApproved(state, sib, nil); err != nil || waited {
		t.Errorf("a sibling's jailed call (control): waited %v, %v", waited, err)
	}
	done := make(chan bool)
	go func() {
		waited, _ := WaitApproved(state, sub, nil)
		done <- waited
	}()
	select {
	case <-done:
		t.Fatal("sub/'s jailed call did not wait for p's approved call")
	case <-time.After(200 * time.Millisecond):
	}
	for _, f := range held {
		f.Close()
	}
	if waited := <-done; !waited {
		t.Error("WaitApproved said it did not wait")
	}
	// sub/'s confined call runs: an approved call of p runs nothing.
	lock, err := LockProject(state, sub, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HoldForApproved(state, p, "test"); !errors.Is(err, ErrBusy) {
		t.Errorf("p's approved call while sub/'s confined call runs: %v, want ErrBusy", err)
	}
	// And the other way: an approved call of sub/ is seen from p.
	lock.Close()
	held, err = HoldForApproved(state, sub, "test")
	if err != nil {
		t.Fatal(err)
	}
	if running, _ := ApprovedRunning(state, p); !running {
		t.Error("p while sub/'s approved call runs: not running")
	}
	for _, f := range held {
		f.Close()
	}
}

// TestIndexNamesAProjectOnce: a store made before is not written again,
// nor named again in the index of projects (each launch that writes
// appended a line). Control: a second project is added.
func TestIndexNamesAProjectOnce(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	p, q := t.TempDir(), t.TempDir()
	if _, err := Projects(state); err != nil { // makes the index
		t.Fatal(err)
	}
	for range 3 {
		held, err := HoldForApproved(state, p, "test")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range held {
			f.Close()
		}
	}
	s, _ := Open(state, q)
	if err := s.create(); err != nil {
		t.Fatal(err)
	}
	got, err := Projects(state)
	if err != nil || len(got) != 2 || got[0] != p || got[1] != q {
		t.Errorf("the index after three holds of %s and one store of %s: %q, %v", p, q, got, err)
	}
}
