//go:build linux

package undo

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// manifestHead is the first line of the manifest name, and for a delta
// the name of its base.
func manifestHead(t *testing.T, s *Store, name string) (magic, base string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.manifestsDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if strings.HasPrefix(string(b), deltaMagic) && len(lines) == 3 {
		return lines[0] + "\n", lines[1]
	}
	return lines[0] + "\n", ""
}

// deltaProject is a project of 90 files in three directories: 94
// entries, of which a delta may change 11 (deltaShare).
func deltaProject(t *testing.T) (proj, st string) {
	files := map[string]string{}
	for i := range 90 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = fmt.Sprintf("file %d\n", i)
	}
	return project(t, files)
}

// checkDelta: rec's before-state was written as a delta of base, a few
// hundred bytes with no index of its own, and reads back as rec's
// listing field for field.
func checkDelta(t *testing.T, st, proj string, rec *Recorder, base string) {
	t.Helper()
	s, _ := Open(st, proj)
	if rec.meta.Listed != "watcher" {
		t.Errorf("%s: the before-state: %s, want the watcher's", rec.meta.ID, rec.meta.Listed)
	}
	if magic, b := manifestHead(t, s, rec.meta.Before); magic != deltaMagic || b != base {
		t.Errorf("%s: the before-state starts %q on %q, want a delta of %s", rec.meta.ID, magic, b, base)
	}
	if fi, err := os.Stat(filepath.Join(s.manifestsDir(), rec.meta.Before)); err != nil || fi.Size() > 1024 {
		t.Errorf("%s: a delta of %v bytes (%v)", rec.meta.ID, fi.Size(), err)
	}
	if _, err := os.Stat(filepath.Join(s.manifestsDir(), rec.meta.Before+".idx")); err == nil {
		t.Errorf("%s: a delta has an index of its own", rec.meta.ID)
	}
	read, ok, err := s.manifest(rec.meta.Before)
	if err != nil || !ok || !slices.Equal(read, rec.before) {
		t.Errorf("%s: the listing read back differs from the record's (%v %v): %d entries, %d", rec.meta.ID, ok, err, len(read), len(rec.before))
	}
}

// keptCopies reads the listing of each of metas and is the copies they
// name, each of which must be in the store.
func keptCopies(t *testing.T, s *Store, metas []Meta) map[string]bool {
	t.Helper()
	need := map[string]bool{}
	for _, m := range metas {
		ents, ok, err := s.manifest(m.Before)
		if !ok || err != nil {
			t.Fatalf("record %s: its listing: %v %v", m.ID, ok, err)
		}
		for _, e := range ents {
			if e.Hash == "" {
				continue
			}
			need[e.Hash] = true
			if _, err := os.Stat(s.blobPath(e.Hash)); err != nil {
				t.Errorf("record %s needs the copy of %s, pruned: %v", m.ID, e.Path, err)
			}
		}
	}
	return need
}

