//go:build linux

package undo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
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
//
// what says which call it is (its command, its pid): ApprovedCall gives it
// to what waits for it.
func HoldForApproved(stateDir, project, what string) ([]*os.File, error) {
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
	// Said best effort: only a waiting call's message reads it.
	if a.Truncate(0) == nil {
		_, _ = a.WriteAt([]byte(shorten(what)), 0)
	}
	// The projects that hold this one or lie in it are its too: a
	// session whose project is a directory of this one (or holds it)
	// writes these files under its own lock (the ninety-fifth attack
	// run's session in sub/ rewrote sub/deploy.sh while the approved call
	// of the project ran). One of their confined calls still running
	// refuses this call as one of its own would; one that starts later
	// waits for this call's approved-call lock (WaitApproved).
	near, err := nearProjects(stateDir, project)
	if err != nil {
		lock.Close()
		a.Close()
		return nil, err
	}
	for _, q := range near {
		qs, err := Open(stateDir, q)
		if err != nil {
			continue
		}
		ql, err := qs.lockIfThere()
		if errors.Is(err, ErrBusy) {
			lock.Close()
			a.Close()
			return nil, ErrBusy
		}
		if ql != nil {
			ql.Close()
		}
	}
	return []*os.File{lock, a}, nil
}

// lockIfThere takes the store's lock without waiting, where the store is
// there (nil, nil where it is not).
func (s *Store) lockIfThere() (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_RDWR|unix.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, err
	}
	return f, nil
}

// nearProjects are the projects with a store beside stateDir that hold
// project or lie in it, project itself left out.
func nearProjects(stateDir, project string) ([]string, error) {
	ps, err := Projects(stateDir)
	if err != nil {
		return nil, fmt.Errorf("failed to read the index of projects with undo records: %w", err)
	}
	var out []string
	for _, q := range ps {
		if q != project && (fsx.Within(q, project) || fsx.Within(project, q)) && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out, nil
}

// WaitApproved waits, calling waiting first, until no call a human
// approved to run outside the jail runs in a project that holds project
// or lies in it (their approved-call locks), and reports whether it
// waited. A jailed call of project takes its own lock first (Begin), so
// that an approved call starting meanwhile finds it and runs nothing.
func WaitApproved(stateDir, project string, waiting func()) (bool, error) {
	waited := false
	near, err := nearProjects(stateDir, project)
	if err != nil {
		return false, err
	}
	for _, q := range near {
		f, err := openApproved(stateDir, q)
		if err != nil {
			return waited, err
		}
		if f == nil {
			continue
		}
		err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			if !waited && waiting != nil {
				waiting()
			}
			waited = true
			err = flock(f, unix.LOCK_SH)
		}
		f.Close()
		if err != nil {
			return waited, err
		}
	}
	return waited, nil
}

// ApprovedRunning reports whether a call a human approved to run outside
// the jail runs now in project, or in a project that holds it or lies in
// it (HoldForApproved's lock is held). A store or lock file that is not
// there is no such call; any other failure to ask is an error.
func ApprovedRunning(stateDir, project string) (bool, error) {
	_, running, err := RunningApproved(stateDir, project)
	return running, err
}

// RunningApproved is ApprovedRunning, with which call it is
// (HoldForApproved's what, "" where it cannot be read): one look at the
// locks for both questions.
func RunningApproved(stateDir, project string) (what string, running bool, err error) {
	near, err := nearProjects(stateDir, project)
	if err != nil {
		return "", false, err
	}
	for _, q := range append([]string{project}, near...) {
		f, err := openApproved(stateDir, q)
		if err != nil {
			return "", false, err
		}
		if f == nil {
			continue
		}
		err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 4096)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			return string(b[:n]), true, nil
		}
		f.Close()
		if err != nil {
			return "", false, err
		}
	}
	return "", false, nil
}

// openApproved opens project's approved-call lock to ask about it (nil,
// nil where its store or the file is not there).
func openApproved(stateDir, project string) (*os.File, error) {
	s, err := Open(stateDir, project)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, approvedName), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// AwaitProject waits, calling waiting first, until no other call holds
// project's lock and no approved call runs in a project near it
// (WaitApproved), then lets go: a launch waits here before it plans, so
// that its plan (what it lists as there before it runs, and sweeps if
// new) is made of the project as the call it waited for left it (the
// ninety-fifth attack run's jailed ls, having waited for an approved git
// init, swept away the .git it made).
func AwaitProject(stateDir, project string, waiting func()) error {
	s, err := Open(stateDir, project)
	if err != nil {
		return err
	}
	once := func() {
		if waiting != nil {
			waiting()
			waiting = nil
		}
	}
	f, err := s.lockIfThere()
	if errors.Is(err, ErrBusy) {
		f, err = s.lock(true, once)
	}
	if err != nil {
		return err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	_, err = WaitApproved(stateDir, project, once)
	return err
}
