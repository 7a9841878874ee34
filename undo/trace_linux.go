//go:build linux

package undo

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// NoteWrite appends to the project's written trace that a file tool's
// write of path (absolute) was let through at t: the hook calls it for
// each write of Edit, Write, MultiEdit, NotebookEdit (and the other hosts'
// file tools) it allows, so that the warning on a later held call names
// the file (WrittenSince). It makes the store's directory when the
// project has none yet.
func (s *Store) NoteWrite(tool, path string, t time.Time) error {
	f, err := os.OpenFile(filepath.Join(s.Dir, "trace.lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err = s.create(); err != nil {
			return err
		}
		f, err = os.OpenFile(filepath.Join(s.Dir, "trace.lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_EX); err != nil {
		return err
	}
	return s.appendTrace(writtenTrace, traceLine{Ran: t.UTC(), Tool: tool, Paths: []string{path}})
}

// tracePrune appends to the pruned trace what record id changed and when
// its call last ran, before prune removes it (the caller holds the
// project's lock). A record with no after-state is traced as unknown,
// running until now when it has no reason either (a launcher killed).
func (s *Store) tracePrune(id string) error {
	l := traceLine{ID: id}
	if t, ok := latestStart(id); ok {
		l.Ran = t
	}
	ran := false
	for _, name := range []string{"after", "unrecorded"} {
		if fi, err := os.Lstat(filepath.Join(s.recordDir(id), name)); err == nil {
			if fi.ModTime().After(l.Ran) {
				l.Ran = fi.ModTime()
			}
			ran = true
			break
		}
	}
	if !ran {
		l.Ran = time.Now()
	}
	delta, ok, err := s.manifest("records/" + id + "/after")
	switch {
	case err != nil || !ok:
		l.Unknown = true
	default:
		for _, e := range delta {
			if e.Kind == Dir {
				continue
			}
			if len(l.Paths) == maxTracePaths {
				l.More = true
				break
			}
			l.Paths = append(l.Paths, e.Path)
		}
	}
	// The directories it left out, which its call could write
	// unrecorded: a record of a call that rewrote node_modules/lib/index.js
	// changed nothing it recorded (the eighty-eighth attack run). A
	// record with no description is not known.
	if m, err := s.Meta(id); err != nil {
		l.Unknown = true
	} else {
		l.Left, l.LeftMore = m.Left, m.LeftMore > 0
		if len(l.Left) > maxTracePaths {
			l.Left, l.LeftMore = l.Left[:maxTracePaths], true
		}
	}
	if l.Unknown || len(l.Paths) > 0 || len(l.Left) > 0 || l.LeftMore {
		return s.appendTrace(prunedTrace, l)
	}
	// A call that changed nothing and left nothing out leaves no line:
	// the 215 calls of the attack run would otherwise cut the trace
	// itself. Its time is all a reader could want of it, and it changed
	// nothing.
	return nil
}