// TestDeltaBeforeState: with the project's watcher, a call after one
// that changed a file, made one, removed one, changed a mode or renamed
// one writes its before-state as a delta of the first record's whole
// listing (checkDelta). Undoing the calls one by one, newest first, puts
// the project back as it was before each. Control: the first record (a
// walk) is whole, with its index; with deltaShare 0 the same calls write
// whole listings.
func TestDeltaBeforeState(t *testing.T) {
	proj, st := deltaProject(t)
	later := watchFirstWalk(t, st, proj)
	s, _ := Open(st, proj)
	first := mustMeta(t, s)
	if magic, _ := manifestHead(t, s, first.Before); magic != manifestMagic {
		t.Fatalf("the first record's listing starts %q, want a whole manifest", magic)
	}
	if _, err := os.Stat(filepath.Join(s.manifestsDir(), first.Before+".idx")); err != nil {
		t.Fatalf("the first record's index: %v", err)
	}
	p := func(rel string) string { return filepath.Join(proj, rel) }
	calls := []func(){
		func() { mustDo(t, os.WriteFile(p("d0/f00.txt"), []byte("call 1\n"), 0o644)) },
		func() { mustDo(t, os.WriteFile(p("d1/new.txt"), []byte("made\n"), 0o644)) },
		func() { mustDo(t, os.Remove(p("d2/f02.txt"))) },
		func() { mustDo(t, os.Chmod(p("d1/f01.txt"), 0o600)) },
		func() { mustDo(t, os.Rename(p("d0/f03.txt"), p("d2/f03-moved.txt"))) },
		func() { mustDo(t, os.WriteFile(p("d2/f05.txt"), []byte("call 6\n"), 0o644)) },
	}
	var before, ids []string // the project before each call, and its record
	for i, call := range calls {
		before = append(before, listing(t, proj))
		rec, err := Begin(Options{StateDir: st, Project: proj, Command: "call", Now: later})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 { // the call before changed the project
			checkDelta(t, st, proj, rec, first.Before)
			sameListing(t, rec.before, walkListing(t, st, proj))
		}
		call()
		mustDo(t, rec.Finish())
		ids = append(ids, rec.meta.ID)
	}
	for i := len(calls) - 1; i >= 0; i-- {
		s, _ := Open(st, proj)
		undoNow(t, s, ids[i])
		if got := listing(t, proj); got != before[i] {
			t.Errorf("after undoing call %d:\n%s\nwant:\n%s", i+1, got, before[i])
		}
	}

	// Control: whole listings where deltas are off.
	defer func(n int) { deltaShare = n }(deltaShare)
	deltaShare = 0
	record(t, st, proj, later, func() { mustDo(t, os.WriteFile(p("d0/f00.txt"), []byte("again\n"), 0o644)) })
	rec := record(t, st, proj, later, nil)
	if magic, _ := manifestHead(t, s, rec.meta.Before); rec.meta.Listed != "watcher" || magic != manifestMagic {
		t.Errorf("deltaShare 0: the before-state (%s) starts %q, want a whole manifest", rec.meta.Listed, magic)
	}
}

// TestDeltaWholeWhenMuchChanged: a call after one that changed more than
// one entry in deltaShare writes a whole listing, with its index, and
// the calls after it are deltas of that one. Control: after one file
// changed, a delta.
func TestDeltaWholeWhenMuchChanged(t *testing.T) {
	proj, st := deltaProject(t)
	later := watchFirstWalk(t, st, proj)
	s, _ := Open(st, proj)
	first := mustMeta(t, s).Before
	record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d0/f00.txt"), []byte("one\n"), 0o644)) })
	rec := record(t, st, proj, later, func() {
		for i := range 20 {
			mustDo(t, os.WriteFile(filepath.Join(proj, fmt.Sprintf("d%d/f%02d.txt", i%3, i)), []byte("many\n"), 0o644))
		}
	})
	checkDelta(t, st, proj, rec, first)
	rec = record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d1/f01.txt"), []byte("then one\n"), 0o644)) })
	whole := rec.meta.Before
	if magic, _ := manifestHead(t, s, whole); rec.meta.Listed != "watcher" || magic != manifestMagic {
		t.Fatalf("after 20 of 94 entries changed: %s, %q, want a whole listing", rec.meta.Listed, magic)
	}
	if _, err := os.Stat(filepath.Join(s.manifestsDir(), whole+".idx")); err != nil {
		t.Errorf("the whole listing's index: %v", err)
	}
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "call", Now: later})
	if err != nil {
		t.Fatal(err)
	}
	checkDelta(t, st, proj, rec, whole)
	sameListing(t, rec.before, walkListing(t, st, proj))
	mustDo(t, rec.Finish())
}

