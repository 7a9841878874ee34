//go:build linux

package undo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The directories a record leaves out (node_modules and the like) are
// named in its Left, which the held call's warning turns into "they
// could write, unrecorded, in node_modules/". A record whose before-state
// came from the project's watcher took the last record's Left, and the
// watcher watches no such directory: a node_modules made after the last
// walk (the user's npm install, or a jailed call's) was named by no
// record, and a jailed rewrite of node_modules/lib/index.js after an
// approved `npm test && git push` left a record finished and empty (the
// eighty-eighth attack run).

// watchedRecords runs calls, each a record, with the project's watcher
// running after a first record (a walk); it tries again, at most three
// times, where a record's before-state was not the watcher's (another
// package's test mounting a file system makes the watcher answer "full",
// and the record walks: right, but not what these tests look at).
func watchedRecords(t *testing.T, files map[string]string, calls ...func(proj string) (between, call func())) (proj, st string) {
	t.Helper()
	for try := 1; ; try++ {
		proj, st = project(t, files)
		startWatcher(t, st, proj, 0)
		walk := record(t, st, proj, time.Now, nil)
		if len(walk.meta.Left) != 0 {
			t.Fatalf("the first walk names %q left out: the test shows nothing", walk.meta.Left)
		}
		all := true
		for _, c := range calls {
			between, call := c(proj)
			if between != nil {
				between()
			}
			time.Sleep(2 * time.Millisecond) // a record's name holds its time in ms
			if rec := record(t, st, proj, time.Now, call); rec.meta.Listed == "walk" {
				all = false
			}
		}
		if all || try == 3 {
			return proj, st
		}
		t.Logf("try %d: a record walked (the watcher answered full); again", try)
	}
}

// writeIn writes name (below proj) with body, making its directories.
func writeIn(t *testing.T, proj, name, body string) {
	t.Helper()
	p := filepath.Join(proj, name)
	mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, []byte(body), 0o644))
}

// TestLeftNamedWithWatcher: the user's own npm install between two
// calls (after the last walk), then a jailed call that rewrites
// node_modules/x/index.js: its record changed nothing it recorded, and
// ChangedSince names node_modules left out. So does a node_modules a
// call made itself (in a new directory, sub/). Control: a project with
// no such directory names none.
func TestLeftNamedWithWatcher(t *testing.T) {
	since := time.Now()
	nm := func(proj string) (between, call func()) {
		return func() { writeIn(t, proj, "node_modules/x/index.js", "ok\n") },
			func() { writeIn(t, proj, "node_modules/x/index.js", "evil\n") }
	}
	proj, st := watchedRecords(t, map[string]string{"src/a.js": "a\n"}, nm)
	s, _ := Open(st, proj)
	c, err := s.ChangedSince(since, 20, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Paths) != 0 || !slices.Equal(c.Left, []string{"node_modules"}) {
		t.Errorf("a node_modules the user made after the last walk, rewritten by a call: paths %q, left %q; want no path, node_modules left", c.Paths, c.Left)
	}

	made := func(proj string) (between, call func()) {
		return nil, func() { writeIn(t, proj, "sub/node_modules/y/index.js", "made\n") }
	}
	rewrite := func(proj string) (between, call func()) {
		return nil, func() { writeIn(t, proj, "sub/node_modules/y/index.js", "evil\n") }
	}
	proj, st = watchedRecords(t, map[string]string{"src/a.js": "a\n"}, made, rewrite)
	s, _ = Open(st, proj)
	ms, err := s.List()
	if err != nil || len(ms) != 3 {
		t.Fatalf("records %v %v", ms, err)
	}
	for _, m := range ms[:2] { // newest first
		if !slices.Equal(m.Left, []string{"sub/node_modules"}) {
			t.Errorf("record %s (%s): left %q, want sub/node_modules (the call that made it, and the next)", m.ID, m.Listed, m.Left)
		}
	}

	plain := func(proj string) (between, call func()) {
		return func() { writeIn(t, proj, "src/b.js", "b\n") }, func() { writeIn(t, proj, "lib/c.js", "c\n") }
	}
	proj, st = watchedRecords(t, map[string]string{"src/a.js": "a\n"}, plain, plain)
	s, _ = Open(st, proj)
	if c, err := s.ChangedSince(since, 20, false); err != nil || len(c.Left) != 0 || c.LeftMore || !slices.Contains(c.Paths, "lib/c.js") {
		t.Errorf("control: a project with no directory left out: %+v %v", c, err)
	}
}

// TestLeftMadeByTheCall: without the project's watcher, a node_modules
// the call made, heard by the record's own watch (the project's first
// record) or found by the after-state's walk (a project small enough to
// walk), is named by its record.
func TestLeftMadeByTheCall(t *testing.T) {
	proj, st := project(t, map[string]string{"src/a.js": "a\n"})
	heard := record(t, st, proj, time.Now, func() { writeIn(t, proj, "node_modules/x/index.js", "x\n") })
	mustDo(t, os.RemoveAll(filepath.Join(proj, "node_modules")))
	time.Sleep(2 * time.Millisecond) // a record's name holds its time in ms
	walked := record(t, st, proj, time.Now, func() { writeIn(t, proj, "web/node_modules/y/index.js", "y\n") })
	if heard.watch == nil || heard.watch.failed || walked.watch == nil || !walked.watch.failed {
		t.Fatal("the first record was not watched, or the second was: the test shows less")
	}
	if !slices.Equal(heard.meta.Left, []string{"node_modules"}) || !slices.Equal(walked.meta.Left, []string{"web/node_modules"}) {
		t.Errorf("left: heard %q, walked %q", heard.meta.Left, walked.meta.Left)
	}
	s, _ := Open(st, proj)
	if m, err := s.Meta(walked.meta.ID); err != nil || !slices.Equal(m.Left, walked.meta.Left) {
		t.Errorf("the description written: %+v %v", m.Left, err)
	}
}

