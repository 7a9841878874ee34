//go:build linux

package undo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/loopguard/loopguard/fsx"
	"golang.org/x/sys/unix"
)

// Options are what a record needs to know of its call.
type Options struct {
	StateDir string // loopguard's state directory
	Project  string // absolute and clean
	// Held are paths in the project (absolute) the call cannot write
	// (executable configuration): not recorded, nor anything below them.
	Held    []string
	Command string
	// Waiting is called when another call holds the project's lock,
	// before this one waits for it (nil: nothing).
	Waiting func()
	// Locked is called once the project's lock is taken, before anything
	// is recorded (nil: nothing): the launcher sweeps there for a call of
	// the project killed before its own sweep, while no other call runs
	// and before the record's before-state (confine's recoverKilled).
	Locked func()
	Now    func() time.Time // nil: time.Now
}

// noWatch: records hear nothing (a test shows the walk that stands in
// for the watch giving the same after-state).
var noWatch bool

// walkAfterMax: a project whose last record listed at most this many
// entries is not watched; its after-state is a second walk. The watch's
// end costs a process start (closeAway) and, inside a sandbox whose PID
// namespace's init waits for every process in it (Claude Code's
// bubblewrap), the SRCU grace period that process waits out, 5 to 25 ms
// of the call's wall time; a walk of 500 entries costs about 1.4 ms of
// CPU (2.8 us an entry; docs/undo.md). The first record of a project
// (no last one) is watched: its size is not known before its walk.
var walkAfterMax = 500

// Recorder is one call's record, taken: Finish records the after-state
// and lets the project's lock go.
type Recorder struct {
	// after: the after-state is being taken (Finish): a directory named
	// target is recorded exactly when the before-state recorded it.
	after  bool
	s      *Store
	lock   *os.File
	meta   Meta
	skip   map[string]bool
	now    func() time.Time
	before []Entry
	multi  []string // files with more than one name
	watch  *watcher
	// With the project's watcher (watchd_linux.go): synced is the id of
	// its answer before the call (the after-state asks for the one right
	// after it); lazy names the before-state's manifest, not read unless
	// the after-state needs it (nothing changed since the last record);
	// clean: the before-state holds no file whose content the record
	// did not read or vouch for, none changed within 2 s of it.
	synced string
	lazy   string
	clean  bool
	// base is the whole listing the last record's before-state was built
	// on (fromLast): this record's is written as what it changes of it
	// where that is little (writeDelta).
	base baseListing
	// left are the directories the record leaves out that changes (or
	// the after-state's walk) found, not yet in meta.Left (noteLeft).
	left []string
}

// Begin takes the project's lock (waiting for a call that holds it) and
// records every file the call could write. On error the lock is let go
// and nothing is recorded: the call must not run.
func Begin(o Options) (*Recorder, error) {
	s, err := Open(o.StateDir, o.Project)
	if err != nil {
		return nil, err
	}
	if err := s.create(); err != nil {
		if errors.Is(err, ErrStateReadOnly) {
			return nil, err
		}
		return nil, fmt.Errorf("failed to prepare the undo store: %w", err)
	}
	lock, err := s.lock(true, o.Waiting)
	if err != nil {
		return nil, err
	}
	// And no call approved to run outside the jail runs in a project
	// near this one (HoldForApproved): what this call writes, it could
	// run.
	if _, err := WaitApproved(o.StateDir, o.Project, o.Waiting); err != nil {
		lock.Close()
		return nil, fmt.Errorf("failed to ask whether an approved call runs near the project: %w", err)
	}
	if o.Locked != nil {
		o.Locked()
	}
	r := &Recorder{s: s, lock: lock, now: o.Now, skip: map[string]bool{".git": true}}
	if r.now == nil {
		r.now = time.Now
	}
	for _, h := range o.Held {
		if rel, ok := strings.CutPrefix(h, o.Project+"/"); ok {
			r.skip[rel] = true
		}
	}
	start := r.now()
	r.meta = Meta{ID: newID(start), Project: o.Project, Command: shorten(o.Command), Started: start.UTC()}
	if err := r.takeBefore(start); err != nil {
		_ = os.RemoveAll(s.recordDir(r.meta.ID))
		r.watch.close()
		r.unlock()
		return nil, fmt.Errorf("failed to record the project for undo: %w", err)
	}
	return r, nil
}

// ID is the record's name.
func (r *Recorder) ID() string { return r.meta.ID }

