//go:build linux

package undo

import (
	"errors"
	"path/filepath"
	"testing"
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
	held, err := HoldForApproved(state, project)
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
	if _, err := HoldForApproved(state, project); !errors.Is(err, ErrBusy) {
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
	if _, err := HoldForApproved(state, project); !errors.Is(err, ErrBusy) {
		t.Errorf("an approved call while a confined call runs: %v, want ErrBusy", err)
	}
	lock.Close()
	held, err = HoldForApproved(state, project)
	if err != nil {
		t.Fatalf("once the confined call ended (control): %v", err)
	}
	for _, f := range held {
		f.Close()
	}
}
