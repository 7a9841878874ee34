//go:build linux

package undo

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listing is the tree below dir: every path with its type and mode, a
// link's target, a file's content hash; .git left out.
func listing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", tg)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// project makes a project of files under a fresh directory, with a state
// directory beside it.
func project(t testing.TB, files map[string]string) (proj, stateDir string) {
	t.Helper()
	root := t.TempDir()
	proj, stateDir = filepath.Join(root, "proj"), filepath.Join(root, "state")
	for name, content := range files {
		p := filepath.Join(proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proj, stateDir
}

func mustDo(t testing.TB, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestUndoRestores: a call deletes a directory, an untracked file and a
// .env, rewrites a file, chmods one, adds a link and a file; undo puts
// the tree back as it was, mode and content, and leaves node_modules
// (not recorded) as the call left it.
func TestUndoRestores(t *testing.T) {
	for _, walk := range []bool{false, true} {
		t.Run(fmt.Sprintf("walk=%v", walk), func(t *testing.T) {
			noWatch = walk
			defer func() { noWatch = false }()
			testUndoRestores(t)
		})
	}
}

func testUndoRestores(t *testing.T) {
	proj, st := project(t, map[string]string{"docs/a.md": "a\n", "docs/deep/b.md": "b\n",
		"src/main.go": "package main\n", "src/sub/x.txt": "x\n", "notes.txt": "untracked\n",
		".env": "SECRET=1\n", "README.md": "readme\n", "run.sh": "#!/bin/sh\n", "node_modules/a/index.js": "a\n",
		".git/HEAD": "ref: refs/heads/main\n",
	})
	mustDo(t, os.Chmod(filepath.Join(proj, "run.sh"), 0o755), os.Symlink("README.md", filepath.Join(proj, "link")))
	want := listing(t, proj)
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "python3 -c ..."})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Meta().Left; len(got) != 1 || got[0] != "node_modules" {
		t.Errorf("left out %v, want node_modules", got)
	}
	mustDo(t, os.RemoveAll(filepath.Join(proj, "src")), os.Remove(filepath.Join(proj, "notes.txt")), os.Remove(filepath.Join(proj, ".env")),
		os.WriteFile(filepath.Join(proj, "README.md"), []byte("rewritten, and longer\n"), 0o644),
		os.Chmod(filepath.Join(proj, "run.sh"), 0o600), os.Remove(filepath.Join(proj, "link")), os.Symlink("/etc/passwd", filepath.Join(proj, "link")),
		os.WriteFile(filepath.Join(proj, "new.txt"), []byte("new\n"), 0o644), os.Mkdir(filepath.Join(proj, "newdir"), 0o755),
		os.WriteFile(filepath.Join(proj, "node_modules/a/index.js"), []byte("changed\n"), 0o644),
		os.Rename(filepath.Join(proj, "docs"), filepath.Join(proj, "moved")), os.WriteFile(filepath.Join(proj, "moved/deep/b.md"), []byte("bb\n"), 0o644))
	mustDo(t, rec.Finish())
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
	if len(p.Changed) != 0 || len(p.NotRecorded) != 0 {
		t.Errorf("changed %v, not recorded %v", p.Changed, p.NotRecorded)
	}
	res, err := u.Apply(p)
	if err != nil || len(res.Failed) != 0 {
		t.Fatalf("apply: %v %v", err, res.Failed)
	}
	got := listing(t, proj)
	want = strings.Replace(want, fmt.Sprintf("node_modules/a/index.js -rw-r--r-- %x", sha256.Sum256([]byte("a\n"))),
		fmt.Sprintf("node_modules/a/index.js -rw-r--r-- %x", sha256.Sum256([]byte("changed\n"))), 1)
	if got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
	// Undone: a second undo of the last call says so.
	if _, err := u.Prepare(""); err == nil || !strings.Contains(err.Error(), "undone already") {
		t.Errorf("second undo: %v", err)
	}
}

// TestUndoLeavesLaterChanges: a path changed again after the call is left
// as it is and listed; the rest is reverted.
func TestUndoLeavesLaterChanges(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	rec, err := Begin(Options{StateDir: st, Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("call\n"), 0o644), os.WriteFile(filepath.Join(proj, "b.txt"), []byte("call\n"), 0o644))
	mustDo(t, rec.Finish())
	mustDo(t, os.WriteFile(filepath.Join(proj, "b.txt"), []byte("human\n"), 0o644))
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
	if len(p.Changed) != 1 || p.Changed[0] != "b.txt" || len(p.PutBack) != 1 || p.PutBack[0].Path != "a.txt" {
		t.Fatalf("plan: put back %v, changed %v", p.PutBack, p.Changed)
	}
	if _, err := u.Apply(p); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "a\n", "b.txt": "human\n"} {
		if b, _ := os.ReadFile(filepath.Join(proj, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}

// TestRecordNothingWrittenCopiesNothing: a second record of an unchanged
// project copies no blob (the first, the control, copies every file).
func TestRecordNothingWrittenCopiesNothing(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
	// A clock past the window in which a file's times cannot be trusted.
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.Copied != 2 {
		t.Errorf("first record copied %d files, want 2", m.Copied)
	}
	mustDo(t, rec.Finish())
	rec, err = Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.Copied != 0 || m.CopiedBytes != 0 {
		t.Errorf("second record copied %d files (%d bytes), want none", m.Copied, m.CopiedBytes)
	}
	mustDo(t, rec.Finish())
}

// BenchmarkRecord: a record before and after a call that writes nothing,
// in the project LOOPGUARD_UNDO_BENCH names (a git repository of 10,000
// files for the bound); the store's first record is taken before the
// timer starts.
func BenchmarkRecord(b *testing.B) {
	proj := os.Getenv("LOOPGUARD_UNDO_BENCH")
	if proj == "" {
		b.Skip("LOOPGUARD_UNDO_BENCH names no project")
	}
	st := filepath.Join(b.TempDir(), "state")
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		b.Fatal(err)
	}
	mustDo(b, rec.Finish())
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
		if err != nil {
			b.Fatal(err)
		}
		mustDo(b, rec.Finish())
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkRecordWatched: a record before and after a call, with the
// project's watcher running (as the hook starts it), in a generated
// project of 10,000 files (100 directories of 100), with and without a
// node_modules of 100 files (which every record names left out, and looks
// at again: leftThere). The call writes nothing (the record names the last
// listing) or appends to one file (the watcher's changes are looked at).
func BenchmarkRecordWatched(b *testing.B) {
	for _, c := range []struct {
		name        string
		nodeModules bool
		write       bool
	}{
		{"nothing", false, false},
		{"nothing,node_modules", true, false},
		{"one-file", false, true},
		{"one-file,node_modules", true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			files := map[string]string{}
			body := strings.Repeat("0123456789abcdef", 255)
			for d := range 100 {
				for f := range 100 {
					files[fmt.Sprintf("pkg%03d/file%03d.go", d, f)] = body
				}
			}
			if c.nodeModules {
				for f := range 100 {
					files[fmt.Sprintf("node_modules/p%03d/index.js", f)] = body
				}
			}
			proj, st := project(b, files)
			startWatcher(b, st, proj, 0)
			later := func() time.Time { return time.Now().Add(5 * time.Second) }
			var call func()
			if c.write {
				f := filepath.Join(proj, "pkg000/file000.go")
				call = func() { appendTo(b, f, "x\n") }
			}
			record(b, st, proj, later, nil)
			record(b, st, proj, later, call)
			want := "unchanged"
			if c.write {
				want = "watcher"
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			var last *Recorder
			for b.Loop() {
				last = record(b, st, proj, later, call)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			if last.meta.Listed != want || c.nodeModules != slices.Contains(last.meta.Left, "node_modules") {
				b.Fatalf("the last record: listed %s, left %q", last.meta.Listed, last.meta.Left)
			}
		})
	}
}

// appendTo appends text to the file f.
func appendTo(t testing.TB, f, text string) {
	t.Helper()
	w, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteString(text)
	mustDo(t, err, w.Close())
}

// cpuTime is the CPU time (user and system, ns) this process has used.
func cpuTime() int64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestWalkOrder: a walk lists each directory's names sorted and a
// directory right before what it holds, which is walkOrder; find and
// below search it (names that sort around '/': "a-b", "a.txt", "a0").
func TestWalkOrder(t *testing.T) {
	proj, _ := project(t, map[string]string{"a/x": "", "a/b/y": "", "a-b": "", "a.txt": "", "a0/z": "", "ab": "", "A": ""})
	w := &walker{skip: map[string]bool{}}
	ents, err := w.run(proj)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Path)
	}
	want := []string{"A", "a", "a/b", "a/b/y", "a/x", "a-b", "a.txt", "a0", "a0/z", "ab"}
	if !slices.Equal(got, want) {
		t.Fatalf("walk order %q, want %q", got, want)
	}
	if !slices.IsSortedFunc(ents, func(x, y Entry) int { return walkOrder(x.Path, y.Path) }) {
		t.Error("the walk is not in walkOrder")
	}
	r := &Recorder{before: ents}
	for _, p := range want {
		if e := r.find(p); e == nil || e.Path != p {
			t.Errorf("find(%q) = %v", p, e)
		}
	}
	for _, p := range []string{"a/c", "b", "a.t", ""} {
		if e := r.find(p); e != nil {
			t.Errorf("find(%q) = %v, want none", p, e.Path)
		}
	}
	for p, want := range map[string][]string{"a": {"a/b", "a/b/y", "a/x"}, "a/b": {"a/b/y"}, "a0": {"a0/z"}, "a.txt": nil, "ab": nil} {
		var got []string
		for _, e := range r.below(p) {
			got = append(got, e.Path)
		}
		if !slices.Equal(got, want) {
			t.Errorf("below(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestIndexVouchesOnlyForOldKeys: a record lists a file changed less than
// 2 s before it in its index without vouching for it (a second write in
// the same clock tick would leave its key as it was): the next record
// reads it again, and once its key is old enough, writes the index again
// so that the record after copies nothing. Its blob stays named in the
// index, for pruning.
func TestIndexVouchesOnlyForOldKeys(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
	copied := func(now func() time.Time) int {
		t.Helper()
		rec, err := Begin(Options{StateDir: st, Project: proj, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, rec.Finish())
		return rec.Meta().Copied
	}
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	if n := copied(time.Now); n != 2 {
		t.Fatalf("first record copied %d, want 2", n)
	}
	s, _ := Open(st, proj)
	x, _ := s.latestIndex()
	if len(x.recs) != 2*indexRecord {
		t.Fatalf("the index names %d bytes, want both files' blobs", len(x.recs))
	}
	used, err := s.usedBlobs(map[string]bool{mustMeta(t, s).Before: true})
	if err != nil || len(used) != 2 {
		t.Errorf("blobs named for pruning: %v %v", used, err)
	}
	x.unmap()
	if n := copied(time.Now); n != 2 {
		t.Errorf("a record while the keys are recent copied %d, want 2 (the index vouched for them)", n)
	}
	if n := copied(later); n != 2 {
		t.Errorf("the first record after the window copied %d, want 2", n)
	}
	if n := copied(later); n != 0 {
		t.Errorf("control: the next record copied %d, want 0 (the index written again vouches for them)", n)
	}
}

func mustMeta(t *testing.T, s *Store) Meta {
	t.Helper()
	ms, err := s.List()
	if err != nil || len(ms) == 0 {
		t.Fatal(err, ms)
	}
	return ms[0]
}

// TestPrune: past MaxRecords+pruneSlack records of a project that changes
// every call, the oldest go with the manifests and blobs only they
// needed; every blob a kept record needs stays (and a stray file in the
// blobs goes). Control: the newest record still undoes.
func TestPrune(t *testing.T) {
	proj, st := project(t, map[string]string{"keep.txt": "kept\n", "f.txt": "0\n"})
	// Records of two days ago: past KeepFor, so MaxRecords bounds them.
	later := func() time.Time { return time.Now().Add(-2 * KeepFor) }
	s, _ := Open(st, proj)
	for i := range MaxRecords + pruneSlack + 1 {
		rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			mustDo(t, os.MkdirAll(filepath.Join(s.blobsDir(), "ab"), 0o700), os.WriteFile(filepath.Join(s.blobsDir(), "ab", "stray"), []byte("x"), 0o600))
		}
		mustDo(t, os.WriteFile(filepath.Join(proj, "f.txt"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644))
		mustDo(t, rec.Finish())
	}
	metas, err := s.List()
	if err != nil || len(metas) != MaxRecords {
		t.Fatalf("%d records kept, want %d (%v)", len(metas), MaxRecords, err)
	}
	need := map[string]bool{}
	for _, m := range metas {
		ents, ok, err := s.manifest(m.Before)
		if err != nil || !ok {
			t.Fatalf("record %s: manifest %v %v", m.ID, ok, err)
		}
		for _, e := range ents {
			if e.Hash != "" {
				need[e.Hash] = true
				if _, err := os.Stat(s.blobPath(e.Hash)); err != nil {
					t.Errorf("record %s needs the blob of %s, pruned: %v", m.ID, e.Path, err)
				}
			}
		}
	}
	var blobs []string
	mustDo(t, filepath.WalkDir(s.blobsDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs = append(blobs, filepath.Base(p))
		}
		return err
	}))
	for _, b := range blobs {
		if !need[b] {
			t.Errorf("blob %s kept, no record needs it", b)
		}
	}
	if manifests, _ := os.ReadDir(s.manifestsDir()); len(manifests) != 2*MaxRecords {
		t.Errorf("%d manifest files kept, want %d (each with its index)", len(manifests), 2*MaxRecords)
	}
	// Control: the newest record undoes.
	u, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	p, err := u.Prepare("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Apply(p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "f.txt")); string(b) != fmt.Sprintf("%d\n", MaxRecords+pruneSlack) {
		t.Errorf("f.txt after undo = %q", b)
	}
}

// TestPruneCountsManifests: the manifests count toward MaxBlobBytes as
// the copies do. Each call that changes a file of a large project writes
// a manifest of the whole project (391 MB each in the eighteenth attack
// run's deep tree), and recent records are kept up to MaxRecentRecords:
// the store grew without bound while the copies stayed small. Control:
// under a bound the manifests fit, every record stays.
func TestPruneCountsManifests(t *testing.T) {
	files := map[string]string{"f.txt": "0\n"}
	for i := range 400 {
		files[fmt.Sprintf("%s%03d", strings.Repeat("m", 100), i)] = ""
	}
	defer func(b int64) { storedBytes = b }(storedBytes)
	for _, bound := range []int64{200 << 10, 64 << 20} {
		proj, st := project(t, files)
		storedBytes = bound
		for i := range 10 {
			rec, err := Begin(Options{StateDir: st, Project: proj, Command: "edit"})
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, os.WriteFile(filepath.Join(proj, "f.txt"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644), rec.Finish())
		}
		s, _ := Open(st, proj)
		metas, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		size := s.manifestBytes()
		if bound == 200<<10 && (size > bound || len(metas) == 10 || len(metas) == 0) {
			t.Errorf("10 manifests of about 45 KB under a bound of 200 KiB: %d bytes of manifests, %d records kept", size, len(metas))
		}
		if bound != 200<<10 && len(metas) != 10 {
			t.Errorf("under a bound of 64 MiB (control): %d records kept, want 10", len(metas))
		}
	}
}

// daysAgo is two days ago: a record that old is past KeepFor.
func daysAgo() time.Time { return time.Now().Add(-2 * KeepFor) }

// TestPruneKeepsRecent: the eighteenth attack run pushed the record of an
// rm out of the history with 30 calls that changed nothing. A record of
// the last KeepFor stays past MaxRecords, up to MaxRecentRecords: after
// the rm and 40 calls more, the rm's record is there and undoes it.
// Control: records older than KeepFor are still bounded by MaxRecords
// (TestPrune), and past MaxRecentRecords the oldest recent one goes.
func TestPruneKeepsRecent(t *testing.T) {
	proj, st := project(t, map[string]string{"precious.txt": "keep\n", "f.txt": "0\n"})
	s, _ := Open(st, proj)
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "rm precious.txt"})
	if err != nil {
		t.Fatal(err)
	}
	rm := rec.ID()
	mustDo(t, os.Remove(filepath.Join(proj, "precious.txt")), rec.Finish())
	for range 2*MaxRecords + pruneSlack {
		rec, err := Begin(Options{StateDir: st, Project: proj, Command: "true"})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, rec.Finish())
	}
	if _, err := s.Meta(rm); err != nil {
		t.Fatalf("the rm's record went after %d calls that changed nothing: %v", 2*MaxRecords+pruneSlack, err)
	}
	undoNow(t, s, rm)
	if b, err := os.ReadFile(filepath.Join(proj, "precious.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("precious.txt after undo of the rm: %q %v", b, err)
	}
	// Control: past MaxRecentRecords the oldest goes, however young.
	ids := make([]string, MaxRecentRecords+1)
	for i := range ids {
		ids[i] = newID(time.Now().Add(time.Duration(i) * time.Millisecond))
	}
	if !mayGo(ids, time.Now()) || mayGo(ids[1:], time.Now()) {
		t.Errorf("mayGo of %d recent records: %v, of %d: %v", len(ids), mayGo(ids, time.Now()), len(ids)-1, mayGo(ids[1:], time.Now()))
	}
}

// TestIndexLookup: the galloping search finds every file the index
// vouches for and nothing else, whatever the order of the lookups.
func TestIndexLookup(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var ents []Entry
	for i := range 500 {
		ino := uint64(rnd.IntN(300)) // repeated inodes: several devices
		ents = append(ents, Entry{Path: fmt.Sprint(i), Kind: File, Dev: uint64(i), Ino: ino, Size: int64(i), Mtime: 1, Ctime: 2,
			Hash: fmt.Sprintf("%064x", i)})
	}
	x := index{recs: makeIndex(ents, 3)}
	for _, order := range []string{"walk", "inode", "random"} {
		switch order {
		case "inode":
			slices.SortFunc(ents, func(a, b Entry) int { return compareKey(a.key(), b.key()) })
		case "random":
			rnd.Shuffle(len(ents), func(i, j int) { ents[i], ents[j] = ents[j], ents[i] })
		}
		for _, e := range ents {
			if got := x.lookup(e.key()); got != e.Hash {
				t.Fatalf("%s order: lookup of %s = %q, want %q", order, e.Path, got, e.Hash)
			}
			miss := e.key()
			miss.ctime++
			if got := x.lookup(miss); got != "" {
				t.Fatalf("%s order: a changed key found %q", order, got)
			}
			miss = e.key()
			miss.ino += 1000
			if got := x.lookup(miss); got != "" {
				t.Fatalf("%s order: an unknown inode found %q", order, got)
			}
		}
	}
	// Unvouched (changed at or after the record's margin): never found.
	x = index{recs: makeIndex(ents, 2)}
	if got := x.lookup(ents[0].key()); got != "" {
		t.Errorf("an unvouched file found: %q", got)
	}
	if (&index{}).lookup(ents[0].key()) != "" {
		t.Error("the empty index found something")
	}
}

// TestUnconfinedChangeBetweenCallsIsRecorded: a file rewritten in place
// between two calls by a process the launcher did not start (the human,
// an editor), same size, its modification time set back, with its
// directory unchanged, is copied again by the second call's record, and
// undoing the second call puts back that rewrite, not what the first
// record saw. Control: a file nobody touched is not copied again.
func TestUnconfinedChangeBetweenCallsIsRecorded(t *testing.T) {
	proj, st := project(t, map[string]string{"d/f.txt": "first\n", "d/g.txt": "kept\n"})
	f := filepath.Join(proj, "d/f.txt")
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, rec.Finish())
	// The unconfined rewrite: in place, same size, mtime set back.
	rewriteInPlace(t, f, "human\n")
	rec, err = Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.Copied != 1 {
		t.Errorf("second record copied %d files, want 1 (the rewritten one; g.txt is vouched for by the index)", m.Copied)
	}
	mustDo(t, os.WriteFile(f, []byte("call!\n"), 0o644), rec.Finish())
	undoLast(t, st, proj)
	for name, want := range map[string]string{"d/f.txt": "human\n", "d/g.txt": "kept\n"} {
		if b, _ := os.ReadFile(filepath.Join(proj, name)); string(b) != want {
			t.Errorf("%s after undo = %q, want %q", name, b, want)
		}
	}
}

// TestIndexMerged: the index a record writes after a call changed some
// files (mergeIndex: the last index's records it found a file in, and
// those of the files it read) is the one makeIndex makes of its listing,
// byte for byte: a file rewritten, one added, one removed, one renamed,
// one of two names of a file removed. Control: the record read only what
// changed (and nothing vouched for the rewritten file's old content).
func TestIndexMerged(t *testing.T) {
	files := map[string]string{"keep.txt": "k\n", "rewrite.txt": "r\n", "gone.txt": "g\n", "d/move.txt": "m\n", "d/e/f.txt": "f\n"}
	for i := range 40 {
		files[fmt.Sprintf("many/%02d", i)] = fmt.Sprint(i)
	}
	proj, st := project(t, files)
	mustDo(t, os.Link(filepath.Join(proj, "keep.txt"), filepath.Join(proj, "keep2.txt")))
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	record := func() Meta {
		t.Helper()
		rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, rec.Finish())
		return rec.Meta()
	}
	record()
	mustDo(t, os.WriteFile(filepath.Join(proj, "rewrite.txt"), []byte("R!\n"), 0o644),
		os.WriteFile(filepath.Join(proj, "new.txt"), []byte("n\n"), 0o644),
		os.Remove(filepath.Join(proj, "gone.txt")),
		os.Remove(filepath.Join(proj, "keep2.txt")),
		os.Rename(filepath.Join(proj, "d/move.txt"), filepath.Join(proj, "moved.txt")))
	m := record()
	if m.Copied != 4 {
		t.Errorf("the record copied %d files, want 4 (rewritten, new, renamed and keep.txt, whose other name went: their change times moved)", m.Copied)
	}
	s, _ := Open(st, proj)
	ents, ok, err := s.manifest(m.Before)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	got, err := os.ReadFile(filepath.Join(s.manifestsDir(), m.Before+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	want := makeIndex(ents, later().Add(-2*time.Second).UnixNano())
	if len(got) == 0 || string(got) != string(want) {
		t.Errorf("the merged index (%d bytes) is not makeIndex's (%d bytes)", len(got), len(want))
	}
	x := index{recs: got}
	for _, e := range ents {
		if e.Kind == File && x.lookup(e.key()) != e.Hash {
			t.Errorf("%s: the index does not vouch for its blob", e.Path)
		}
	}
}

// TestMergeIndexIsMakeIndex: mergeIndex of a random old index, a random
// part of it found, and random fresh records is makeIndex of the files
// found and read.
func TestMergeIndexIsMakeIndex(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for round := range 50 {
		var old, found, all []Entry
		for i := range rnd.IntN(300) {
			old = append(old, Entry{Path: fmt.Sprint(i), Kind: File, Dev: uint64(rnd.IntN(3)), Ino: uint64(rnd.IntN(1000)), Size: int64(i), Mtime: 1, Ctime: 2,
				Hash: fmt.Sprintf("%064x", rnd.Uint64())})
		}
		oldIdx := makeIndex(old, 10)
		x := index{recs: oldIdx}
		hit := make([]uint64, (len(oldIdx)/indexRecord+63)/64)
		for _, e := range old {
			if rnd.IntN(3) == 0 {
				continue
			}
			i := x.findRec(e.key())
			if i < 0 {
				t.Fatal("an old file not found")
			}
			hit[i/64] |= 1 << (i % 64)
			found = append(found, e)
		}
		var fresh []byte
		all = append(all, found...)
		for i := range rnd.IntN(50) {
			e := Entry{Path: fmt.Sprint("n", i), Kind: File, Dev: uint64(rnd.IntN(3)), Ino: uint64(rnd.IntN(1000)), Size: int64(i), Mtime: 3, Ctime: int64(4 + rnd.IntN(12)),
				Hash: fmt.Sprintf("%064x", rnd.Uint64())}
			fresh = appendRecord(fresh, &e, 10)
			all = append(all, e)
		}
		if got, want := mergeIndex(oldIdx, hit, fresh), makeIndex(all, 10); string(got) != string(want) {
			t.Fatalf("round %d: mergeIndex (%d bytes) differs from makeIndex (%d bytes)", round, len(got), len(want))
		}
	}
}

// TestSmallProjectWalksAfter: a project whose last record listed at most
// walkAfterMax entries is not watched (no inotify instance, no closeAway
// process); its after-state is a second walk, which undo reverts from as
// from a watch. The first record of a project is watched. Control: above
// the bound, the second record is watched.
func TestSmallProjectWalksAfter(t *testing.T) {
	for _, bound := range []int{500, 2} {
		t.Run(fmt.Sprintf("walkAfterMax=%d", bound), func(t *testing.T) {
			old := walkAfterMax
			walkAfterMax = bound
			defer func() { walkAfterMax = old }()
			proj, st := project(t, map[string]string{"d/f.txt": "first\n", "g.txt": "kept\n"})
			later := func() time.Time { return time.Now().Add(5 * time.Second) }
			rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, rec.Finish())
			if rec.watch.closer == 0 {
				t.Error("the first record was not watched")
			}
			rec, err = Begin(Options{StateDir: st, Project: proj, Now: later})
			if err != nil {
				t.Fatal(err)
			}
			mustDo(t, os.WriteFile(filepath.Join(proj, "d/f.txt"), []byte("call!\n"), 0o644),
				os.WriteFile(filepath.Join(proj, "d/new.txt"), []byte("new\n"), 0o644), os.Remove(filepath.Join(proj, "g.txt")), rec.Finish())
			entries := rec.Meta().Entries
			if watched, want := rec.watch.closer != 0, entries > bound; watched != want {
				t.Errorf("a record of %d entries (bound %d) watched: %v, want %v", entries, bound, watched, want)
			}
			undoLast(t, st, proj)
			for name, want := range map[string]string{"d/f.txt": "first\n", "g.txt": "kept\n"} {
				if b, _ := os.ReadFile(filepath.Join(proj, name)); string(b) != want {
					t.Errorf("%s after undo = %q, want %q", name, b, want)
				}
			}
			if _, err := os.Lstat(filepath.Join(proj, "d/new.txt")); !os.IsNotExist(err) {
				t.Errorf("the call's new file is still there after undo (%v)", err)
			}
		})
	}
}

// TestRecordManyLeftOut: a call that made hundreds of node_modules under
// long names (the sixteenth attack run: 320 of them, 14 names of 250
// bytes deep) wrote a description over what Meta reads, and its record,
// and every later one, went from List, undo and the hook's warning. A
// record names the first maxLeft and counts the rest; it and a later one
// are listed, and undo of the call puts back what it removed (control).
func TestRecordManyLeftOut(t *testing.T) {
	files := map[string]string{"notes.txt": "keep\n"}
	long := strings.Repeat(strings.Repeat("d", 250)+"/", 12)
	for i := range 400 {
		files[fmt.Sprintf("%sp%d/node_modules/x", long, i)] = "x\n"
	}
	proj, st := project(t, files)
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "rm notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); len(m.Left) != maxLeft || m.LeftMore != 400-maxLeft {
		t.Errorf("left out %d named and %d more, want %d and %d", len(m.Left), m.LeftMore, maxLeft, 400-maxLeft)
	}
	mustDo(t, os.Remove(filepath.Join(proj, "notes.txt")))
	mustDo(t, rec.Finish())
	later, err := Begin(Options{StateDir: st, Project: proj, Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, later.Finish())
	s, _ := Open(st, proj)
	metas, err := s.List()
	if err != nil || len(metas) != 2 || metas[1].ID != rec.ID() || metas[1].LeftMore != 400-maxLeft {
		t.Fatalf("listed %+v %v, want both records", metas, err)
	}
	undoNow(t, s, rec.ID())
	if b, err := os.ReadFile(filepath.Join(proj, "notes.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("notes.txt after undo: %q %v", b, err)
	}
}

// TestRecordCopyBudget: one record copies at most recordBytes
// (MaxRecordBytes), so that no one call pushes the blobs past
// MaxBlobBytes and prunes the records before it: the sixteenth attack
// run's sparse files of 64 MiB, a few KB on disk, were copied whole, and
// the record of an earlier rm went. Past the budget a file is listed as
// not copied. Control: within it, what the call removed is put back.
func TestRecordCopyBudget(t *testing.T) {
	defer func(b int64) { recordBytes = b }(recordBytes)
	recordBytes = 3 << 20
	files := map[string]string{"precious.txt": "keep\n"}
	proj, st := project(t, files)
	for i := range 5 {
		f := filepath.Join(proj, fmt.Sprintf("s%d", i))
		mustDo(t, os.WriteFile(f, []byte{byte('a' + i)}, 0o644), os.Truncate(f, 1<<20))
	}
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "rm precious.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.CopiedBytes > recordBytes {
		t.Errorf("copied %d bytes, over the budget %d", m.CopiedBytes, recordBytes)
	}
	mustDo(t, os.Remove(filepath.Join(proj, "precious.txt")), rec.Finish())
	s, _ := Open(st, proj)
	undoNow(t, s, rec.ID())
	if b, err := os.ReadFile(filepath.Join(proj, "precious.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("precious.txt after undo (control): %q %v", b, err)
	}
	var over int
	b, err := os.ReadFile(filepath.Join(s.manifestsDir(), rec.Meta().Before))
	if err != nil {
		t.Fatal(err)
	}
	over = strings.Count(string(b), "reached 3 MiB")
	if over == 0 {
		t.Errorf("no file was listed as not copied past the budget:\n%s", b)
	}
}

// TestRecordPathBytesBound: a project whose paths together are longer
// than pathBytes (MaxPathBytes) is not recorded, as one with more than
// MaxEntries entries is not, and the walk stops before it builds them:
// the eighteenth attack run's 100,000 empty files in a directory near
// PATH_MAX deep cost a record about 1 GB. Control: under the bound the
// same project is recorded.
func TestRecordPathBytesBound(t *testing.T) {
	proj, st := project(t, map[string]string{"README.md": "hi\n"})
	deep := filepath.Join(proj, strings.Repeat("d", 200), strings.Repeat("e", 200), strings.Repeat("f", 200))
	mustDo(t, os.MkdirAll(deep, 0o755))
	for i := range 1500 {
		f := filepath.Join(deep, fmt.Sprintf("%s%04d", strings.Repeat("n", 180), i))
		mustDo(t, os.WriteFile(f, nil, 0o644))
	}
	// 1,500 paths of about 800 bytes: 1.2 MB.
	defer func(b int) { pathBytes = b }(pathBytes)
	pathBytes = 1 << 20
	_, err := Begin(Options{StateDir: st, Project: proj, Command: "true"})
	if err == nil || !strings.Contains(err.Error(), "longer than 1 MiB together") {
		t.Fatalf("a record of 1.2 MB of paths under a bound of 1 MiB: %v", err)
	}
	pathBytes = 2 << 20
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "true"})
	if err != nil {
		t.Fatalf("under the bound (control): %v", err)
	}
	mustDo(t, rec.Finish())
}

// undoNow undoes record id of s, as undo --yes does.
func undoNow(t *testing.T, s *Store, id string) {
	t.Helper()
	u, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	p, err := u.Prepare(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Apply(p); err != nil {
		t.Fatal(err)
	}
}

// TestRecordTooLargeAfter: a call that made names so long that the
// listing of what it changed passed what a read takes (the sixteenth
// attack run: 140,000 names of about 4,000 bytes) left a record undo
// could never read, even once the files were gone, and its rm could not
// be undone. Such a record keeps no after-state (Finish says so), and once
// the names are gone undo puts back what the call removed (the control).
func TestRecordTooLargeAfter(t *testing.T) {
	defer func(m int) { recordMax = m }(recordMax)
	recordMax = 64 << 10
	proj, st := project(t, map[string]string{"precious.txt": "keep\n"})
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "rm precious.txt; make junk"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.Remove(filepath.Join(proj, "precious.txt")))
	junk := filepath.Join(proj, "junk", strings.Repeat("j", 250), strings.Repeat("k", 250))
	mustDo(t, os.MkdirAll(junk, 0o755))
	for i := range 200 {
		mustDo(t, os.WriteFile(filepath.Join(junk, fmt.Sprintf("%s%d", strings.Repeat("n", 200), i)), nil, 0o644))
	}
	if err := rec.Finish(); !errors.Is(err, errTooLarge) {
		t.Fatalf("Finish: %v, want it too large to record", err)
	}
	mustDo(t, os.RemoveAll(filepath.Join(proj, "junk")))
	s, _ := Open(st, proj)
	undoNow(t, s, rec.ID())
	if b, err := os.ReadFile(filepath.Join(proj, "precious.txt")); err != nil || string(b) != "keep\n" {
		t.Errorf("precious.txt after undo (control): %q %v", b, err)
	}
}

// TestPruneKeepsUnreadable: a record whose description cannot be read
// (the sixteenth attack run made one too large to read) was left out of
// List, and the prune, not knowing its manifest, removed it and the
// copies it needed. Now every manifest and copy stays while such a record
// is there, and Records names it. Control: the prune still trims the
// record count.
func TestPruneKeepsUnreadable(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "0\n"})
	s, _ := Open(st, proj)
	var first string
	for i := range MaxRecords + pruneSlack + 2 {
		rec, err := Begin(Options{StateDir: st, Project: proj, Command: fmt.Sprintf("call %d", i), Now: daysAgo})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644), rec.Finish())
		if i == MaxRecords+pruneSlack-2 {
			// A record the prune keeps, made unreadable.
			first = rec.ID()
			mustDo(t, os.WriteFile(filepath.Join(s.recordDir(first), "meta.json"), []byte("{not json"), 0o600))
		}
	}
	ents, _ := os.ReadDir(s.recordsDir())
	if len(ents) > MaxRecords+pruneSlack {
		t.Errorf("%d records kept, want the count trimmed (control)", len(ents))
	}
	if _, u, err := s.Records(); err != nil || len(u) != 1 || u[0].ID != first {
		t.Fatalf("unreadable %v %v, want %s", u, err, first)
	}
	// The unreadable record's own manifest: the one its before-state
	// wrote, which no readable record names.
	manifests, _ := os.ReadDir(s.manifestsDir())
	if len(manifests) < 2*(MaxRecords+pruneSlack) {
		t.Errorf("%d manifest files left: the prune removed what the unreadable record may need", len(manifests))
	}
}