// Meta is the record's description.
func (r *Recorder) Meta() Meta { return r.meta }

// takeBefore lists the project, copying each file the last record did
// not see as it is now, and watches its directories; the listing is
// written (as a manifest named by its hash, with its index) only when no
// record wrote the same.
func (r *Recorder) takeBefore(start time.Time) error {
	idx, hint := r.s.latestIndex()
	defer idx.unmap()
	racy := start.Add(-2 * time.Second).UnixNano()
	w := &walker{skip: r.skip, index: idx, s: r.s, racy: racy, hint: hint}
	// The project's watcher, where one runs: what changed since the last
	// record, if it took its after-state from the answer right before
	// this one (sync_linux.go). It hears the call too: no watch of the
	// record's own.
	a, err := r.s.sync()
	if err == nil {
		r.synced = a.id
	}
	var ents []Entry
	partial := false
	if err == nil && !a.full {
		if last, ok := r.s.lastChained(skipKey(r.skip), a.since); ok {
			if ents, partial, err = r.fromLast(w, last, a.changed); err != nil {
				return err
			}
			if partial && ents == nil {
				r.meta.Listed = "unchanged"
				return r.writeMeta()
			}
		}
	}
	switch {
	case partial:
	case r.synced != "" || noWatch || 0 < hint && hint <= walkAfterMax:
		r.watch = &watcher{fd: -1, failed: true}
	default:
		r.watch = newWatcher()
		w.watch = r.watch
	}
	r.meta.Listed = "watcher"
	if !partial {
		if ents, err = w.run(r.s.Project); err != nil {
			return err
		}
		r.multi, r.meta.Listed = w.multi, "walk"
		r.meta.setLeft(w.left)
	}
	if manifestSize(ents) > recordMax {
		return fmt.Errorf("the project: %w", errTooLarge)
	}
	r.before = ents
	r.clean = true
	for i := range ents {
		if unread(&ents[i], racy) {
			r.clean = false
			break
		}
	}
	r.meta.Copied, r.meta.CopiedBytes, r.meta.Entries = w.copied, w.copiedBytes, len(ents)
	r.s.addBlobBytes(w.copiedBytes)
	if partial && r.base.name != "" {
		if d := changesOf(r.base.ents, ents); deltaShare > 0 && len(d)*deltaShare <= len(ents) {
			return r.writeDelta(d)
		}
	}
	// The manifest's name is its hash: an unchanged project (the last
	// record's listing) writes nothing. Where the project has changed
	// (a file read, a count that differs) it is formatted once, into
	// memory, to be hashed and written; else it is formatted as it is
	// hashed (no copy of it in memory), and again only if it turns out
	// new.
	var text []byte
	var sum [sha256.Size]byte
	if w.copied > 0 || len(ents) != hint {
		text = manifestBytes(ents)
		sum = sha256.Sum256(text)
	} else {
		h := sha256.New()
		if err := writeManifest(h, ents); err != nil {
			return err
		}
		h.Sum(sum[:0])
	}
	r.meta.Before = hex.EncodeToString(sum[:20])
	mpath := filepath.Join(r.s.manifestsDir(), r.meta.Before)
	_, err = os.Lstat(mpath)
	fresh := err != nil
	// The index of a manifest already there is written again when this
	// record had to read a file: one the last index left out because it
	// had changed too recently to be trusted, now old enough to be.
	if fresh || w.copied > 0 {
		_ = os.Remove(mpath + ".idx") // a rename over it would make ext4 flush it
		if err := r.s.writeNew(mpath+".idx", func(wr io.Writer) error { _, err := wr.Write(w.newIndex(ents)); return err }); err != nil {
			return err
		}
	}
	if fresh {
		if err := r.s.writeNew(mpath, func(w io.Writer) error {
			if text != nil {
				_, err := w.Write(text)
				return err
			}
			return writeManifest(w, ents)
		}); err != nil {
			return err
		}
		// A new manifest counts toward MaxBlobBytes as the copies do:
		// a series of calls that each change one file of a large
		// project writes one each.
		var st unix.Stat_t
		if unix.Lstat(mpath, &st) == nil {
			r.s.addBlobBytes(st.Size)
		}
	}
	return r.writeMeta()
}

// deltaShare: a before-state taken from the last record's (fromLast) is
// written as a delta of the whole listing it was built on when it
// changes at most one entry in deltaShare of it; else whole, which the
// next records are then built on. A test sets 0: always whole.
var deltaShare = 8