// TestDeltaIndexIsTheBases: a walk after a delta record (the watcher's
// answer lost: the record's chain removed), the records before it gone
// (pruned), finds the files in the index of the delta's base and reads
// only those that changed since the base: one here. Control: with no
// index at all (the base's removed), it reads every file.
func TestDeltaIndexIsTheBases(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("noIndex=%v", noIndex), func(t *testing.T) {
			proj, st := deltaProject(t)
			later := watchFirstWalk(t, st, proj)
			s, _ := Open(st, proj)
			base := mustMeta(t, s).Before
			record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d0/f00.txt"), []byte("changed\n"), 0o644)) })
			rec := record(t, st, proj, later, nil)
			checkDelta(t, st, proj, rec, base)
			if noIndex {
				mustDo(t, os.Remove(filepath.Join(s.manifestsDir(), base+".idx")))
			}
			metas, err := s.List()
			if err != nil || len(metas) != 3 {
				t.Fatalf("%d records (%v), want 3", len(metas), err)
			}
			mustDo(t, os.RemoveAll(s.recordDir(metas[1].ID)), os.RemoveAll(s.recordDir(metas[2].ID)),
				os.Remove(filepath.Join(s.recordDir(rec.meta.ID), "sync")))
			rec = record(t, st, proj, later, nil)
			want := 1
			if noIndex {
				want = 90
			}
			if rec.meta.Listed != "walk" || rec.meta.Copied != want {
				t.Errorf("the walk: %s, %d files read, want %d", rec.meta.Listed, rec.meta.Copied, want)
			}
		})
	}
}

// TestDeltaBaseOutlivesItsRecord: past MaxRecords+pruneSlack calls that
// each change one file, with the watcher, the first record (whose whole
// listing every later one is a delta of) is pruned, and its listing and
// index stay while a kept record is built on them; every kept record's
// listing reads back with every blob it names, and the newest undoes.
// What no kept record needs goes: the manifests directory holds the base
// and one delta a kept record, not the base's index (its copies of files
// changed since may be swept: no walk may take a file from it unread).
//
// A record walks where the watcher answers "full", as it must when the
// mount table changed (another package's test mounting a file system
// meanwhile): its listing is a new base, and the sequence shows nothing
// of the first one's. Such a sequence is run again, three times at most.
func TestDeltaBaseOutlivesItsRecord(t *testing.T) {
	old := func() time.Time { return time.Now().Add(-2 * KeepFor) } // past KeepFor: MaxRecords bounds them
	var proj, st, f string
	var s *Store
	var first *Recorder
	for try := 1; ; try++ {
		proj, st = deltaProject(t)
		startWatcher(t, st, proj, 0)
		s, _ = Open(st, proj)
		first = record(t, st, proj, old, nil)
		f = filepath.Join(proj, "d0/f00.txt")
		walked := 0
		for i := range MaxRecords + pruneSlack {
			rec := record(t, st, proj, old, func() { mustDo(t, os.WriteFile(f, []byte(fmt.Sprintf("%d\n", i)), 0o644)) })
			if rec.meta.Listed != "watcher" {
				walked++
			}
		}
		if walked == 0 || try == 3 {
			break
		}
		t.Logf("try %d: %d records walked (the watcher answered full); again", try, walked)
	}
	metas, err := s.List()
	if err != nil || len(metas) != MaxRecords {
		t.Fatalf("%d records kept, want %d (%v)", len(metas), MaxRecords, err)
	}
	if slices.ContainsFunc(metas, func(m Meta) bool { return m.ID == first.meta.ID }) {
		t.Fatal("the first record was kept: the test shows nothing")
	}
	base := first.meta.Before
	deltas := map[string]bool{}
	for _, m := range metas {
		magic, b := manifestHead(t, s, m.Before)
		if magic != deltaMagic || b != base {
			t.Errorf("record %s: %q on %q, want a delta of the pruned record's %s", m.ID, magic, b, base)
		}
		deltas[m.Before] = true
	}
	keptCopies(t, s, metas)
	files, _ := os.ReadDir(s.manifestsDir())
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if !slices.Contains(names, base) {
		t.Errorf("%s was pruned; kept records are built on it", base)
	}
	if slices.Contains(names, base+".idx") {
		t.Errorf("the index of a base no kept record names is kept: a walk would take files from it whose copies prune may sweep")
	}
	if len(names) != len(deltas)+1 {
		t.Errorf("%d manifest files kept, want %d (the base, a delta a kept record): %v", len(names), len(deltas)+1, names)
	}
	undoLast(t, st, proj)
	if b, _ := os.ReadFile(f); string(b) != fmt.Sprintf("%d\n", MaxRecords+pruneSlack-2) {
		t.Errorf("after undo: %q", b)
	}
}

