//go:build linux

package undo

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The watchers these tests start run in this process, and a record
// that waits syncTimeout (250 ms) for one's answer walks instead: right,
// but not what a test of the watcher's answer looks for. With other
// packages' tests beside these on two cores (go test ./...), an answer
// took longer, and TestDeltaBaseOutlivesItsRecord and TestDeltaBaseGone
// found a walk's listing where they looked for a delta.
func init() { syncTimeout = time.Minute }

// startWatcher runs the project's watcher in this process until the test
// ends, and waits until it listens.
func startWatcher(t testing.TB, st, proj string, maxWatch int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch(ctx, st, proj, time.Hour, maxWatch) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	s, _ := Open(st, proj)
	for i := 0; i < 500; i++ {
		if _, err := os.Lstat(filepath.Join(s.Dir, watchDirName)); err == nil && s.watching() {
			return
		}
		select {
		case err := <-done:
			done <- err // for the cleanup, which waits for it
			t.Fatalf("the watcher ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the watcher did not start listening")
}

// record is one call: Begin, the call's changes, Finish; the recorder
// returned.
func record(t testing.TB, st, proj string, now func() time.Time, call func()) *Recorder {
	t.Helper()
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "call", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if call != nil {
		call()
	}
	mustDo(t, rec.Finish())
	return rec
}

// sameIndex: the index rec wrote for its before-state (merged from the
// last record's where it kept that one's files) is makeIndex's of it.
func sameIndex(t *testing.T, st, proj string, rec *Recorder) {
	t.Helper()
	s, _ := Open(st, proj)
	got, err := os.ReadFile(filepath.Join(s.manifestsDir(), rec.meta.Before+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	// One record for the names of one file (a merged index has one,
	// makeIndex one each).
	want := makeIndex(rec.before, rec.meta.Started.Add(-2*time.Second).UnixNano())
	var uniq []byte
	for b := want; len(b) >= indexRecord; b = b[indexRecord:] {
		if r := b[:indexRecord]; len(uniq) == 0 || string(uniq[len(uniq)-indexRecord:]) != string(r) {
			uniq = append(uniq, r...)
		}
	}
	if string(got) != string(want) && string(got) != string(uniq) {
		t.Errorf("%s: the index of the before-state: %d records, makeIndex's %d (%d files; or other records)", rec.meta.ID, len(got)/indexRecord, len(want)/indexRecord, len(uniq)/indexRecord)
	}
}

// watchFirstWalk starts the project's watcher and takes a first record
// with a clock 5 s ahead, which it returns: a walk (nothing to follow
// yet), the control of a test whose later records follow it.
func watchFirstWalk(t *testing.T, st, proj string) (later func() time.Time) {
	t.Helper()
	startWatcher(t, st, proj, 0)
	later = func() time.Time { return time.Now().Add(5 * time.Second) }
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "walk" {
		t.Fatalf("the first record's before-state: %s, want a walk", rec.meta.Listed)
	}
	return later
}

// beginFollowing begins the record of a call after one that took its
// after-state from the watcher: its before-state is the watcher's, and
// entry for entry what a walk lists.
func beginFollowing(t *testing.T, st, proj string, later func() time.Time) *Recorder {
	t.Helper()
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "call", Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if rec.meta.Listed != "watcher" {
		t.Errorf("the second record's before-state: %s, want the watcher's", rec.meta.Listed)
	}
	sameListing(t, rec.before, walkListing(t, st, proj))
	return rec
}

// walkListing is the listing a walk of the project gives now (each
// file's content hash included), as a record's before-state lists it.
func walkListing(t *testing.T, st, proj string) []Entry {
	t.Helper()
	s, _ := Open(st, proj)
	w := &walker{skip: map[string]bool{".git": true}, s: s, racy: time.Now().Add(time.Hour).UnixNano()}
	ents, err := w.run(proj)
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// sameListing compares a record's before-state with a walk's, entry by
// entry (a directory's times aside: undo compares a directory by its
// mode, same).
func sameListing(t *testing.T, got, want []Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d entries, a walk lists %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		g.Note, w.Note = "", ""
		if g.Kind == Dir && w.Kind == Dir {
			g.Mtime, g.Ctime, w.Mtime, w.Ctime = 0, 0, 0, 0
		}
		if g != w {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// rewriteInPlace rewrites the file f in place with text of its size,
// setting its modification time back, as a human's tool may: its
// directory's times do not move (checked), so only the file's change
// time, or a watch, tells.
func rewriteInPlace(t *testing.T, f, text string) {
	t.Helper()
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(text)) {
		t.Fatalf("%s is %d bytes, the rewrite %d", f, fi.Size(), len(text))
	}
	dir0, _ := os.Stat(filepath.Dir(f))
	w, err := os.OpenFile(f, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteAt([]byte(text), 0)
	mustDo(t, err, w.Close(), os.Chtimes(f, fi.ModTime(), fi.ModTime()))
	if dir1, _ := os.Stat(filepath.Dir(f)); !dir1.ModTime().Equal(dir0.ModTime()) {
		t.Fatal("the rewrite changed the directory: the test shows nothing")
	}
}

// undoLast undoes the project's last record.
func undoLast(t *testing.T, st, proj string) {
	t.Helper()
	s, _ := Open(st, proj)
	u, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	p, err := u.Prepare("")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changed) != 0 {
		t.Errorf("changed since the call: %v", p.Changed)
	}
	if res, err := u.Apply(p); err != nil || len(res.Failed) != 0 {
		t.Fatalf("apply: %v %v", err, res.Failed)
	}
}

// TestWatcherBeforeState: with the project's watcher running, a record
// after one that took its after-state from it looks again only at what
// changed, and its before-state is, entry for entry, what a walk lists:
// between the calls the human rewrote a file in place (same size, its
// modification time set back, its directory's times unchanged), made a
// nested directory with files, removed one, changed a mode, made a link,
// renamed a file, rewrote a file with two names through the name outside
// the project. Undoing the call then puts back the project as the human
// left it. Control: the first record (nothing to follow) walks.
func TestWatcherBeforeState(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n", "d/g.txt": "kept\n", "e/h.txt": "h\n", "top.txt": "top\n", "mv.txt": "mv\n"})
	outside := filepath.Join(filepath.Dir(proj), "outside-link")
	mustDo(t, os.Link(filepath.Join(proj, "e/h.txt"), outside))
	later := watchFirstWalk(t, st, proj)
	f := filepath.Join(proj, "d/f.txt")
	rewriteInPlace(t, f, "human\n")
	mustDo(t, os.MkdirAll(filepath.Join(proj, "n/m"), 0o755), os.WriteFile(filepath.Join(proj, "n/m/x.txt"), []byte("x\n"), 0o644),
		os.WriteFile(filepath.Join(proj, "n/y.txt"), []byte("y\n"), 0o644), os.Remove(filepath.Join(proj, "top.txt")),
		os.Chmod(filepath.Join(proj, "d/g.txt"), 0o600), os.Symlink("d/g.txt", filepath.Join(proj, "ln")),
		os.Rename(filepath.Join(proj, "mv.txt"), filepath.Join(proj, "e/mv2.txt")),
		os.WriteFile(outside, []byte("H\n"), 0o644))
	want := listing(t, proj)
	rec := beginFollowing(t, st, proj, later)
	sameIndex(t, st, proj, rec)
	mustDo(t, os.WriteFile(f, []byte("call!\n"), 0o644), os.RemoveAll(filepath.Join(proj, "n")),
		os.WriteFile(filepath.Join(proj, "e/h.txt"), []byte("call\n"), 0o644), os.WriteFile(filepath.Join(proj, "new.txt"), []byte("new\n"), 0o644), rec.Finish())
	undoLast(t, st, proj)
	if got := listing(t, proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
}

// TestWatcherIndexMerged: a record whose before-state follows the last
// one's keeps most files from it; its index, merged from the last index
// and the records of the files read again, is makeIndex's of its
// before-state, hard links and a file too new to vouch for included.
// Control: the first record, a walk, too. Each record is written whole
// here (deltaShare 0): TestDeltaBeforeState has the ones written as a
// delta, which write no index.
func TestWatcherIndexMerged(t *testing.T) {
	defer func(n int) { deltaShare = n }(deltaShare)
	deltaShare = 0
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f%d.txt", i%3, i)] = fmt.Sprintf("file %d\n", i)
	}
	proj, st := project(t, files)
	mustDo(t, os.Link(filepath.Join(proj, "d0/f0.txt"), filepath.Join(proj, "d1/f0-link.txt")))
	startWatcher(t, st, proj, 0)
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec := record(t, st, proj, later, nil)
	sameIndex(t, st, proj, rec)
	for i, now := range []func() time.Time{later, later, time.Now} {
		f := filepath.Join(proj, fmt.Sprintf("d2/f%d.txt", 3*i+2))
		rec = record(t, st, proj, now, func() { mustDo(t, os.WriteFile(f, []byte("call\n"), 0o644)) })
		if rec.meta.Listed != "watcher" {
			t.Fatalf("record %d's before-state: %s, want the watcher's", i+2, rec.meta.Listed)
		}
		sameIndex(t, st, proj, rec)
	}
}

// TestWatcherUnchanged: a call that writes nothing, in a project nothing
// changed in since the last record, reads no listing (the record names
// the last one); the next such call too; a call that then writes is
// undone as ever.
func TestWatcherUnchanged(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n", "g.txt": "kept\n"})
	startWatcher(t, st, proj, 0)
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	record(t, st, proj, later, nil)
	for i := 0; i < 2; i++ {
		rec := record(t, st, proj, later, nil)
		if rec.meta.Listed != "unchanged" || rec.before != nil {
			t.Fatalf("record %d: before-state %s (listing read: %v), want the last one's, unread", i+2, rec.meta.Listed, rec.before != nil)
		}
	}
	want := listing(t, proj)
	rec := record(t, st, proj, later, func() {
		mustDo(t, os.WriteFile(filepath.Join(proj, "d/f.txt"), []byte("changed\n"), 0o644), os.Remove(filepath.Join(proj, "g.txt")))
	})
	if rec.meta.Listed != "unchanged" {
		t.Errorf("before-state %s, want unchanged", rec.meta.Listed)
	}
	undoLast(t, st, proj)
	if got := listing(t, proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
}

// TestWatcherChainBroken: an answer the last record did not take (a
// stray request between the calls), a directory renamed (the watcher
// answers "full"), or the watcher stopped: the next record walks, and
// undo still puts back what the call did. Control: with none of these,
// the watcher's.
func TestWatcherChainBroken(t *testing.T) {
	for _, c := range []struct {
		name    string
		between func(t *testing.T, s *Store, proj string)
		want    string
	}{
		{"control", func(*testing.T, *Store, string) {}, "watcher"},
		{"stray request", func(t *testing.T, s *Store, _ string) {
			if _, err := s.sync(); err != nil {
				t.Fatal(err)
			}
		}, "walk"},
		{"directory renamed", func(t *testing.T, _ *Store, proj string) {
			mustDo(t, os.Rename(filepath.Join(proj, "d"), filepath.Join(proj, "d2")))
		}, "walk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			proj, st := project(t, map[string]string{"d/f.txt": "first\n", "g.txt": "kept\n"})
			startWatcher(t, st, proj, 0)
			later := func() time.Time { return time.Now().Add(5 * time.Second) }
			record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "g.txt"), []byte("g2\n"), 0o644)) })
			s, _ := Open(st, proj)
			// The human's rewrite in place (same size, modification
			// time set back): only the watcher's answer, or a walk,
			// tells. Then what breaks the chain.
			rewriteInPlace(t, filepath.Join(proj, "d/f.txt"), "human\n")
			c.between(t, s, proj)
			want := listing(t, proj)
			rec := record(t, st, proj, later, func() {
				mustDo(t, os.WriteFile(filepath.Join(proj, "g.txt"), []byte("third\n"), 0o644), os.WriteFile(filepath.Join(proj, "h.txt"), []byte("h\n"), 0o644))
				_ = os.WriteFile(filepath.Join(proj, "d/f.txt"), []byte("call\n"), 0o644)
				_ = os.WriteFile(filepath.Join(proj, "d2/f.txt"), []byte("call\n"), 0o644)
			})
			if rec.meta.Listed != c.want {
				t.Errorf("before-state %s, want %s", rec.meta.Listed, c.want)
			}
			undoLast(t, st, proj)
			if got := listing(t, proj); got != want {
				t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestWatcherStopped: records after the watcher has gone walk (and are
// right); one that ran with it and one without it in a row too.
func TestWatcherStopped(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n"})
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	t.Run("with", func(t *testing.T) {
		startWatcher(t, st, proj, 0)
		record(t, st, proj, later, nil)
	})
	want := listing(t, proj)
	rec := record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d/f.txt"), []byte("x\n"), 0o644)) })
	if rec.meta.Listed != "walk" || rec.synced != "" {
		t.Errorf("without a watcher: before-state %s, synced %q", rec.meta.Listed, rec.synced)
	}
	undoLast(t, st, proj)
	if got := listing(t, proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
}

// TestWatcherCannotWatch: a project with more directories than the
// watcher may watch: it ends, says why in watch.failed, and neither
// StartWatching nor Watch tries again (the process StartWatching starts
// then guards the launches alone); records walk. Control: a bound it fits
// in.
func TestWatcherCannotWatch(t *testing.T) {
	proj, st := project(t, map[string]string{"a/1": "1", "b/2": "2", "c/3": "3"})
	err := watch(context.Background(), st, proj, time.Hour, 2)
	if err == nil || !strings.Contains(err.Error(), "more than 2 directories") {
		t.Fatalf("watch: %v", err)
	}
	s, _ := Open(st, proj)
	if _, err := os.Lstat(filepath.Join(s.Dir, watchFailedName)); err != nil {
		t.Errorf("no %s: %v", watchFailedName, err)
	}
	// With the project's guard running, nothing is started; without it,
	// the process is started for the guard alone (it tries the launcher).
	release, err := HoldGuard(st, proj)
	if err != nil || release == nil {
		t.Fatalf("HoldGuard: %v (held elsewhere: %v)", err, release == nil)
	}
	if err := StartWatching(st, proj, "/nonexistent/launcher"); err != nil {
		t.Errorf("StartWatching after a failure, its guard running, started (or tried to start) one: %v", err)
	}
	release()
	if err := StartWatching(st, proj, "/nonexistent/launcher"); err == nil {
		t.Errorf("StartWatching after a failure, no guard running: started nothing, want the guard started")
	}
	if err := Watch(context.Background(), st, proj); err != nil {
		t.Errorf("Watch within an hour of the failure: %v, want it to return at once", err)
	}
	if rec := record(t, st, proj, nil, nil); rec.synced != "" {
		t.Errorf("a record asked a watcher that failed: %q", rec.synced)
	}
	// Control: room enough.
	startWatcher(t, st, proj, 10)
	if _, err := os.Lstat(filepath.Join(s.Dir, watchFailedName)); err == nil {
		t.Errorf("%s left after a watcher that watches", watchFailedName)
	}
}

// TestMergeIsOverlay: merge (two listings in walk order) is overlay, in
// walk order.
func TestMergeIsOverlay(t *testing.T) {
	before := []Entry{{Path: "a", Kind: Dir}, {Path: "a/x", Kind: File}, {Path: "a/y", Kind: File}, {Path: "a.txt", Kind: File}, {Path: "b", Kind: File}}
	delta := []Entry{{Path: "a/x", Kind: Gone}, {Path: "a/z", Kind: File, Size: 1}, {Path: "a-b", Kind: File}, {Path: "b", Kind: File, Size: 2}, {Path: "c", Kind: Dir}, {Path: "c/d", Kind: File}}
	want := overlay(before, delta)
	slices.SortFunc(want, func(a, b Entry) int { return walkOrder(a.Path, b.Path) })
	if got := merge(before, delta); !slices.Equal(got, want) {
		t.Errorf("merge:\n%+v\nwant:\n%+v", got, want)
	}
	// Random listings: names that sort around '/', deltas that replace,
	// add and remove, first and last entries included.
	rnd := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "a-b", "a.txt", "a0", "b", "c"}
	path := func() string {
		p := names[rnd.IntN(len(names))]
		for range rnd.IntN(3) {
			p += "/" + names[rnd.IntN(len(names))]
		}
		return p
	}
	for round := range 300 {
		set := func(n int) []Entry {
			m := map[string]Entry{}
			for range n {
				p := path()
				m[p] = Entry{Path: p, Kind: []Kind{File, Dir, Gone}[rnd.IntN(3)], Size: int64(rnd.IntN(9))}
			}
			out := slices.Collect(maps.Values(m))
			slices.SortFunc(out, func(a, b Entry) int { return walkOrder(a.Path, b.Path) })
			return out
		}
		before, delta := set(rnd.IntN(40)), set(rnd.IntN(8))
		for i := range before {
			if before[i].Kind == Gone {
				before[i].Kind = File
			}
		}
		want := overlay(before, delta)
		slices.SortFunc(want, func(a, b Entry) int { return walkOrder(a.Path, b.Path) })
		if got := merge(before, delta); !slices.Equal(got, want) {
			t.Fatalf("round %d: merge:\n%+v\nwant:\n%+v", round, got, want)
		}
	}
}

// TestValidRel: a clean relative path, and nothing else.
func TestValidRel(t *testing.T) {
	for p, want := range map[string]bool{"a": true, "a/b": true, ".env": true, "a/.b/c..d": true,
		"": false, "/a": false, "a/": false, "a//b": false, "./a": false, "a/./b": false, "a/..": false, "..": false, "a\x00b": false} {
		if got := validRel(p); got != want {
			t.Errorf("validRel(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestAnswerCutShort: an answer cut anywhere (a pipe of one page) is
// refused, even where what is left ends as a whole answer does (a path
// named "end\n"). Control: the whole answer reads.
func TestAnswerCutShort(t *testing.T) {
	body := "changed\n" + "a/x\x00" + "end\n\x00" + "b\x00"
	whole := answerMagic + "since e:1\nid e:2\n" + "size " + strconv.Itoa(len(body)) + "\n" + body + answerEnd
	a, err := parseAnswer([]byte(whole))
	if err != nil || !a.changed["a/x"] || !a.changed["end\n"] || !a.changed["b"] || a.id != "e:2" {
		t.Fatalf("the whole answer: %+v, %v", a, err)
	}
	for n := 0; n < len(whole); n++ {
		if a, err := parseAnswer([]byte(whole[:n])); err == nil {
			t.Errorf("cut at %d of %d: read as %+v", n, len(whole), a)
		}
	}
}

// TestWatcherHardLinkMadeBetween: a link made in the project between two
// calls (ln d/f.txt e/f2) and a write through it are heard as e/f2
// alone; the record looks again at d/f.txt too, and lists it as a walk
// does.
func TestWatcherHardLinkMadeBetween(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n", "e/g.txt": "g\n"})
	startWatcher(t, st, proj, 0)
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	record(t, st, proj, later, nil)
	mustDo(t, os.Link(filepath.Join(proj, "d/f.txt"), filepath.Join(proj, "e/f2")),
		os.WriteFile(filepath.Join(proj, "e/f2"), []byte("through the other name\n"), 0o644))
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "call", Now: later})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Finish()
	if rec.meta.Listed != "watcher" {
		t.Errorf("before-state %s, want the watcher's", rec.meta.Listed)
	}
	sameListing(t, rec.before, walkListing(t, st, proj))
}

// TestWatcherBlind: a directory made after the watcher started that it
// cannot watch (here: past its bound of watches): every answer from then
// on is "full" and records walk, so what changes in that directory is
// recorded. Control: before it, the watcher's.
func TestWatcherBlind(t *testing.T) {
	proj, st := project(t, map[string]string{"a/1": "1", "b/2": "2"})
	startWatcher(t, st, proj, 3) // the top, a and b
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	record(t, st, proj, later, nil)
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "unchanged" {
		t.Fatalf("control: before-state %s, want unchanged", rec.meta.Listed)
	}
	mustDo(t, os.Mkdir(filepath.Join(proj, "c"), 0o755))
	record(t, st, proj, later, nil)
	mustDo(t, os.WriteFile(filepath.Join(proj, "c/3"), []byte("human\n"), 0o644))
	want := listing(t, proj)
	rec := record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "c/3"), []byte("call\n"), 0o644)) })
	if rec.meta.Listed != "walk" {
		t.Errorf("with a directory unwatched: before-state %s, want a walk", rec.meta.Listed)
	}
	undoLast(t, st, proj)
	if got := listing(t, proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
}

// TestStartWatchingRefusesHome: no watcher is started for a project that
// holds the home directory, or for /. Control: another project's is
// (here: tried, with a launcher that is not there).
func TestStartWatchingRefusesHome(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	st := filepath.Join(root, "state")
	for _, p := range []string{root, "/"} {
		if err := StartWatching(st, p, "/nonexistent/launcher"); err != nil {
			t.Errorf("%s: a watcher was tried: %v", p, err)
		}
	}
	if err := StartWatching(st, filepath.Join(root, "proj"), "/nonexistent/launcher"); err == nil {
		t.Error("control: no watcher was tried for a project")
	}
}

// TestWatchBound: the watcher takes at most half the user's inotify
// watches, read from the kernel's limit; where the limit cannot be read
// it has no bound of its own (the kernel's holds).
func TestWatchBound(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		content string
		want    int
	}{
		{"8192\n", 4096},
		{"1048576", 524288},
		{"3\n", 1},
		{"1\n", 0},
		{"-1\n", 0},
		{"many\n", 0},
		{"", 0},
	} {
		f := filepath.Join(dir, "max_user_watches")
		if err := os.WriteFile(f, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := watchBound(f); got != c.want {
			t.Errorf("watchBound(%q) = %d, want %d", c.content, got, c.want)
		}
	}
	if got := watchBound(filepath.Join(dir, "absent")); got != 0 {
		t.Errorf("watchBound(absent) = %d, want 0", got)
	}
	// The machine's own: half of what the kernel says.
	b, err := os.ReadFile(maxUserWatches)
	if err != nil {
		t.Skipf("no %s here: %v", maxUserWatches, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if got := watchBound(maxUserWatches); got != n/2 || got == 0 {
		t.Errorf("watchBound(%s) = %d, the limit is %d", maxUserWatches, got, n)
	}
}

// needRoot skips a test that mounts a file system where this process may
// not.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system needs root")
	}
}

// mount mounts a file system of type fstype on dir until unmount or the
// end of the test.
func mount(t *testing.T, fstype, dir string) (unmount func()) {
	t.Helper()
	return mountWith(t, fstype, dir, "")
}

// mountWith is mount with the file system's options data.
func mountWith(t *testing.T, fstype, dir, data string) (unmount func()) {
	t.Helper()
	if err := unix.Mount(fstype, dir, fstype, 0, data); err != nil {
		t.Fatalf("mount %s on %s: %v", fstype, dir, err)
	}
	done := false
	unmount = func() {
		if !done {
			done = true
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		}
	}
	t.Cleanup(unmount)
	return unmount
}

// TestWatcherHearsMounts: a file system mounted on a directory of the
// project after the watcher started is not heard through that directory's
// watch, and no event says it came: the next answer is full (the record
// walks), and the watcher then watches what the mount holds; an unmount
// is the same. Control: with no mount, nothing changed is unchanged.
func TestWatcherHearsMounts(t *testing.T) {
	needRoot(t)
	proj, st := project(t, map[string]string{"data/a.txt": "a\n", "g.txt": "kept\n"})
	startWatcher(t, st, proj, 0)
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	record(t, st, proj, later, nil)
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "unchanged" {
		t.Fatalf("control: %s, want unchanged", rec.meta.Listed)
	}
	data := filepath.Join(proj, "data")
	unmount := mount(t, "tmpfs", data)
	mustDo(t, os.WriteFile(filepath.Join(data, "b.txt"), []byte("on the mount\n"), 0o644))
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "walk" {
		t.Errorf("after a mount: %s, want walk", rec.meta.Listed)
	}
	mustDo(t, os.WriteFile(filepath.Join(data, "b.txt"), []byte("changed on the mount\n"), 0o644))
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "watcher" {
		t.Errorf("a change on the mount, watched since: %s, want watcher", rec.meta.Listed)
	}
	unmount()
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "walk" {
		t.Errorf("after the unmount: %s, want walk", rec.meta.Listed)
	}
	if rec := record(t, st, proj, later, nil); rec.meta.Listed != "unchanged" {
		t.Errorf("nothing changed after the unmount's walk: %s, want unchanged", rec.meta.Listed)
	}
}

// TestWatcherRefusesUnheardFS: a project with a directory on a file
// system whose changes inotify does not hear (here /proc, which changes
// with no event; NFS, SMB, 9p and FUSE are refused the same way, by
// type): the watcher does not start, says why in watch.failed, and
// records walk; mounted once it runs, every answer is full until it is
// gone. Control: the same project with nothing mounted is watched.
func TestWatcherRefusesUnheardFS(t *testing.T) {
	needRoot(t)
	proj, st := project(t, map[string]string{"a/1": "1", "p/.keep": ""})
	s, _ := Open(st, proj)
	p := filepath.Join(proj, "p")
	unmount := mountOverlay(t, p)
	err := watch(context.Background(), st, proj, time.Hour, 0)
	if err == nil || !strings.Contains(err.Error(), "p: it is on an overlay") {
		t.Fatalf("watch: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, watchFailedName)); err != nil || !strings.Contains(string(b), "on an overlay") {
		t.Errorf("%s: %q, %v", watchFailedName, b, err)
	}
	unmount()
	// Control: watched.
	startWatcher(t, st, proj, 0)
	if _, err := s.sync(); err != nil {
		t.Fatal(err)
	}
	a, err := s.sync()
	if err != nil || a.full {
		t.Fatalf("control, a second answer: full %v, %v", a != nil && a.full, err)
	}
	// Mounted while it runs: full, and full again while mounted.
	unmount = mountOverlay(t, p)
	for i := 0; i < 2; i++ {
		if a, err = s.sync(); err != nil || !a.full {
			t.Fatalf("answer %d with an overlay mounted in the project: full %v, %v", i+1, a != nil && a.full, err)
		}
	}
	unmount()
	if a, err = s.sync(); err != nil || !a.full {
		t.Fatalf("the answer after the unmount: full %v, %v", a != nil && a.full, err)
	}
	if a, err = s.sync(); err != nil || a.full {
		t.Fatalf("the answer after that: full %v, %v", a != nil && a.full, err)
	}
}

// mountOverlay mounts an overlay (its layers in a temp directory) on dir
// until unmount or the end of the test: a file system whose lower
// layer's changes the watcher would not hear.
func mountOverlay(t *testing.T, dir string) (unmount func()) {
	t.Helper()
	layers := t.TempDir()
	for _, d := range []string{"lower", "upper", "work"} {
		mustDo(t, os.Mkdir(filepath.Join(layers, d), 0o755))
	}
	return mountWith(t, "overlay", dir, fmt.Sprintf("lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", layers, layers, layers))
}

// TestWatcherLeavesKernelFSOut: a kernel file system mounted in the
// project (a chroot's proc and sys) is neither watched nor a reason to
// refuse the project, as a record leaves it out (kernelFS): the records
// chain through the watcher, list it as one Skipped entry, as a walk
// does, and undo the call's write. Control: the first record walks.
func TestWatcherLeavesKernelFSOut(t *testing.T) {
	needRoot(t)
	proj, st := project(t, map[string]string{"rootfs/proc/.keep": "", "rootfs/sys/.keep": "", "src/a.c": "a\n"})
	mount(t, "proc", filepath.Join(proj, "rootfs/proc"))
	mount(t, "sysfs", filepath.Join(proj, "rootfs/sys"))
	later := watchFirstWalk(t, st, proj)
	a := filepath.Join(proj, "src/a.c")
	mustDo(t, os.WriteFile(a, []byte("human\n"), 0o644))
	rec := beginFollowing(t, st, proj, later)
	skipped := 0
	for _, e := range rec.before {
		if e.Kind == Skipped && strings.Contains(e.Note, "file system is mounted here") {
			skipped++
		}
	}
	if skipped != 2 {
		t.Errorf("%d kernel mounts listed as left out, want 2", skipped)
	}
	mustDo(t, os.WriteFile(a, []byte("call\n"), 0o644), rec.Finish())
	undoLast(t, st, proj)
	if b, err := os.ReadFile(a); err != nil || string(b) != "human\n" {
		t.Errorf("after undo: %q %v", b, err)
	}
}

// TestWatchState: what undo --list tells of the watcher: running, or
// why it last failed while that holds it back (an hour), or neither.
func TestWatchState(t *testing.T) {
	proj, st := project(t, map[string]string{"a/1": "1", "b/2": "2", "c/3": "3"})
	s, _ := Open(st, proj)
	if running, failed := s.WatchState(); running || failed != "" {
		t.Errorf("before any watcher: running %v, failed %q", running, failed)
	}
	if err := watch(context.Background(), st, proj, time.Hour, 2); err == nil {
		t.Fatal("a watcher with room for 2 directories watched 4")
	}
	if running, failed := s.WatchState(); running || !strings.Contains(failed, "more than 2 directories") {
		t.Errorf("after a failure: running %v, failed %q", running, failed)
	}
	old := time.Now().Add(-watchRetry - time.Minute)
	mustDo(t, os.Chtimes(filepath.Join(s.Dir, watchFailedName), old, old))
	if running, failed := s.WatchState(); running || failed != "" {
		t.Errorf("a failure an hour old: running %v, failed %q", running, failed)
	}
	startWatcher(t, st, proj, 10)
	if running, failed := s.WatchState(); !running || failed != "" {
		t.Errorf("with a watcher: running %v, failed %q", running, failed)
	}
}

// TestWatcherEndsWithItsStore: the watcher ends when the project's store
// is removed (uninstall, a purge), where no request can reach it again;
// it had run on, its lock and directory deleted, until its idle time.
// Control: with the store in place it runs on, and a record is answered.
func TestWatcherEndsWithItsStore(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n"})
	s, _ := Open(st, proj)
	mustDo(t, s.create())
	done := make(chan error, 1)
	go func() { done <- watch(context.Background(), st, proj, time.Hour, 0) }()
	for i := 0; i < 500 && !s.watching(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if rec := record(t, st, proj, nil, nil); rec.synced == "" {
		t.Fatal("control: the watcher did not answer a record")
	}
	select {
	case err := <-done:
		t.Fatalf("control: the watcher ended with its store in place: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	mustDo(t, os.RemoveAll(s.Dir))
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the watcher ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher still runs 5 s after its store was removed")
	}
}

// TestWatcherForgetsPastAnAnswer: the paths the watcher keeps between two
// answers are bounded by what an answer holds; past it the next answer is
// full and none are kept (the seventy-seventh attack run's call, renaming
// a file through 100,000 long names, had the watcher hold 543 MB). The
// control: a few changes are kept, each once, and answered by name.
func TestWatcherForgetsPastAnAnswer(t *testing.T) {
	d := &daemon{dirty: map[string]bool{}}
	for _, p := range []string{"a/b", "a/b", "c"} {
		d.mark(p)
	}
	if d.full || len(d.dirty) != 2 || d.dirtySize != len("a/b")+len("c")+2 {
		t.Fatalf("control: three marks of two paths: full %v, %d kept, size %d", d.full, len(d.dirty), d.dirtySize)
	}
	long := strings.Repeat("x", 200)
	for i := 0; i < 100000; i++ {
		d.mark(fmt.Sprintf("%s/%d", long, i))
		if d.dirtySize > maxAnswer || len(d.dirty) > maxAnswer/2 {
			t.Fatalf("after %d long names: %d paths kept, %d bytes", i+1, len(d.dirty), d.dirtySize)
		}
	}
	if !d.full || len(d.dirty) != 0 {
		t.Errorf("100,000 long names: full %v, %d kept; want the answer full and nothing kept", d.full, len(d.dirty))
	}
}