// writeDelta writes the before-state as what it changes of r.base (d),
// named by its hash as a whole manifest is. No index is written: the
// base's serves (latestIndex), and vouches for every file it knows that
// has not changed since; the others are read again by a walk.
func (r *Recorder) writeDelta(d []Entry) error {
	text := deltaBytes(r.base.name, d)
	sum := sha256.Sum256(text)
	r.meta.Before = hex.EncodeToString(sum[:20])
	mpath := filepath.Join(r.s.manifestsDir(), r.meta.Before)
	if _, err := os.Lstat(mpath); err != nil {
		if err := r.s.writeNew(mpath, func(w io.Writer) error { _, err := w.Write(text); return err }); err != nil {
			return err
		}
		r.s.addBlobBytes(int64(len(text)))
	}
	return r.writeMeta()
}

// unread: e is a file whose content a record neither read nor can vouch
// for (no copy, or a change time at or after racy: a write in the same
// tick leaves size, mtime and ctime as they were), which the next record
// must read again.
func unread(e *Entry, racy int64) bool {
	return e.Kind == File && e.Note == "" && (e.Hash == "" || e.Ctime >= racy)
}

// writeMeta makes the record's directory and writes its description.
func (r *Recorder) writeMeta() error {
	if err := os.Mkdir(r.s.recordDir(r.meta.ID), 0o700); err != nil {
		return err
	}
	return r.s.writeMeta(r.meta)
}

// Finish records the after-state (every process of the call must have
// exited): what changed since the before-state, from what the watch
// heard, or a walk of the project where it did not hold. It prunes the
// store and lets the lock go.
func (r *Recorder) Finish() error {
	defer r.unlock()
	var after []Entry
	dirty, ok := r.watch.heard()
	r.watch.close()
	chained := ""
	if r.synced != "" {
		// The watcher's answer right after the one before the call
		// names what changed since; any other (another answer between,
		// none, "full") is a walk.
		if a, err := r.s.sync(); err == nil && !a.full && a.since == r.synced {
			dirty, ok, chained = a.changed, true, a.id
		}
	}
	var err error
	var delta []Entry
	if ok && len(dirty) == 0 && len(r.multi) == 0 {
		// Nothing was heard: the after-state is the before-state.
	} else if err = r.loadBefore(); err == nil {
		r.after = true
		if ok {
			delta, err = r.changes(dirty)
		}
		if !ok || err != nil {
			w := &walker{skip: r.skip, targets: r.afterTargets}
			if after, err = w.run(r.s.Project); err == nil {
				delta = diff(r.before, after)
				r.noteLeft(w.left...)
			}
		}
	}
	if err == nil && manifestSize(delta) > recordMax {
		err = fmt.Errorf("what the call changed: %w", errTooLarge)
	}
	if err == nil && r.meta.addLeft(r.left) {
		// A directory left out that the call made: what it wrote there
		// is recorded nowhere, and the record says so.
		err = r.s.writeMeta(r.meta)
	}
	if err == nil {
		afterPath := filepath.Join(r.s.recordDir(r.meta.ID), "after")
		err = r.s.writeNew(afterPath, func(w io.Writer) error { return writeManifest(w, delta) })
		if err == nil {
			stampNow(afterPath)
			// Counted with the copies (afterBytes).
			r.s.addBlobBytes(int64(manifestSize(delta)))
		}
	}
	if err != nil {
		// Why is kept beside the record, or undo would take it for one
		// whose launcher was killed.
		if kerr := r.s.keepUnrecorded(r.meta.ID, err.Error()); kerr != nil {
			err = fmt.Errorf("%w (and failed to keep why: %v)", err, kerr)
		}
		return fmt.Errorf("failed to record the project after the call (undo compares with the next record instead): %w", err)
	}
	if chained != "" {
		err = r.s.writeChain(r.meta.ID, chain{after: chained, skip: skipKey(r.skip), clean: r.clean, multi: r.multi})
	}
	if err != nil {
		return fmt.Errorf("failed to record the project after the call (undo compares with the next record instead): %w", err)
	}
	return r.s.prune(r.meta.ID)
}

// diff is what after changed of before: after's entry of each path whose
// state differs, and a Gone entry for each path no longer there.
func diff(before, after []Entry) []Entry {
	b := byPath(before)
	var out []Entry
	for i := range after {
		e := &after[i]
		if old, ok := b[e.Path]; ok {
			delete(b, e.Path)
			if same(old, e) {
				continue
			}
		}
		out = append(out, *e)
	}
	for _, e := range before {
		if _, ok := b[e.Path]; ok {
			out = append(out, Entry{Path: e.Path, Kind: Gone})
		}
	}
	return out
}