// TestDeltaBaseGone: a delta whose base is gone is not a listing (an
// error naming the base), and the record after it walks the project
// instead of building on it. Control: before the base went, it read.
func TestDeltaBaseGone(t *testing.T) {
	proj, st := deltaProject(t)
	later := watchFirstWalk(t, st, proj)
	s, _ := Open(st, proj)
	base := mustMeta(t, s).Before
	record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d0/f00.txt"), []byte("changed\n"), 0o644)) })
	rec := record(t, st, proj, later, func() { mustDo(t, os.WriteFile(filepath.Join(proj, "d1/f01.txt"), []byte("changed\n"), 0o644)) })
	checkDelta(t, st, proj, rec, base)
	delta := rec.meta.Before
	if _, ok, err := s.manifest(delta); !ok || err != nil {
		t.Fatalf("the delta before its base went: %v %v", ok, err)
	}
	mustDo(t, os.Remove(filepath.Join(s.manifestsDir(), base)))
	want := walkListing(t, st, proj)
	if _, _, err := s.manifest(delta); err == nil || !strings.Contains(err.Error(), base) {
		t.Errorf("the delta without its base: %v, want an error naming %s", err, base)
	}
	rec = record(t, st, proj, later, nil)
	if magic, _ := manifestHead(t, s, rec.meta.Before); rec.meta.Listed != "walk" || magic != manifestMagic {
		t.Errorf("the record after: %s, %q; want a walk, written whole", rec.meta.Listed, magic)
	}
	sameListing(t, rec.before, want)
}

// TestChangesOfMerge: merge(base, changesOf(base, after)) is after,
// field for field, over random listings in walk order; what deltaBytes
// writes parses back the same. parseDelta refuses changes out of walk
// order or twice, and a base that is not a name.
func TestChangesOfMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "a/b", "a/b/c", "a-b", "a.b", "a/c", "b", "b/a", "c", "c/d/e", "z"}
	random := func() []Entry {
		var out []Entry
		for _, n := range names {
			if r.IntN(3) > 0 {
				out = append(out, Entry{Path: n, Kind: File, Mode: 0o644, Size: r.Int64N(3), Mtime: r.Int64N(3), Ctime: 1, Dev: 1, Ino: uint64(r.IntN(3)), Hash: strings.Repeat("ab", 32)[:r.IntN(2)*64]})
			}
		}
		slices.SortFunc(out, func(x, y Entry) int { return walkOrder(x.Path, y.Path) })
		return out
	}
	for range 2000 {
		base, after := random(), random()
		d := changesOf(base, after)
		if got := merge(base, d); !slices.Equal(got, after) && (len(got) != 0 || len(after) != 0) {
			t.Fatalf("merge(base, changesOf(base, after)) != after:\nbase %v\nafter %v\nd %v\ngot %v", base, after, d, got)
		}
		name, back, err := parseDelta(deltaBytes("0123456789abcdef0123456789abcdef01234567", d))
		if err != nil || name != "0123456789abcdef0123456789abcdef01234567" || !slices.Equal(back, d) && (len(back) != 0 || len(d) != 0) {
			t.Fatalf("parseDelta(deltaBytes(d)): %q %v %v, want %v", name, back, err, d)
		}
	}
	a, b := Entry{Path: "a", Kind: File}, Entry{Path: "b", Kind: File}
	for _, bad := range [][]byte{
		deltaBytes("0123456789abcdef0123456789abcdef01234567", []Entry{b, a}),
		deltaBytes("0123456789abcdef0123456789abcdef01234567", []Entry{a, a}),
		deltaBytes("../../etc/x", []Entry{a}),
		[]byte(manifestMagic),
	} {
		if _, _, err := parseDelta(bad); err == nil {
			t.Errorf("parseDelta(%q) read it", bad)
		}
	}
	if _, _, err := parseDelta(deltaBytes("0123456789abcdef0123456789abcdef01234567", []Entry{a, b})); err != nil {
		t.Errorf("control: %v", err)
	}
}

