//go:build unix

package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/undo"
)

// heldFD is where the approved call's lock descriptors go: above the
// ones a script opens itself (`exec 3>file` would close one and let the
// project go), below 64, the descriptor table a process starts with: a
// descriptor past it grows the table, which in a process of several
// threads waits for an RCU grace period (13 ms a launch, measured).
const heldFD = 50

// inheritHigh moves each of files to a descriptor at heldFD or above that
// exec keeps open.
func inheritHigh(files []*os.File) error {
	for _, f := range files {
		// F_DUPFD, not F_DUPFD_CLOEXEC: open across exec (the flock
		// goes with the open file, whichever descriptor holds it).
		if _, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD, heldFD); err != nil {
			return err
		}
	}
	return nil
}

// holdPlaces holds, as runUnconfined holds the project, each place the
// approved call reaches outside it (Spec.Holds: a link's target, local
// code its build files name), or the directory a file is in: the
// ninety-sixth attack run's approved call ran vendor-lib/deploy.sh, a
// link to ../lib, which a session in ../lib rewrote while it ran. A place
// the user cannot write is left: no jailed call writes there. A confined
// call still running in one refuses the call, as in the project.
func holdPlaces(stateDir string, s Spec, what string) ([]*os.File, error) {
	var held []*os.File
	fail := func(err error) ([]*os.File, error) {
		for _, f := range held {
			f.Close()
		}
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range s.Holds {
		dir := p
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			dir = filepath.Dir(p)
		} else if err != nil {
			continue
		}
		if seen[dir] || isAncestorOrSelf(s.Project, dir) || isAncestorOrSelf(dir, s.Project) || unix.Access(dir, unix.W_OK) != nil {
			continue
		}
		seen[dir] = true
		fs, err := undo.HoldForApproved(stateDir, dir, what)
		switch {
		case errors.Is(err, undo.ErrBusy):
			return fail(fmt.Errorf("another call still runs in %s, which this call reaches (a confined call that was running when the approval was checked, or another approved call): what it writes, the approver did not see, and this call could run it. Let that call end, or stop it, then ask for this call again", dir))
		case err != nil:
			return fail(fmt.Errorf("failed to hold %s, which the approved call reaches: %w", dir, err))
		}
		held = append(held, fs...)
	}
	return held, nil
}