// TestUndoLastUnreadableRefused: when the last call's record cannot be
// read, undo without an ID refuses and says so, instead of taking back
// the call before it (the newest it can read). Controls: that earlier
// call is undone by its ID; with the unreadable record an earlier one,
// undo without an ID takes back the last call.
func TestUndoLastUnreadableRefused(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "0\n"})
	s, _ := Open(st, proj)
	var ids []string
	for i := range 3 {
		rec, err := Begin(Options{StateDir: st, Project: proj, Command: fmt.Sprintf("call %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644), rec.Finish())
		ids = append(ids, rec.ID())
		time.Sleep(5 * time.Millisecond) // names sort by their millisecond
	}
	prepare := func(id string) (*Plan, error) {
		u, err := s.Lock()
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		return u.Prepare(id)
	}
	mustDo(t, os.WriteFile(filepath.Join(s.recordDir(ids[2]), "meta.json"), []byte("{not json"), 0o600))
	if p, err := prepare(""); err == nil || !strings.Contains(err.Error(), ids[2]) || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("undo of the last call with its record unreadable: %v %+v; want a refusal naming %s", err, p, ids[2])
	}
	if p, err := prepare(ids[1]); err != nil || p.Meta.ID != ids[1] {
		t.Errorf("control: undo %s: %v", ids[1], err)
	}
	// The unreadable one an earlier call's: the last call is undone.
	mustDo(t, os.RemoveAll(s.recordDir(ids[2])))
	mustDo(t, os.WriteFile(filepath.Join(s.recordDir(ids[0]), "meta.json"), []byte("{not json"), 0o600))
	if p, err := prepare(""); err != nil || p.Meta.ID != ids[1] {
		t.Errorf("control: undo with an older record unreadable: %v %+v; want %s", err, p, ids[1])
	}
	ch, err := s.ChangedSince(time.Time{}, 10, false)
	if err != nil || ch.Unreadable != 1 {
		t.Errorf("ChangedSince: %+v %v; want the unreadable record counted", ch, err)
	}
	if _, ok := idTime(ids[0]); !ok {
		t.Errorf("idTime(%s) holds no time", ids[0])
	} else if ch, err := s.ChangedSince(time.Now(), 10, false); err != nil || ch.Unreadable != 0 {
		t.Errorf("ChangedSince after the unreadable record's call ended: %+v %v; want it not counted (control)", ch, err)
	}
}

// TestFinishKeepsWhyUnrecorded: a call that left the project past
// MaxEntries got no after-state, and undo took its record for one whose
// launcher was killed. Finish keeps why beside the record (Meta's
// Unrecorded), and undo, which cannot list the project either while it
// is past the bound, says which directories at the top of the project
// hold the most. Controls: once the call's files are gone, undo puts back
// what it removed; a record with no after-state and no reason kept is one
// whose launcher was killed.
func TestFinishKeepsWhyUnrecorded(t *testing.T) {
	defer func(m int) { maxEntries = m }(maxEntries)
	maxEntries = 50
	proj, st := project(t, map[string]string{"README.md": "keep\n", "src/a.go": "package a\n"})
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "rm README.md; make junk"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.Remove(filepath.Join(proj, "README.md")))
	for _, d := range []string{"aaa", "junk"} {
		mustDo(t, os.Mkdir(filepath.Join(proj, d), 0o755))
	}
	for i := range 2 {
		mustDo(t, os.WriteFile(filepath.Join(proj, "aaa", fmt.Sprint(i)), nil, 0o644))
	}
	for i := range 60 {
		mustDo(t, os.WriteFile(filepath.Join(proj, "junk", fmt.Sprint(i)), nil, 0o644))
	}
	var tl *TooLargeError
	if err := rec.Finish(); !errors.As(err, &tl) {
		t.Fatalf("Finish: %v, want the project too large", err)
	}
	s, _ := Open(st, proj)
	m, err := s.Meta(rec.ID())
	const why = "the project has more than 50 entries outside the directories undo leaves out"
	if err != nil || m.Finished || m.Unrecorded != why {
		t.Fatalf("Meta: %+v %v; want no after-state, and why: %s", m, err, why)
	}
	if fi, err := os.Stat(filepath.Join(s.recordDir(rec.ID()), "unrecorded")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the reason's file: %v %v", fi, err)
	}
	prepare := func() (*Plan, error) {
		u, err := s.Lock()
		if err != nil {
			t.Fatal(err)
		}
		defer u.Close()
		return u.Prepare("")
	}
	_, err = prepare()
	if !errors.As(err, &tl) {
		t.Fatalf("undo with the project past the bound: %v", err)
	}
	want := []DirCount{{Path: "junk", Entries: 60, Partial: true}, {Path: "aaa", Entries: 2}}
	if !slices.Equal(tl.Largest, want) {
		t.Errorf("Largest = %+v, want %+v", tl.Largest, want)
	}
	// Control: the call's files gone, undo reverts every change since.
	mustDo(t, os.RemoveAll(filepath.Join(proj, "junk")))
	p, err := prepare()
	if err != nil || p.AfterFrom != "now" || p.Meta.Unrecorded != why {
		t.Fatalf("undo once the call's files are gone: %+v %v", p, err)
	}
	undoNow(t, s, rec.ID())
	if b, err := os.ReadFile(filepath.Join(proj, "README.md")); err != nil || string(b) != "keep\n" {
		t.Errorf("README.md after undo (control): %q %v", b, err)
	}
	// Control: no reason kept, a launcher killed.
	mustDo(t, os.Remove(filepath.Join(s.recordDir(rec.ID()), "unrecorded")))
	if m, err := s.Meta(rec.ID()); err != nil || m.Finished || m.Unrecorded != "" {
		t.Errorf("Meta with no reason kept: %+v %v", m, err)
	}
}

