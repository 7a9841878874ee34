//go:build linux

package undo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
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
	Now     func() time.Time // nil: time.Now
}

// noWatch: records hear nothing (a test shows the walk that stands in
// for the watch giving the same after-state).
var noWatch bool

// Recorder is one call's record, taken: Finish records the after-state
// and lets the project's lock go.
type Recorder struct {
	s      *Store
	lock   *os.File
	meta   Meta
	skip   map[string]bool
	now    func() time.Time
	before []Entry
	multi  []string // files with more than one name
	watch  *watcher
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
	idx := r.s.latestIndex()
	r.watch = newWatcher()
	if noWatch {
		r.watch.close()
		r.watch.failed = true
	}
	w := &walker{skip: r.skip, index: idx, s: r.s, watch: r.watch, racy: start.Add(-2 * time.Second).UnixNano()}
	ents, err := w.run(r.s.Project)
	if err != nil {
		return err
	}
	r.before, r.multi = ents, w.multi
	r.meta.Copied, r.meta.CopiedBytes, r.meta.Entries, r.meta.Left = w.copied, w.copiedBytes, len(ents), w.left
	r.s.addBlobBytes(w.copiedBytes)
	// The manifest's name is its hash, taken as it is written out (no
	// copy of it in memory): an unchanged project writes nothing.
	h := sha256.New()
	if err := writeManifest(h, ents); err != nil {
		return err
	}
	r.meta.Before = hex.EncodeToString(h.Sum(nil)[:20])
	mpath := filepath.Join(r.s.manifestsDir(), r.meta.Before)
	if _, err := os.Lstat(mpath); err != nil {
		if err := r.s.writeNew(mpath+".idx", func(w io.Writer) error { _, err := w.Write(makeIndex(ents)); return err }); err != nil {
			return err
		}
		if err := r.s.writeNew(mpath, func(w io.Writer) error { return writeManifest(w, ents) }); err != nil {
			return err
		}
	}
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
	var err error
	var delta []Entry
	switch {
	case ok && len(dirty) == 0 && len(r.multi) == 0:
		// Nothing was heard: the after-state is the before-state.
	case ok:
		if after, err = r.incremental(dirty); err == nil {
			delta = diff(r.before, after)
			break
		}
		fallthrough
	default:
		w := &walker{skip: r.skip}
		if after, err = w.run(r.s.Project); err == nil {
			delta = diff(r.before, after)
		}
	}
	if err == nil {
		err = r.s.writeNew(filepath.Join(r.s.recordDir(r.meta.ID), "after"), func(w io.Writer) error { return writeManifest(w, delta) })
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

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// latestIndex is the index of the newest record's before-state: the
// files it knows are not copied again.
func (s *Store) latestIndex() index {
	ents, err := os.ReadDir(s.recordsDir())
	if err != nil {
		return nil
	}
	for i := len(ents) - 1; i >= 0; i-- {
		m, err := s.Meta(ents[i].Name())
		if err != nil || m.Before == "" {
			continue
		}
		b, err := fsx.ReadRegular(filepath.Join(s.manifestsDir(), m.Before+".idx"), maxManifest, 0)
		if err != nil || len(b)%indexRecord != 0 {
			continue
		}
		return index(b)
	}
	return nil
}

// walker lists the project from a descriptor of its root, never
// following a link, in directories at once; with a store, it copies each
// file the index does not know into a blob.
type walker struct {
	skip  map[string]bool
	index index
	s     *Store   // nil: list only (the after-state)
	watch *watcher // nil: none
	racy  int64    // a file changed after this (ns) is read again whatever the index says

	mu          sync.Mutex
	left        []string
	multi       []string
	copied      int
	copiedBytes int64
	entries     atomic.Int64
	err         error
	sem         chan struct{}
	wg          sync.WaitGroup
}

// dirList is one directory's entries, and for each subdirectory its own.
type dirList struct {
	ents []Entry
	subs []*dirList // parallel to ents: nil but for directories listed
}

// run lists the project: its entries in a fixed order (each directory's
// names sorted, a directory before what it holds).
func (w *walker) run(project string) ([]Entry, error) {
	root, err := unix.Open(project, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("failed to open the project: %w", err)
	}
	return w.from(root, "")
}

// from lists what the directory open at fd (rel below the project)
// holds, and closes fd.
func (w *walker) from(fd int, rel string) ([]Entry, error) {
	w.sem = make(chan struct{}, max(runtime.GOMAXPROCS(0), 2)-1)
	top := &dirList{}
	w.dir(fd, rel, top)
	w.wg.Wait()
	if w.err != nil {
		return nil, w.err
	}
	out := make([]Entry, 0, w.entries.Load())
	var flat func(d *dirList)
	flat = func(d *dirList) {
		for i, e := range d.ents {
			out = append(out, e)
			if d.subs[i] != nil {
				flat(d.subs[i])
			}
		}
	}
	flat(top)
	return out, nil
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// dir lists the directory open at fd (rel below the project; "" the top)
// into d, and closes fd. A subdirectory is listed by another goroutine
// when one is free.
func (w *walker) dir(fd int, rel string, d *dirList) {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if w.watch != nil {
		w.watch.add(fd, rel)
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		w.fail(fmt.Errorf("failed to list %s: %w", orTop(rel), err))
		return
	}
	slices.Sort(names)
	var cargo bool
	if slices.Contains(names, "target") {
		cargo = slices.Contains(names, "Cargo.toml")
	}
	if w.entries.Add(int64(len(names))) > MaxEntries {
		w.fail(fmt.Errorf("the project has more than %d entries outside the directories undo leaves out", MaxEntries))
		return
	}
	d.ents = make([]Entry, 0, len(names))
	d.subs = make([]*dirList, 0, len(names))
	for _, name := range names {
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		if w.skip[crel] {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			w.fail(fmt.Errorf("failed to look at %s: %w", crel, err))
			return
		}
		e := Entry{Path: crel, Mode: st.Mode & 0o7777, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Dev: st.Dev, Ino: st.Ino}
		var sub *dirList
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if slices.Contains(Regenerable, name) || name == "target" && cargo {
				w.mu.Lock()
				w.left = append(w.left, crel)
				w.mu.Unlock()
				continue
			}
			e.Kind, e.Size = Dir, 0
			cfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				e.Kind, e.Note = Skipped, "a directory that could not be read: "+errText(err)
				break
			}
			sub = &dirList{}
			select {
			case w.sem <- struct{}{}:
				w.wg.Add(1)
				go func() {
					defer func() { <-w.sem; w.wg.Done() }()
					w.dir(cfd, crel, sub)
				}()
			default:
				w.dir(cfd, crel, sub)
			}
		case unix.S_IFLNK:
			e.Kind = Link
			t, err := readlinkat(fd, name)
			if err != nil {
				e.Kind, e.Note = Skipped, "a link that could not be read: "+errText(err)
			}
			e.Target = t
		case unix.S_IFREG:
			e.Kind = File
			if w.s != nil {
				w.content(fd, name, &e)
			}
			if st.Nlink > 1 {
				w.mu.Lock()
				w.multi = append(w.multi, crel)
				w.mu.Unlock()
			}
		default:
			e.Kind, e.Note = Skipped, "neither a file, a directory nor a link"
		}
		d.ents = append(d.ents, e)
		d.subs = append(d.subs, sub)
	}
}

// content sets e's Hash: from the index when the file is as the last
// record saw it, else by copying it into a blob.
func (w *walker) content(dirfd int, name string, e *Entry) {
	if h := w.index.lookup(e.key()); h != "" && e.Ctime < w.racy {
		e.Hash = h
		return
	}
	if e.Size > MaxFileSize {
		e.Note = fmt.Sprintf("larger than %d MiB: not copied", MaxFileSize>>20)
		return
	}
	h, n, err := w.copy(dirfd, name, e)
	if err != nil {
		e.Note = "could not be copied: " + errText(err)
		return
	}
	e.Hash = h
	w.mu.Lock()
	w.copied++
	w.copiedBytes += n
	w.mu.Unlock()
}

// copy reads the file name (in dirfd, not following a link) into a blob
// and returns its hash.
func (w *walker) copy(dirfd int, name string, e *Entry) (string, int64, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
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
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(src, MaxFileSize+1))
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

// readlinkat reads the link name in dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; size <= 1<<16; size *= 4 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
	return "", errors.New("link target too long")
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