// TestDeltaBaseHoldsNoStaleCopies: records that are deltas of a base
// whose own record was pruned need only the base's files they do not
// change; prune sweeps the copies of the others (the twenty-fifth attack
// run: a base's 24 copies of 60 MB, changed by every later call, were kept
// for it, and with the store over its bound every record but the newest
// went). Here two files of 100 kB are rewritten by every call, the store's
// bound is 900 kB: every copy left is one a kept record needs, and more
// than one record is kept. Control: the kept records' listings read, with
// every copy they name.
func TestDeltaBaseHoldsNoStaleCopies(t *testing.T) {
	defer func(b int64) { storedBytes = b }(storedBytes)
	storedBytes = 900 << 10
	proj, st := deltaProject(t)
	r := rand.New(rand.NewPCG(3, 4))
	big := func() []byte {
		b := make([]byte, 100<<10)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for _, n := range []string{"big1", "big2"} {
		mustDo(t, os.WriteFile(filepath.Join(proj, n), big(), 0o644))
	}
	later := watchFirstWalk(t, st, proj)
	s, _ := Open(st, proj)
	base := mustMeta(t, s).Before
	for range 10 {
		record(t, st, proj, later, func() {
			for _, n := range []string{"big1", "big2"} {
				mustDo(t, os.WriteFile(filepath.Join(proj, n), big(), 0o644))
			}
		})
	}
	metas, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) < 2 {
		t.Errorf("%d records kept under a bound of 900 kB with 200 kB copied a call, want 2 or more", len(metas))
	}
	deltas := 0
	for _, m := range metas {
		if magic, b := manifestHead(t, s, m.Before); magic == deltaMagic && b == base {
			deltas++
		}
	}
	need := keptCopies(t, s, metas)
	if deltas == 0 || slices.ContainsFunc(metas, func(m Meta) bool { return m.Before == base }) {
		t.Fatalf("no kept record is a delta of a base no kept record names (%d deltas of it): the test shows nothing", deltas)
	}
	mustDo(t, filepath.WalkDir(s.blobsDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !need[filepath.Base(p)] {
			t.Errorf("the copy %s is kept, and no kept record needs it", filepath.Base(p))
		}
		return err
	}))
}

// TestDeltaUnreadableBaseKeepsAll: where a kept record's listing is there
// but cannot be read (a directory in its place), which base it needs
// cannot be told, and prune removes no listing and no copy, as for a
// record whose description cannot be read (the records past the bounds
// still go). Control: with every listing readable, the same calls' prune
// removes the listings of the records it pruned.
func TestDeltaUnreadableBaseKeepsAll(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("broken=%v", broken), func(t *testing.T) {
			proj, st := deltaProject(t)
			startWatcher(t, st, proj, 0)
			old := func() time.Time { return time.Now().Add(-2 * KeepFor) } // past KeepFor: MaxRecords bounds them
			s, _ := Open(st, proj)
			f := filepath.Join(proj, "d0/f00.txt")
			record(t, st, proj, old, nil)
			for i := range MaxRecords + pruneSlack - 1 { // no prune yet
				record(t, st, proj, old, func() { mustDo(t, os.WriteFile(f, []byte(fmt.Sprintf("%d\n", i)), 0o644)) })
			}
			names := func() []string {
				ents, _ := os.ReadDir(s.manifestsDir())
				var out []string
				for _, e := range ents {
					out = append(out, e.Name())
				}
				return out
			}
			before := names()
			if metas, _ := s.List(); len(metas) != MaxRecords+pruneSlack {
				t.Fatalf("%d records before the prune, want %d", len(metas), MaxRecords+pruneSlack)
			}
			if broken {
				p := filepath.Join(s.manifestsDir(), mustMeta(t, s).Before)
				mustDo(t, os.Remove(p), os.Mkdir(p, 0o700))
			}
			record(t, st, proj, old, func() { mustDo(t, os.WriteFile(f, []byte("last\n"), 0o644)) })
			after := names()
			gone := 0
			for _, n := range before {
				if !slices.Contains(after, n) {
					gone++
				}
			}
			if metas, _ := s.List(); len(metas) > MaxRecords+1 {
				t.Errorf("%d records kept: the prune did not run", len(metas))
			}
			if broken && gone != 0 {
				t.Errorf("%d listings removed while a kept record's base cannot be told", gone)
			}
			if !broken && gone == 0 {
				t.Errorf("control: no listing of a pruned record removed")
			}
		})
	}
}
