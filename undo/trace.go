package undo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// Traces. What the hook's warning names (ChangedSince) must outlive the
// records it is read from: prune removes the oldest records, and the
// eighty-sixth attack run pushed the record of a jailed Makefile edit out
// with 215 jailed `true` calls, after which the warning on a held `make`
// named nothing. Before a record goes, prune appends what it changed (its
// first maxTracePaths paths) and when its call ran to the store's pruned
// trace. The file tools' writes the hook let through (NoteWrite) are a
// trace of their own: they leave no record, and the same attack run's
// Write of the Makefile under Edit(**) was named by no warning.
//
// A trace is JSON lines, newest last, kept under maxTraceBytes: past it,
// the older half goes, and the time the newest line that went ran is
// written to NAME-cut, so that a reader asked about a time before it says
// that what changed then is no longer known rather than name less.

const (
	prunedTrace  = "pruned"
	writtenTrace = "written"
	// maxTracePaths bounds the paths kept of one pruned record.
	maxTracePaths = 20
)

// maxTraceBytes bounds a trace's file (a test lowers it).
var maxTraceBytes int64 = 256 << 10

// traceLine is one line of a trace: a pruned record (Ran: when its call
// last ran, as RecordsRunningSince tells it; Paths, More; Left, LeftMore:
// the directories it left out, which its call could write unrecorded;
// Unknown: it had no after-state, or no description, what it changed is
// not known) or one file tool's write (Ran: when the hook let it through;
// Paths: the file, absolute; Tool).
type traceLine struct {
	Ran      time.Time `json:"ran"`
	ID       string    `json:"id,omitempty"`
	Tool     string    `json:"tool,omitempty"`
	Paths    []string  `json:"paths,omitempty"`
	More     bool      `json:"more,omitempty"`
	Left     []string  `json:"left,omitempty"`
	LeftMore bool      `json:"left_more,omitempty"`
	Unknown  bool      `json:"unknown,omitempty"`
}

// Written is one write of a file tool the hook let through (NoteWrite).
type Written struct {
	Time time.Time
	Tool string
	Path string // absolute, as the tool named it (or where it lands)
}

// tracePath is the file of trace name.
func (s *Store) tracePath(name string) string { return filepath.Join(s.Dir, name) }

// readTrace returns trace name's lines that ran at or after since, oldest
// first, and whether lines that ran at or after since were cut (the
// trace's cut time is not before since). A missing trace reads as
// empty; a line that does not decode counts as cut: what it held is not
// known.
func (s *Store) readTrace(name string, since time.Time) (lines []traceLine, cut bool, err error) {
	if b, err := fsx.ReadRegular(s.tracePath(name+"-cut"), 100, 0); err == nil {
		t, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
		cut = perr != nil || !t.Before(since)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, true, err
	}
	b, err := fsx.ReadRegular(s.tracePath(name), 2*maxTraceBytes, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, cut, nil
	}
	if err != nil {
		return nil, true, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, int(2*maxTraceBytes))
	for sc.Scan() {
		var l traceLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			cut = true
			continue
		}
		if !l.Ran.Before(since) {
			lines = append(lines, l)
		}
	}
	return lines, cut, nil
}

// appendTrace appends l to trace name, and halves the trace when it has
// grown past maxTraceBytes. The caller holds what keeps two appenders of
// the trace apart (the project's lock for prune, traceLock for NoteWrite).
func (s *Store) appendTrace(name string, l traceLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.tracePath(name), os.O_WRONLY|os.O_APPEND|os.O_CREATE|fsx.NoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	fi, serr := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || serr != nil || fi.Size() <= maxTraceBytes {
		return err
	}
	return s.halveTrace(name)
}

// halveTrace keeps the newer half of trace name, and writes when the
// newest line that went ran to its cut file first: a reader never sees
// the lines gone and the cut not yet moved.
func (s *Store) halveTrace(name string) error {
	data, err := fsx.ReadRegular(s.tracePath(name), 4*maxTraceBytes, 0)
	if err != nil {
		return err
	}
	half := len(data) - int(maxTraceBytes/2)
	i := bytes.IndexByte(data[max(half, 0):], '\n')
	if half <= 0 || i < 0 {
		return nil
	}
	gone, kept := data[:half+i+1], data[half+i+1:]
	var cut time.Time
	for _, ln := range bytes.Split(gone, []byte("\n")) {
		var l traceLine
		if json.Unmarshal(ln, &l) == nil && l.Ran.After(cut) {
			cut = l.Ran
		}
	}
	if len(gone) > 0 && cut.IsZero() {
		cut = time.Now()
	}
	if prev, err := fsx.ReadRegular(s.tracePath(name+"-cut"), 100, 0); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(prev))); err == nil && t.After(cut) {
			cut = t
		}
	}
	if err := fsx.WriteFile(s.tracePath(name+"-cut"), []byte(cut.UTC().Format(time.RFC3339Nano)+"\n"), 0o600, false); err != nil {
		return err
	}
	return fsx.WriteFile(s.tracePath(name), kept, 0o600, false)
}

// PrunedSince is what the pruned trace says of the calls that ran at or
// after since, as Changes: their paths (relative to the project, newest
// record first, each once, at most max; More), the directories they left
// out (the first maxLeft; LeftMore), how many such records were pruned
// (Pruned), how many of them are not known (PrunedUnknown), and whether
// records that ran since were pruned without a trace left (PrunedCut).
func (s *Store) PrunedSince(since time.Time, max int) (Changes, error) {
	var c Changes
	lines, cut, err := s.readTrace(prunedTrace, since)
	c.PrunedCut = cut
	seen, left := map[string]bool{}, map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		c.Pruned++
		if l.Unknown {
			c.PrunedUnknown++
		}
		if appendOnce(&c.Paths, seen, max, l.Paths...) || l.More {
			c.More = true
		}
		c.addLeft(left, l.Left, l.LeftMore)
	}
	return c, err
}

// WrittenSince lists the file tools' writes the hook let through at or
// after since (NoteWrite), newest first, each path once, and whether
// writes since were cut from the trace (cut: not all are known).
func (s *Store) WrittenSince(since time.Time) (ws []Written, cut bool, err error) {
	lines, cut, err := s.readTrace(writtenTrace, since)
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		for _, p := range lines[i].Paths {
			if !seen[p] {
				seen[p] = true
				ws = append(ws, Written{Time: lines[i].Ran, Tool: lines[i].Tool, Path: p})
			}
		}
	}
	return ws, cut, err
}

// Traced reports whether the project has a trace (a pruned record or a
// file tool's write): what the hook's warning must read, as Recorded.
func (s *Store) Traced() bool {
	for _, n := range []string{prunedTrace, writtenTrace} {
		if _, err := os.Lstat(s.tracePath(n)); err == nil {
			return true
		}
	}
	return false
}
