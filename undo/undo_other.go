//go:build !linux

package undo

import (
	"errors"
	"os"
	"time"
)

// errUnsupported: records and undo need Linux's openat2.
var errUnsupported = errors.New("undo needs Linux")

// Options are what a record needs to know of its call.
type Options struct {
	StateDir, Project, Command string
	Held                       []string
	Waiting, Locked            func()
	Now                        func() time.Time
}

// Plan is what undoing one record does.
type Plan struct {
	Meta        Meta
	PutBack     []Entry
	Remove      []Entry
	Changed     []string
	NotRecorded []Entry
	AfterFrom   string
	Ended       time.Time
}

// Empty reports whether the plan does nothing.
func (p *Plan) Empty() bool { return true }

// Result is what Apply did.
type Result struct {
	PutBack, Removed []string
	Failed           map[string]string
	Held             map[string]string
	Kept             string
	KeptFiles        int
}

// Session is a store with the project's lock held.
type Session struct{}

// UndoneError: the newest record was undone already.
type UndoneError struct {
	ID string
	At time.Time
}

func (e *UndoneError) Error() string { return "undone already" }

// Lock is unsupported here.
func (s *Store) Lock() (*Session, error) { return nil, errUnsupported }

// WatchState: no watcher runs but on Linux.
func (s *Store) WatchState() (running bool, failed string) { return false, "" }

// Close does nothing.
func (u *Session) Close() error { return nil }

// Prepare is unsupported here.
func (u *Session) Prepare(string) (*Plan, error) { return nil, errUnsupported }

// Apply is unsupported here.
func (u *Session) Apply(*Plan) (Result, error) { return Result{}, errUnsupported }

// WatchSubcommand is the launcher's subcommand that runs the project's
// watcher (Linux only).
const WatchSubcommand = "undo-watch"

// StartWatching does nothing here: records need Linux.
func StartWatching(stateDir, project, launcher string) error { return nil }

// Guarded: no guard runs here.
func Guarded(stateDir, project string) bool { return false }

// WatchMain is unsupported here.
func WatchMain([]string, func(stateDir, project string)) int { return 2 }

// NoteWrite: no trace is kept where undo is not.
func (s *Store) NoteWrite(tool, path string, t time.Time) error { return nil }

// HoldForApproved holds nothing here: no call runs jailed but on Linux,
// so none could change what an approved call runs.
func HoldForApproved(stateDir, project, what string) ([]*os.File, error) {
	return nil, nil
}

// ApprovedRunning: no call holds the lock but on Linux.
func ApprovedRunning(stateDir, project string) (bool, error) { return false, nil }

// AwaitProject: nothing holds a project but on Linux.
func AwaitProject(stateDir, project string, waiting func()) error { return nil }

// RunningApproved: no call holds a project but on Linux.
func RunningApproved(stateDir, project string) (string, bool, error) { return "", false, nil }
