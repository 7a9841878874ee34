//go:build linux

package undo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// approvedName is the file in a project's store whose lock an approved
// call that runs outside the jail holds while it runs (HoldForApproved):
// what asks (ApprovedRunning) is the hook, before it lets a file tool's
// write through with no decision.
const approvedName = "approved"

// HoldForApproved takes, for a call a human approved to run outside the
// jail, the project's lock and the approved-call lock of its store beside
// stateDir (made where it is not there), and returns their files: the
// caller keeps them open, across exec, for as long as the call's processes
// run, so that no call with no decision changes what the approved call
// runs while it runs (the ninety-fourth attack run's jailed rewrite of
// deploy.sh while the approved make ran). ErrBusy when another call holds
// the project's lock: a confined call still runs there (it began before
// the approval's check, which did not count it), or another approved one.
func HoldForApproved(stateDir, project string) ([]*os.File, error) {
	s, err := Open(stateDir, project)
	if err != nil {
		return nil, err
	}
	if err := s.create(); err != nil {
		return nil, err
	}
	lock, err := s.lock(false, nil)
	if err != nil {
		return nil, err
	}
	a, err := os.OpenFile(filepath.Join(s.Dir, approvedName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("failed to open the approved-call lock: %w", err)
	}
	if err := flock(a, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		a.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("failed to take the approved-call lock: %w", err)
	}
	return []*os.File{lock, a}, nil
}

// ApprovedRunning reports whether a call a human approved to run outside
// the jail runs in project now (HoldForApproved's lock is held). A store
// or lock file that is not there is no such call; any other failure to
// ask is an error.
func ApprovedRunning(stateDir, project string) (bool, error) {
	s, err := Open(stateDir, project)
	if err != nil {
		return false, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, approvedName), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	switch err := flock(f, unix.LOCK_SH|unix.LOCK_NB); {
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}