// overlay is before with delta applied: the after-state.
func overlay(before, delta []Entry) []Entry {
	d := byPath(delta)
	out := make([]Entry, 0, len(before)+len(delta))
	for _, e := range before {
		if n, ok := d[e.Path]; ok {
			delete(d, e.Path)
			if n.Kind != Gone {
				out = append(out, *n)
			}
			continue
		}
		out = append(out, e)
	}
	for _, e := range delta {
		if _, ok := d[e.Path]; ok && e.Kind != Gone {
			out = append(out, e)
		}
	}
	return out
}

func (r *Recorder) unlock() {
	if r.lock != nil {
		_ = r.lock.Close() // the flock goes with the descriptor
		r.lock = nil
	}
}

// lock takes the project's lock: waiting for it (wait) or not (ErrBusy).
func (s *Store) lock(wait bool, waiting func()) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open the undo lock: %w", err)
	}
	err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		if !wait {
			f.Close()
			return nil, ErrBusy
		}
		if waiting != nil {
			waiting()
		}
		err = flock(f, unix.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("failed to take the undo lock: %w", err)
	}
	return f, nil
}

// LockProject takes the lock of project's store beside the state
// directory stateDir, the one a call's record holds from before its
// program starts until its after-state (Begin, Finish): waiting for it
// (wait, waiting called first when another holds it) or not (ErrBusy).
// Closing the file lets it go. A store that is not there is an error
// (os.ErrNotExist): nothing is made.
func LockProject(stateDir, project string, wait bool, waiting func()) (*os.File, error) {
	s, err := Open(stateDir, project)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.Dir); err != nil {
		return nil, err
	}
	return s.lock(wait, waiting)
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// latestIndex is the index of the newest record's before-state: the
// files it knows are not copied again; and how many entries that record
// listed. The index is mapped, not read (its pages are the page cache's:
// a fresh heap's page faults cost more here than the lookups); unmap it
// when the walk is done.
func (s *Store) latestIndex() (index, int) {
	ents, err := os.ReadDir(s.recordsDir())
	if err != nil {
		return index{}, 0
	}
	for i := len(ents) - 1; i >= 0; i-- {
		m, err := s.Meta(ents[i].Name())
		if err != nil || m.Before == "" {
			continue
		}
		base, err := s.baseOf(m.Before)
		if err != nil {
			continue
		}
		if x, ok := mapIndex(filepath.Join(s.manifestsDir(), base+".idx")); ok {
			return x, m.Entries
		}
	}
	return index{}, 0
}