// TestLeftGoneWithItsDirectory: a node_modules removed (by the user, or
// by a call) is named by no later record, and one made again is.
func TestLeftGoneWithItsDirectory(t *testing.T) {
	proj, st := watchedRecords(t, map[string]string{"src/a.js": "a\n"},
		func(p string) (func(), func()) {
			return func() { writeIn(t, p, "node_modules/x/index.js", "ok\n") }, nil
		},
		func(p string) (func(), func()) {
			return func() { mustDo(t, os.RemoveAll(filepath.Join(p, "node_modules"))) }, nil
		},
		func(p string) (func(), func()) {
			return nil, func() { writeIn(t, p, "node_modules/x/index.js", "again\n") }
		},
		func(p string) (func(), func()) {
			return nil, func() { mustDo(t, os.RemoveAll(filepath.Join(p, "node_modules"))) }
		},
		func(p string) (func(), func()) { return nil, nil },
	)
	s, _ := Open(st, proj)
	ms, err := s.List()
	if err != nil || len(ms) != 6 {
		t.Fatalf("records %v %v", ms, err)
	}
	// Newest first: the call after a call removed it; the call that
	// removed it (which could write there first); the call that made it
	// again; the call after the user removed it; the call after the user
	// made it.
	want := [][]string{nil, {"node_modules"}, {"node_modules"}, nil, {"node_modules"}}
	for i, w := range want {
		if !slices.Equal(ms[i].Left, w) {
			t.Errorf("record %d from the newest (%s): left %q, want %q", i, ms[i].Listed, ms[i].Left, w)
		}
	}
}

// TestLeftKeptWhenPruned: the record of the call that rewrote
// node_modules/x/index.js (it changed nothing it recorded) is pruned,
// and the pruned trace keeps its Left: PrunedSince and ChangedSince name
// node_modules, though the records kept (after node_modules was removed)
// name none.
func TestLeftKeptWhenPruned(t *testing.T) {
	since := time.Now()
	old := func() time.Time { return time.Now().Add(-2 * KeepFor) } // past KeepFor: MaxRecords bounds them
	proj, st := project(t, map[string]string{"src/a.js": "a\n"})
	startWatcher(t, st, proj, 0)
	record(t, st, proj, old, nil)
	writeIn(t, proj, "node_modules/x/index.js", "ok\n")
	time.Sleep(2 * time.Millisecond)
	rec := record(t, st, proj, old, func() { writeIn(t, proj, "node_modules/x/index.js", "evil\n") })
	if !slices.Equal(rec.meta.Left, []string{"node_modules"}) {
		t.Fatalf("the rewrite's record (%s): left %q", rec.meta.Listed, rec.meta.Left)
	}
	mustDo(t, os.RemoveAll(filepath.Join(proj, "node_modules")))
	s, _ := Open(st, proj)
	for range MaxRecords + pruneSlack + 1 {
		time.Sleep(2 * time.Millisecond) // a record's name holds its time in ms
		record(t, st, proj, old, nil)
	}
	if _, err := s.Meta(rec.meta.ID); err == nil {
		t.Fatal("the rewrite's record was not pruned")
	}
	ms, _ := s.List()
	for _, m := range ms {
		if len(m.Left) != 0 {
			t.Fatalf("a record kept names %q: the test shows nothing", m.Left)
		}
	}
	p, err := s.PrunedSince(since, 20)
	if err != nil || !slices.Equal(p.Left, []string{"node_modules"}) || p.Pruned == 0 {
		t.Errorf("PrunedSince: %+v %v, want node_modules left", p, err)
	}
	c, err := s.ChangedSince(since, 20, false)
	if err != nil || !slices.Equal(c.Left, []string{"node_modules"}) {
		t.Errorf("ChangedSince: %+v %v, want node_modules left", c, err)
	}
	// Control: asked about a time after the pruned record's call.
	if c, err := s.ChangedSince(time.Now(), 20, false); err != nil || len(c.Left) != 0 {
		t.Errorf("control: since now: %+v %v", c, err)
	}
}

// BenchmarkLeftThere: what a record whose before-state is the watcher's
// adds to look again at the last record's left-out directories: one at
// the top (node_modules), and one three deep.
func BenchmarkLeftThere(b *testing.B) {
	for _, left := range [][]string{{"node_modules"}, {"node_modules", "web/app/node_modules"}} {
		b.Run(strings.Join(left, ","), func(b *testing.B) {
			proj, _ := project(b, map[string]string{"node_modules/x/index.js": "x\n", "web/app/node_modules/y/index.js": "y\n"})
			for b.Loop() {
				if got := leftThere(proj, left); len(got) != len(left) {
					b.Fatalf("leftThere: %q", got)
				}
			}
		})
	}
}
