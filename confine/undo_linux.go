//go:build linux

package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/loopguard/loopguard/undo"
)

// undoRecord is a launch's undo record (package undo): before a program
// that can write starts, every file it could write below the project is
// recorded in the undo directory beside the state directory (which no
// capability reads or writes), under the project's lock; finish records
// the after-state once the launch's last process has exited and lets the
// lock go. A launch whose record cannot be taken runs nothing, but where
// the undo directory is on a read-only mount (a sandbox that init did not
// set up): there it runs, beyond undo.
type undoRecord struct {
	r     *undo.Recorder
	state string // the state directory it is kept under
	// waited: the record waited for another call of the project, or an
	// approved call near it, before it began.
	waited bool
}

// awaitProject waits, before a launch that writes plans, for the calls
// that hold its project (undo.AwaitProject), saying why.
func awaitProject(s Spec, e Env, stderr io.Writer) error {
	if !s.Cap.Write || e.Places.StateDir == "" || s.Project == "" {
		return nil
	}
	err := undo.AwaitProject(e.Places.StateDir, s.Project, func() { waitingLine(e, s.Project, stderr) })
	if errors.Is(err, undo.ErrStateReadOnly) || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// waitingLine says what a launch of project waits for.
func waitingLine(e Env, project string, stderr io.Writer) {
	if what, running, _ := undo.RunningApproved(e.Places.StateDir, project); running {
		if what != "" {
			what = ": " + strings.ToValidUTF8(what, "?")
		}
		fmt.Fprintf(stderr, "loopguard: waiting for a call the user approved to run outside the jail in this project (or one that holds it or lies in it) to end%s; what a jailed call writes, it could run (stop it to go on)\n", what)
		return
	}
	fmt.Fprintln(stderr, "loopguard: waiting for another confined call in this project to end (its undo record holds the project)")
}

// benchNoRecord, set at link time (-X) by bench/cmd/launchbench alone,
// builds a launcher that takes no record: the baseline a record's cost is
// measured against. Empty in every build that ships.
var benchNoRecord string

// recordGC is the launcher's GOGC once it takes a record.
const recordGC = 400

// recordUndo takes the record of a launch of s under plan (nothing under
// a capability that does not write).
func recordUndo(s Spec, plan Plan, e Env, stderr io.Writer) (undoRecord, error) {
	if plan.Project == "" || benchNoRecord != "" {
		return undoRecord{}, nil
	}
	// The launcher lives for one call, and what it allocates is mostly
	// the record, kept until the call ends (about 4 MB for 10,000
	// files): the collector's first goal, 4 MB, made it run once on
	// every launch, for nothing to give back. recordGC puts that first
	// goal at 16 MB and lets the heap grow to five times what is live
	// before a collection, which a larger project still gets.
	debug.SetGCPercent(recordGC)
	waited := false
	r, err := undo.Begin(undo.Options{
		StateDir: e.Places.StateDir,
		Project:  plan.Project,
		Held:     plan.Held,
		Command:  strings.Join(s.Argv, " "),
		Waiting: func() {
			waited = true
			waitingLine(e, plan.Project, stderr)
		},
		// A launch of the project killed while this one waited (or
		// before it) is swept now, while no call runs there, before
		// the before-state and the program (recoverOwn).
		Locked: func() { recoverOwn(plan, e, stderr) },
	})
	if errors.Is(err, undo.ErrStateReadOnly) {
		// Inside a sandbox that mounts all but the project and temp
		// read-only (Claude Code's), the call runs confined as ever,
		// beyond undo. Nothing is printed: a line on every call would
		// fill the model's context (docs/undo.md and doctor say it
		// once). Any other failure runs nothing. It takes no lock there
		// either: a call approved to run outside the jail that runs in
		// the project now is asked after instead (a lock is read there).
		if running, err := undo.ApprovedRunning(e.Places.StateDir, plan.Project); err != nil || running {
			return undoRecord{}, errors.New("a call the user approved to run outside the jail runs in this project now (or that could not be asked): what a jailed call writes, it could run, so this one waits for it to end; run it again then")
		}
		return undoRecord{}, nil
	}
	if err != nil {
		return undoRecord{}, err
	}
	return undoRecord{r: r, state: e.Places.StateDir, waited: waited}, nil
}

// finish records the after-state; a failure is said, not fatal: the call
// has run, and undo compares with the next record instead.
func (u undoRecord) finish(stderr io.Writer) {
	if u.r == nil {
		return
	}
	if err := u.r.Finish(); err != nil {
		fmt.Fprintf(stderr, "loopguard: %v\n", err)
	}
}