// mapIndex maps the index file at path (a regular file, not a link, of
// whole records). Index files are only ever created whole and renamed
// into place, never written again, in a directory only the user can
// write: the mapping cannot shrink under the walk.
func mapIndex(path string) (index, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return index{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxManifest || st.Size%indexRecord != 0 {
		return index{}, false
	}
	if st.Size == 0 {
		return index{}, true
	}
	b, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err == nil {
		return index{recs: b, mapped: true}, true
	}
	// A file system that cannot map it: read.
	b = make([]byte, st.Size)
	for n := 0; n < len(b); {
		m, err := unix.Read(fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			return index{}, false
		}
		n += m
	}
	return index{recs: b}, true
}

func (x *index) unmap() {
	if x.mapped {
		_ = unix.Munmap(x.recs)
	}
	x.recs, x.mapped = nil, false
}

// walker lists the project from a descriptor of its root, never
// following a link, one directory after another in the order of the
// listing (on one core: the work is system calls, one fstatat per entry,
// and a second goroutine costs more CPU than it saves wall time on a busy
// machine); with a store, it copies each file the index does not know
// into a blob.
type walker struct {
	skip map[string]bool
	// targets, when set, says of a directory named target whether the
	// listing this walk is compared with recorded it (known false: it
	// does not say, and the Cargo.toml beside it does): one call's
	// before- and after-state, and undo's look at the project now, leave
	// the same target directories out. A call that made a Cargo.toml
	// beside deploy/target hid what it did there, and one that removed
	// one had undo remove a whole target/ it never touched.
	targets func(rel string) (known, recorded bool)
	index   index
	s       *Store   // nil: list only (the after-state)
	watch   *watcher // nil: none
	// racy: a file changed after this (ns; 2 s before the record) is read
	// again whatever the index says, and left out of the index this
	// record writes. Its change time may not tell a later write from the
	// one it shows (timestamps are taken from a clock that moves in
	// ticks): the content read may be older than a second write in the
	// same tick, which leaves size, mtime and ctime as they were.
	racy int64
	hint int // how many entries to expect (the last record's)
	// partial: the listing is the last record's with what changed looked
	// at again (fromLast), not this walk's: newIndex finds its files in
	// the last index again.
	partial bool
	// the walk's stack of paths (dir) and hash text (hexText)
	pathStk []string
	hexBuf  []byte
	copyBuf []byte // copy's, reused

	// hit marks the records of index the walk found a file in (a bit
	// each); fresh holds the index records of the files it read.
	hit   []uint64
	fresh []byte

	out         []Entry
	left        []string
	multi       []string
	copied      int
	copiedBytes int64
	listed      listed
	// top counts the entries listed below each directory at the top of
	// the project (a walk from the top only), for a TooLargeError.
	top []DirCount
}

// run lists the project: its entries in a fixed order (each directory's
// names sorted, a directory before what it holds).
func (w *walker) run(project string) ([]Entry, error) {
	root, err := unix.Open(project, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("failed to open the project: %w", err)
	}
	ents, err := w.from(root, "")
	if tl := (*TooLargeError)(nil); errors.As(err, &tl) {
		tl.Largest = largest(w.top, 3)
	}
	return ents, err
}

// largest are the n directories of top with the most entries, most
// first; none that holds nothing.
func largest(top []DirCount, n int) []DirCount {
	top = slices.DeleteFunc(slices.Clone(top), func(d DirCount) bool { return d.Entries == 0 })
	slices.SortStableFunc(top, func(a, b DirCount) int { return b.Entries - a.Entries })
	return top[:min(n, len(top))]
}

// from lists what the directory open at fd (rel below the project)
// holds, and closes fd.
func (w *walker) from(fd int, rel string) ([]Entry, error) {
	w.out = make([]Entry, 0, max(w.hint+w.hint/8, 64))
	fsx.PrefaultSlice(w.out)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("failed to look at %s: %w", orTop(rel), err)
	}
	if err := w.dir(fd, rel, st.Dev); err != nil {
		return nil, err
	}
	return w.out, nil
}

// dirBufs are getdents buffers.
var dirBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// listed counts what a walk listed: its entries, and the bytes of their
// paths together.
type listed struct{ entries, bytes int }

// tooMany says which of the walk's bounds l passed (nil: none).
func (l listed) tooMany() error {
	switch {
	case l.entries > maxEntries:
		return &TooLargeError{Bound: maxEntries}
	case l.bytes > pathBytes:
		return &TooLargeError{PathBytes: true, Bound: pathBytes}
	}
	return nil
}

// names appends to out what the directory open at fd lists (getdents),
// each name joined to prefix, "." and ".." left out, and counts them in
// l: past MaxEntries or MaxPathBytes it stops before it builds their
// paths (100,000 names in a directory near PATH_MAX deep are 400 MB of
// paths). The paths of one read share one allocation.
func names(fd int, prefix string, out []string, l *listed) ([]string, error) {
	bp := dirBufs.Get().(*[]byte)
	defer dirBufs.Put(bp)
	buf := *bp
	// each calls f with each name of the getdents answer b.
	each := func(b []byte, f func(name []byte)) error {
		for len(b) >= 19 {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				return errors.New("malformed directory entry")
			}
			ino, name := binary.NativeEndian.Uint64(b), b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			f(name)
		}
		return nil
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		size := 0
		if err := each(buf[:n], func(name []byte) { size += len(prefix) + len(name); l.entries++ }); err != nil {
			return nil, err
		}
		l.bytes += size
		if err := l.tooMany(); err != nil {
			return nil, err
		}
		chunk := make([]byte, 0, size)
		_ = each(buf[:n], func(name []byte) {
			off := len(chunk)
			chunk = append(append(chunk, prefix...), name...)
			out = append(out, unsafe.String(&chunk[off], len(chunk)-off)) // chunk is never written again
		})
	}
}