// TestPruneCountsAfterStates: the records' after-states count toward
// MaxBlobBytes with the copies and the manifests. A call that makes a
// Cargo.toml beside a target/ the record before it listed, and fills
// target/ with long names, writes an after-state of them all while the
// next record leaves target/ out: the seventy-seventh attack run added
// 60 MiB a call this way, counted as about 1 KB. Control: the after-state
// is written, and the count without it is smaller.
func TestPruneCountsAfterStates(t *testing.T) {
	proj, st := project(t, map[string]string{"target/keep": "x", "f.txt": "0\n"})
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "cargo"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.WriteFile(filepath.Join(proj, "Cargo.toml"), []byte("[package]\n"), 0o644))
	for i := range 300 {
		mustDo(t, os.WriteFile(filepath.Join(proj, "target", fmt.Sprintf("%s%03d", strings.Repeat("t", 200), i)), nil, 0o644))
	}
	mustDo(t, rec.Finish())
	s, _ := Open(st, proj)
	after := s.afterBytes()
	if after < 300*200 {
		t.Fatalf("control: the after-state is %d bytes, want the 300 long names", after)
	}
	counted := func() int64 {
		b, _ := os.ReadFile(filepath.Join(s.Dir, "blobs-size"))
		var n int64
		_, _ = fmt.Sscan(string(b), &n)
		return n
	}
	if n := counted(); n < after {
		t.Errorf("after the call the store counts %d bytes, less than its after-state alone (%d)", n, after)
	}
	total, err := s.sweepBlobs(map[[32]byte]int64{})
	if err != nil {
		t.Fatal(err)
	}
	if total < after || total != s.manifestBytes()+after {
		t.Errorf("a recount: %d bytes, want the manifests' %d and the after-states' %d", total, s.manifestBytes(), after)
	}
}