// hexText is h as hex text, in a chunk shared with other hashes of the
// walk (one allocation per thousand files, not one each).
func (w *walker) hexText(h []byte) string {
	n := hex.EncodedLen(len(h))
	if cap(w.hexBuf)-len(w.hexBuf) < n {
		size := max(n, 64<<10)
		if w.hexBuf == nil {
			// The first chunk holds the hash text of as many files as
			// the last record listed (most are unchanged), in one
			// prefaulted allocation.
			size = max(size, w.hint*n)
		}
		w.hexBuf = make([]byte, 0, size)
		fsx.PrefaultSlice(w.hexBuf)
	}
	off := len(w.hexBuf)
	w.hexBuf = hex.AppendEncode(w.hexBuf, h)
	return unsafe.String(&w.hexBuf[off], n) // never written again
}

// dir lists the directory open at fd (rel below the project; "" the top,
// on the device dev) into w.out, each subdirectory's entries right after
// its own, and closes fd: getdents, then the state of each entry from
// the directory's descriptor (fstatat). A subdirectory on another device
// (a mount, a btrfs subvolume) is listed unless it is a kernel file
// system (kernelFS).
func (w *walker) dir(fd int, rel string, dev uint64) error {
	defer unix.Close(fd)
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	// The paths of each directory being walked are on a stack the walk
	// shares (a directory's own are read, not written, while the walk
	// goes down into its subdirectories).
	base := len(w.pathStk)
	stk, err := names(fd, prefix, w.pathStk, &w.listed)
	if err == nil {
		w.pathStk = stk
	}
	if err := w.listed.tooMany(); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("failed to list %s: %w", orTop(rel), err)
	}
	defer func() { clear(w.pathStk[base:]); w.pathStk = w.pathStk[:base] }()
	paths := w.pathStk[base:]
	slices.Sort(paths) // one prefix: the order of the names
	var cargo bool
	if slices.Contains(paths, prefix+"target") {
		cargo = slices.Contains(paths, prefix+"Cargo.toml")
	}
	// The directory is watched before its entries are looked at: a
	// write in it from now on is heard.
	if w.watch != nil {
		w.watch.add(fd, rel)
	}
	// One fstatat each, from the directory's descriptor, not following a
	// link. (An io_uring that asked the kernel's worker for a statx of
	// every name at once cost more CPU, not less: its worker's switches
	// and wake-ups, 5,000 a record of 10,000 files; docs/undo.md.)
	var st fileStat
	for _, crel := range paths {
		if w.skip[crel] {
			continue
		}
		name := crel[len(prefix):]
		err := statAt(fd, name, &st)
		if errors.Is(err, unix.EACCES) {
			// A directory its owner may list but not search (a call ran
			// chmod 400 on it): every later record failed, and with it
			// every call that writes, until the user found it.
			if restore, ok := ownerBits(fd, unix.S_IRUSR|unix.S_IXUSR); ok {
				defer restore()
				err = statAt(fd, name, &st)
			}
		}
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("failed to look at %s: %w", crel, err)
		}
		e := Entry{Path: crel, Mode: st.mode & 0o7777, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Dev: st.dev, Ino: st.ino}
		switch st.mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if slices.Contains(Regenerable, name) || name == "target" && w.leftOut(crel, cargo) {
				w.left = append(w.left, crel)
				continue
			}
			e.Kind, e.Size = Dir, 0
			if len(crel) > maxRel {
				// Each entry keeps its whole path: a chain of directories
				// with names of 255 bytes made by renames (past what a
				// path may name) cost the record memory that grew with the
				// square of its depth (the eighteenth attack run: 1 GB at
				// 2,000 deep, 2 GB for undo). No program names it either.
				e.Kind, e.Note = Skipped, fmt.Sprintf("a directory whose path is longer than %d bytes: not recorded", maxRel)
				break
			}
			cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if errors.Is(err, unix.EACCES) {
				cfd, err = ownerList(fd, name, e)
			}
			if err != nil {
				e.Kind, e.Note = Skipped, "a directory that could not be read: "+errText(err)
				break
			}
			if st.dev != dev {
				if fs := onKernelFS(cfd); fs != "" {
					unix.Close(cfd)
					e.Kind, e.Note = Skipped, kernelFSNote(fs)
					break
				}
			}
			w.out = append(w.out, e)
			n := w.listed.entries
			err = w.dir(cfd, crel, st.dev)
			if rel == "" {
				w.top = append(w.top, DirCount{Path: crel, Entries: w.listed.entries - n, Partial: err != nil})
			}
			if err != nil {
				return err
			}
			continue
		case unix.S_IFLNK:
			e.Kind = Link
			t, err := fsx.ReadlinkAt(fd, name)
			if err != nil {
				e.Kind, e.Note = Skipped, "a link that could not be read: "+errText(err)
			}
			e.Target = t
		case unix.S_IFREG:
			e.Kind = File
			if w.s != nil {
				w.content(fd, name, &e)
			}
			if st.nlink > 1 {
				w.multi = append(w.multi, crel)
			}
		default:
			e.Kind, e.Note = Skipped, "neither a file, a directory nor a link"
		}
		w.out = append(w.out, e)
	}
	return nil
}

// maxRel bounds the path below the project of a directory a record
// looks into: the system's limit on a path (PATH_MAX).
const maxRel = unix.PathMax

// leftOut reports whether the directory crel, named target, is left out:
// as targets says, else when a Cargo.toml is beside it (cargo).
func (w *walker) leftOut(crel string, cargo bool) bool {
	if w.targets != nil {
		if known, recorded := w.targets(crel); known {
			return !recorded
		}
	}
	return cargo
}

// markHit marks the record of the last index that vouches for e, a file
// the listing keeps with its blob, in hit; false when the index has no
// record of e's key with that blob.
func (w *walker) markHit(e *Entry) bool {
	i := w.index.findRec(e.key())
	if i < 0 || len(e.Hash) != 64 {
		return false
	}
	var h [32]byte
	if _, err := hex.Decode(h[:], []byte(e.Hash)); err != nil || string(h[:]) != string(w.index.recs[i*indexRecord+40:(i+1)*indexRecord]) {
		return false
	}
	w.setHit(i)
	return true
}

// setHit marks the last index's record i as found.
func (w *walker) setHit(i int) {
	if w.hit == nil {
		w.hit = make([]uint64, (len(w.index.recs)/indexRecord+63)/64)
	}
	w.hit[i/64] |= 1 << (i % 64)
}

// pathBytes is MaxPathBytes, and maxEntries MaxEntries (a test lowers
// them).
var pathBytes, maxEntries = MaxPathBytes, MaxEntries

// recordBytes is MaxRecordBytes (a test lowers it).
var recordBytes int64 = MaxRecordBytes

// content sets e's Hash: from the index when the file is as the last
// record saw it, else by copying it into a blob.
func (w *walker) content(dirfd int, name string, e *Entry) {
	if e.Ctime < w.racy {
		if i := w.index.findRec(e.key()); i >= 0 {
			w.setHit(i)
			e.Hash = w.hexText(w.index.recs[i*indexRecord+40 : (i+1)*indexRecord])
			return
		}
	}
	if e.Size > MaxFileSize {
		e.Note = fmt.Sprintf("larger than %d MiB: not copied", MaxFileSize>>20)
		return
	}
	if w.copiedBytes+e.Size > recordBytes {
		e.Note = fmt.Sprintf("not copied: this record's copies reached %d MiB", recordBytes>>20)
		return
	}
	h, n, err := w.copy(dirfd, name, e)
	if err != nil {
		e.Note = "could not be copied: " + errText(err)
		return
	}
	e.Hash = h
	w.fresh = appendRecord(w.fresh, e, w.racy)
	w.copied++
	w.copiedBytes += n
}

// newIndex is the index of ents, this walk's listing: makeIndex's, made
// from the records of the last index the walk found files in (or a
// partial listing kept from the last record) and those of the files it
// read (mergeIndex), without decoding and sorting again what did not
// change.
func (w *walker) newIndex(ents []Entry) []byte {
	if w.partial {
		// Most files were kept from the last record, not looked up: each
		// file the index vouches for is found there again, with its blob
		// (what content found is found again), and every other must be
		// one read now (fresh), else the index is made whole.
		w.hit = nil
		files, found := 0, 0
		for i := range ents {
			e := &ents[i]
			if e.Kind != File || len(e.Hash) != 64 {
				continue
			}
			files++
			if e.Ctime < w.racy && w.markHit(e) {
				found++
			}
		}
		if found == 0 || found+len(w.fresh)/indexRecord != files {
			return makeIndex(ents, w.racy)
		}
	}
	if w.hit == nil {
		return makeIndex(ents, w.racy)
	}
	return mergeIndex(w.index.recs, w.hit, w.fresh)
}

// copy reads the file name (in dirfd, not following a link) into a blob
// and returns its hash.
func (w *walker) copy(dirfd int, name string, e *Entry) (string, int64, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	owner := false
	if errors.Is(err, unix.EACCES) {
		fd, err = ownerRead(dirfd, name, e)
		owner = true
	}
	if err != nil {
		return "", 0, err
	}
	src := os.NewFile(uintptr(fd), name)
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != e.Dev || st.Ino != e.Ino {
		return "", 0, errors.New("replaced while it was being recorded")
	}
	if owner {
		// ownerRead's chmod and back moved its change time: the listing
		// keeps the one after, or the next listing would take the record's
		// own chmod for a change of the call's (and undo rewrite the file).
		e.Ctime = st.Ctim.Nano()
	}
	tmpDir := filepath.Join(w.s.blobsDir(), "tmp")
	if err := os.Mkdir(tmpDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(tmpDir, "blob-")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if w.copyBuf == nil {
		w.copyBuf = make([]byte, 64<<10)
	}
	n, err := io.CopyBuffer(io.MultiWriter(tmp, h), io.LimitReader(src, MaxFileSize+1), w.copyBuf)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	if n > MaxFileSize {
		return "", 0, fmt.Errorf("grew past %d MiB", MaxFileSize>>20)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	final := w.s.blobPath(sum)
	if _, err := os.Lstat(final); err == nil {
		return sum, 0, nil // the same content is kept already
	}
	if err := os.Mkdir(filepath.Dir(final), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", 0, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, err
	}
	return sum, n, nil
}

// ownerBits gives the directory open as fd, this user's, the owner bits
// need where it lacks one of them, and returns what puts its mode back;
// ok is false when it changed nothing. The record searches a directory a
// call left unsearchable (S_IRUSR|S_IXUSR), undo removes from one
// (S_IRWXU).
func ownerBits(fd int, need uint32) (restore func(), ok bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Uid != uint32(os.Geteuid()) || st.Mode&need == need {
		return nil, false
	}
	mode := st.Mode & 0o7777
	if unix.Fchmod(fd, mode|need) != nil {
		return nil, false
	}
	return func() { _ = unix.Fchmod(fd, mode) }, true
}

// ownerList opens the directory name in dirfd (not following a link),
// this user's, which its owner may not read or search (chmod 000 or 100
// by a call: what it holds was never recorded, and a later rm of it could
// not be undone), with its owner's read and search bits given for the
// open and taken back at once (ownerOpen; the walk below it gives them
// again where it needs them: ownerBits).
func ownerList(dirfd int, name string, e Entry) (int, error) {
	return ownerOpen(dirfd, name, e, unix.S_IFDIR, unix.S_IRUSR|unix.S_IXUSR, unix.O_RDONLY|unix.O_DIRECTORY)
}

// ownerRead opens for reading the file name in dirfd (not following a
// link) that this user owns and may not read: a call took its mode (chmod
// 000), and a later call that removes it would leave nothing to put back
// (the sixteenth attack run). Its owner's read bit is given for the open
// and taken back at once (ownerOpen).
func ownerRead(dirfd int, name string, e *Entry) (int, error) {
	return ownerOpen(dirfd, name, *e, unix.S_IFREG, unix.S_IRUSR, unix.O_RDONLY|unix.O_NONBLOCK)
}

// ownerOpen opens name in dirfd, not following a link, with flags, when
// it is of type typ, this user's, the one e lists, and lacks one of the
// owner's bits need: they are given for the open and taken back at once,
// through the descriptor of what was checked, whose /proc name reaches
// the inode it holds whatever the directory's name for it is by now. The
// mode is as it was when this returns (its change time is not). Anything
// else (another's, a mode that has the bits, one replaced since the
// listing) stays unopened: EACCES.
func ownerOpen(dirfd int, name string, e Entry, typ, need uint32, flags int) (int, error) {
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != typ || st.Uid != uint32(os.Geteuid()) || st.Mode&need == need || st.Dev != e.Dev || st.Ino != e.Ino {
		return -1, unix.EACCES
	}
	proc := "/proc/self/fd/" + strconv.Itoa(pfd)
	mode := st.Mode & 0o7777
	if err := unix.Chmod(proc, mode|need); err != nil {
		return -1, err
	}
	fd, err := unix.Open(proc, flags|unix.O_CLOEXEC, 0)
	if cerr := unix.Chmod(proc, mode); cerr != nil {
		if err == nil {
			_ = unix.Close(fd)
		}
		return -1, fmt.Errorf("its mode could not be put back to %#o: %w", mode, cerr)
	}
	return fd, err
}

func orTop(rel string) string {
	if rel == "" {
		return "the project"
	}
	return rel
}

// errText is an error's text without the path it may carry.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// shorten bounds a command kept in a record.
func shorten(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
