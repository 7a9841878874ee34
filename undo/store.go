// Package undo records what a confined call that can write may change in
// its project, before it runs and after its last process has exited, and
// puts the project back as it was.
//
// A record is a manifest of every file, directory and link below the
// project that the jail can write (git-ignored ones included; .git, the
// executable configuration the jail may not write, and the regenerable
// directories in Regenerable are left out), with each file's content kept
// once, by its SHA-256, in the store's blobs. A file whose device, inode,
// size, modification and change times are those of the last record is
// not read again: a call that writes nothing copies nothing. The store
// lives beside loopguard's state directory (policy.UndoDir), which the
// jail can neither read nor write; the launcher holds the project's lock from before the call
// until after its last process has exited, so no two records of a
// project interleave and undo never runs beside a call.
//
// Package undo never prints.
package undo

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Bounds. A record keeps the newest MaxRecords calls per project, and
// those of the last KeepFor up to MaxRecentRecords, and the blobs they
// need; when the blobs and manifests pass MaxBlobBytes the oldest records go
// first (the newest always stays). A file larger than MaxFileSize is not
// copied (undo lists it as not recorded). A project with more than
// MaxEntries entries, or whose paths together pass MaxPathBytes, is not
// recorded, and the call is not run.
const (
	MaxRecords = 20
	// KeepFor: a record this young is kept past MaxRecords, up to
	// MaxRecentRecords (and within MaxBlobBytes): calls that change
	// nothing pushed the record of an rm out (the eighteenth attack run).
	KeepFor          = 24 * time.Hour
	MaxRecentRecords = 200
	MaxBlobBytes     = 2 << 30
	// MaxRecordBytes bounds what one record copies: past it a file is
	// not copied (undo lists it as not recorded), so that no one call
	// pushes the blobs past MaxBlobBytes and prunes every record before
	// it (the sixteenth attack run's 34 sparse files of 64 MiB, 130 KB on
	// disk, were copied as 2.2 GB, and the record of an earlier rm went).
	MaxRecordBytes = MaxBlobBytes / 8
	MaxFileSize    = 64 << 20
	MaxEntries     = 200_000
	// MaxPathBytes bounds the paths of those entries together, as
	// MaxEntries bounds their number: a record lists every path, and an
	// attack run's 100,000 empty files in one directory near PATH_MAX
	// deep cost a record about 1 GB of memory and 391 MB of manifest.
	MaxPathBytes = 64 << 20
	// pruneSlack: records are pruned when more than this many may go
	// (mayGo), so the cost of reading the kept manifests is paid once
	// every pruneSlack calls.
	pruneSlack = 10
)

// Regenerable are directory names a record leaves out, wherever they are:
// what a package manager or a build makes again from the project. undo
// says so. target only beside a Cargo.toml (Rust's build directory).
var Regenerable = []string{"node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".next", ".turbo", ".gradle"}

// ErrBusy: a confined call in the project holds its lock.
var ErrBusy = errors.New("a confined call is running in this project")

// ErrStateReadOnly: the undo directory is on a read-only mount (a sandbox
// around the agent that lets it write only the project and temp, such as
// Claude Code's set up without init's allowWrite entry): no record can be
// taken there.
var ErrStateReadOnly = errors.New("the undo directory is read-only here (a sandbox around the agent that init did not set up to let it be written): this call cannot be undone")

// ErrNoRecord: the project has no record (or not the one asked for).
var ErrNoRecord = errors.New("no undo record")

// TooLargeError: the project passed a bound of what a record lists,
// outside the directories undo leaves out: MaxEntries entries, or
// MaxPathBytes of paths (PathBytes). Neither a record nor undo lists
// such a project.
type TooLargeError struct {
	PathBytes bool
	Bound     int
	// Largest are the directories at the top of the project with the
	// most entries below them, most first (at most three), of those the
	// walk had listed when it stopped: a directory not reached yet is not
	// among them.
	Largest []DirCount
}

// DirCount is how many entries a walk listed below a directory.
type DirCount struct {
	Path    string // relative to the project
	Entries int
	// Partial: the walk stopped inside it: it holds at least Entries.
	Partial bool
}

func (e *TooLargeError) Error() string {
	if e.PathBytes {
		return fmt.Sprintf("the paths of the project's entries outside the directories undo leaves out are longer than %d MiB together", e.Bound>>20)
	}
	return fmt.Sprintf("the project has more than %d entries outside the directories undo leaves out", e.Bound)
}

// Meta describes one record.
type Meta struct {
	ID      string    `json:"id"`
	Project string    `json:"project"`
	Command string    `json:"command"` // what ran, shortened
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"` // zero: the launcher did not finish (killed)
	// Copied and CopiedBytes: the files this record had to copy (new or
	// changed since the last record).
	Copied      int   `json:"copied"`
	CopiedBytes int64 `json:"copied_bytes"`
	Entries     int   `json:"entries"`
	// Before names the manifest of the project before the call (a
	// record's ID: the one that first saw the project so).
	Before string `json:"before"`
	// Left are the regenerable directories left out, relative to the
	// project: the first maxLeft of them, and LeftMore how many more. A
	// call that made 320 node_modules under long names wrote a
	// description over what Meta reads, and its record, and every later
	// one, went from undo and the hook's warning (the sixteenth attack
	// run).
	Left     []string `json:"left,omitempty"`
	LeftMore int      `json:"left_more,omitempty"`
	// Listed is how the before-state was listed: "walk" (the whole
	// project), "watcher" (the last record's, with what the project's
	// watcher heard changed looked at again) or "unchanged" (the last
	// record's: nothing changed since).
	Listed string `json:"listed,omitempty"`
	// Finished: the after-state was recorded. Unrecorded: why the
	// launcher could not record it ("" when it was not recorded: the
	// launcher was killed before it could). Undone: when undo ran.
	Finished   bool      `json:"-"`
	Unrecorded string    `json:"-"`
	Undone     time.Time `json:"-"`
}

// Store is one project's records in the undo directory.
type Store struct {
	Dir     string // STATE-undo/KEY (policy.UndoDir)
	Project string
}

// Open is the store of project (absolute, clean) beside the state
// directory stateDir (policy.UndoDir); it creates nothing.
func Open(stateDir, project string) (*Store, error) {
	if stateDir == "" || !filepath.IsAbs(stateDir) {
		return nil, errors.New("no state directory to keep undo records in")
	}
	if !filepath.IsAbs(project) || filepath.Clean(project) != project {
		return nil, fmt.Errorf("the project %q is not a clean absolute path", project)
	}
	sum := sha256.Sum256([]byte(project))
	return &Store{Dir: filepath.Join(policy.UndoDir(stateDir), hex.EncodeToString(sum[:8])), Project: project}, nil
}

func (s *Store) recordsDir() string         { return filepath.Join(s.Dir, "records") }
func (s *Store) recordDir(id string) string { return filepath.Join(s.Dir, "records", id) }
func (s *Store) blobsDir() string           { return filepath.Join(s.Dir, "blobs") }

func (s *Store) manifestsDir() string { return filepath.Join(s.Dir, "manifests") }

// ListingsFile is where the launcher keeps the listings of the project's
// directories its last walk read (confine's listings), beside the
// records: a place no confined program and no agent's tool writes.
func (s *Store) ListingsFile() string { return filepath.Join(s.Dir, "listings") }

func (s *Store) blobPath(hash string) string {
	return filepath.Join(s.Dir, "blobs", hash[:2], hash)
}

// create makes the store's directories, each private to the user and
// none a link.
func (s *Store) create() error {
	base := filepath.Dir(s.Dir)
	if err := os.MkdirAll(base, 0o700); err != nil {
		if errors.Is(err, syscall.EROFS) {
			return ErrStateReadOnly
		}
		return fmt.Errorf("failed to create the undo directory: %w", err)
	}
	// What undo keeps is private, its directory included.
	for _, d := range []string{filepath.Dir(s.Dir), s.Dir, s.recordsDir(), s.blobsDir(), s.manifestsDir()} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			if errors.Is(err, syscall.EROFS) {
				return ErrStateReadOnly
			}
			return fmt.Errorf("failed to create %s: %w", d, err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("%s is not a private directory (a link, or open to others)", d)
		}
	}
	// A store made before needs neither its project file written again
	// nor another line in the index: each launch that writes made both
	// (about 0.3 ms, and an index that grew a line a call).
	if b, err := fsx.ReadRegular(filepath.Join(s.Dir, "project"), 1<<16, fsx.NoFollow); err == nil && string(b) == s.Project+"\n" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "project"), []byte(s.Project+"\n"), 0o600); err != nil {
		return err
	}
	// The index of the stores' projects (Projects), when there is one:
	// one is made by the first reader that finds none.
	if f, err := os.OpenFile(filepath.Join(base, projectsIndex), os.O_WRONLY|os.O_APPEND|fsx.NoFollow, 0); err == nil {
		_, err = f.Write([]byte(s.Project + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil
}

// projectsIndex is the file beside the stores that names the project of
// each, one a line.
const projectsIndex = "projects"

// Projects are the projects that have a store beside stateDir's
// (policy.UndoDir), as the index there names them: the hook's warning on
// a held call reads the stores of the projects a project is in and holds
// (package hooks), and reading each store's own project file cost a held
// call half a millisecond beside 30 projects. With no index, one is made
// from the stores' project files. None when there is no undo directory.
func Projects(stateDir string) ([]string, error) {
	base := policy.UndoDir(stateDir)
	if base == "" {
		return nil, nil
	}
	b, err := fsx.ReadRegular(filepath.Join(base, projectsIndex), 16<<20, fsx.NoFollow)
	if errors.Is(err, os.ErrNotExist) {
		return rebuildProjects(base)
	}
	if err != nil {
		return nil, err
	}
	return projectLines(b), nil
}

// projectLines are the absolute paths among b's lines (one not clean
// opens no store: Open; one may be there twice).
func projectLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && l[0] == '/' {
			out = append(out, l)
		}
	}
	return out
}

// rebuildProjects makes the index of base's stores from their project
// files (the stores an earlier version made have none).
func rebuildProjects(base string) ([]string, error) {
	ents, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []byte
	for _, ent := range ents {
		if !ent.IsDir() {
			continue
		}
		b, err := fsx.ReadRegular(filepath.Join(base, ent.Name(), "project"), 8<<10, fsx.NoFollow)
		if err != nil {
			continue
		}
		all = append(all, b...)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			all = append(all, '\n')
		}
	}
	_ = fsx.WriteFile(filepath.Join(base, projectsIndex), all, 0o600, false)
	return projectLines(all), nil
}

// newID is a record's name: its start time (so names sort in time order)
// and a random tail.
func newID(t time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405.000") + "-" + hex.EncodeToString(b[:])
}

// idTime is the start time a record's name holds (newID); ok is false
// for a name that holds none.
func idTime(id string) (t time.Time, ok bool) {
	const layout = "20060102-150405.000"
	if len(id) < len(layout) {
		return time.Time{}, false
	}
	t, err := time.Parse(layout, id[:len(layout)])
	return t, err == nil
}

// latestStart is the latest time record id's call can have started: its
// name holds its start to the millisecond below (newID).
func latestStart(id string) (time.Time, bool) {
	t, ok := idTime(id)
	return t.Add(time.Millisecond), ok
}

// validID reports whether id is a record's name, not a path.
func validID(id string) bool {
	if len(id) < 10 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validRel reports whether p is a clean relative path below the project.
func validRel(p string) bool {
	if p == "" || p[0] == '/' {
		return false
	}
	for len(p) > 0 {
		seg := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			seg, p = p[:i], p[i+1:]
			if p == "" {
				return false // a trailing slash
			}
		} else {
			p = ""
		}
		if seg == "" || seg == "." || seg == ".." || strings.IndexByte(seg, 0) >= 0 {
			return false
		}
	}
	return true
}

// List returns the project's records, newest first.
func (s *Store) List() ([]Meta, error) {
	metas, _, err := s.Records()
	return metas, err
}

// UnreadableRecord is a record whose description Meta cannot read.
type UnreadableRecord struct {
	ID  string
	Err error
}

// Records reads every record's description: those it can (metas, what
// List returns) and those it cannot (bad, which List leaves out: undo
// --list names them, and prune keeps every copy while one is there), each
// newest first.
func (s *Store) Records() (metas []Meta, bad []UnreadableRecord, err error) {
	return s.RecordsSince(time.Time{})
}

// RecordsSince is Records of the calls that started at or after since,
// told by the time each record's name holds before its description is
// read (a store keeps up to MaxRecentRecords; the hook asks for those
// since the human's last decision). A name that holds no time is read.
func (s *Store) RecordsSince(since time.Time) (metas []Meta, bad []UnreadableRecord, err error) {
	return s.records(func(id string) bool {
		at, ok := latestStart(id)
		return !ok || at.After(since)
	})
}

// RecordsRunningSince is RecordsSince with the calls that started before
// since and ran on after it: a record whose after-state (or the reason
// it has none) was written at or after since, and, with live (a launch of
// the project runs now), one that has neither yet, whose call may be the
// one running. A background call started before the human's last
// decision that then wrote the Makefile was named by no warning (the
// seventy-seventh attack run). One killed before it finished, with no
// launch running, is left out: when it ended is not known.
func (s *Store) RecordsRunningSince(since time.Time, live bool) (metas []Meta, bad []UnreadableRecord, err error) {
	return s.records(func(id string) bool {
		if at, ok := latestStart(id); !ok || at.After(since) {
			return true
		}
		for _, name := range []string{"after", "unrecorded"} {
			fi, err := os.Lstat(filepath.Join(s.recordDir(id), name))
			if err == nil {
				return !fi.ModTime().Before(since)
			}
		}
		return live
	})
}

// records reads the descriptions of the records whose name want takes,
// newest first.
func (s *Store) records(want func(id string) bool) (metas []Meta, bad []UnreadableRecord, err error) {
	ids, err := s.recordIDs()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		if !want(id) {
			continue
		}
		m, err := s.Meta(id)
		switch {
		case err == nil:
			metas = append(metas, m)
		case !errors.Is(err, ErrNoRecord):
			bad = append(bad, UnreadableRecord{ID: id, Err: err})
		}
	}
	slices.SortFunc(metas, func(a, b Meta) int { return strings.Compare(b.ID, a.ID) })
	slices.SortFunc(bad, func(a, b UnreadableRecord) int { return strings.Compare(b.ID, a.ID) })
	return metas, bad, nil
}

// recordIDs are the names of the project's records' directories (none
// when it has no record yet).
func (s *Store) recordIDs() ([]string, error) {
	ents, err := os.ReadDir(s.recordsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, ent := range ents {
		if ent.IsDir() && validID(ent.Name()) {
			ids = append(ids, ent.Name())
		}
	}
	return ids, nil
}

// Recorded reports whether the project has a record (its names alone are
// read).
func (s *Store) Recorded() (bool, error) {
	ids, err := s.recordIDs()
	return len(ids) > 0, err
}

// Meta reads record id's description.
func (s *Store) Meta(id string) (Meta, error) {
	if !validID(id) {
		return Meta{}, fmt.Errorf("%w: %q is not a record's name", ErrNoRecord, id)
	}
	b, err := fsx.ReadRegular(filepath.Join(s.recordDir(id), "meta.json"), 1<<20, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Meta{}, fmt.Errorf("%w %s in this project", ErrNoRecord, id)
	}
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil || m.ID != id || m.Before != "" && !validID(m.Before) {
		return Meta{}, fmt.Errorf("record %s: unreadable description", id)
	}
	if _, err := os.Lstat(filepath.Join(s.recordDir(id), "after")); err == nil {
		m.Finished = true
	} else if b, err := fsx.ReadRegular(filepath.Join(s.recordDir(id), "unrecorded"), maxUnrecorded+1, 0); err == nil {
		m.Unrecorded = strings.TrimSuffix(string(b), "\n")
	} else if !errors.Is(err, os.ErrNotExist) {
		m.Unrecorded = "why cannot be read: " + err.Error()
	}
	if b, err := fsx.ReadRegular(filepath.Join(s.recordDir(id), "undone"), 100, 0); err == nil {
		m.Undone, _ = time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	}
	return m, nil
}

// maxLeft bounds the left-out directories a record names (Meta.Left).
const maxLeft = 20

// setLeft sets m's left-out directories, the first maxLeft named.
func (m *Meta) setLeft(left []string) {
	m.Left, m.LeftMore = left, 0
	if len(left) > maxLeft {
		m.Left, m.LeftMore = left[:maxLeft], len(left)-maxLeft
	}
}

// addLeft adds to m's left-out directories each of dirs it does not
// name (past maxLeft, LeftMore counts it), and reports whether it added
// any.
func (m *Meta) addLeft(dirs []string) bool {
	added := false
	for _, d := range dirs {
		if slices.Contains(m.Left, d) {
			continue
		}
		added = true
		if len(m.Left) == maxLeft {
			m.LeftMore++
			continue
		}
		m.Left = append(m.Left, d)
	}
	return added
}

func (s *Store) writeMeta(m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return s.writeNew(filepath.Join(s.recordDir(m.ID), "meta.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// maxUnrecorded bounds the reason a record keeps for its missing
// after-state (keepUnrecorded).
const maxUnrecorded = 1024

// keepUnrecorded keeps why record id has no after-state (the launcher
// could not record it), so that undo does not take it for a launcher
// killed before it could: written whole or not at all, and durably.
func (s *Store) keepUnrecorded(id, why string) error {
	if len(why) > maxUnrecorded {
		cut := maxUnrecorded - len(" ...")
		for cut > 0 && !utf8.RuneStart(why[cut]) {
			cut--
		}
		why = why[:cut] + " ..."
	}
	p := filepath.Join(s.recordDir(id), "unrecorded")
	if err := fsx.WriteFile(p, []byte(why+"\n"), 0o600, true); err != nil {
		return err
	}
	stampNow(p)
	return nil
}

// stampNow sets path's times to the clock's now: the kernel stamps a
// file from its coarse clock, up to a tick (10 ms at HZ=100) behind
// time.Now, and a record's after-state (or why it has none) is compared
// with times from time.Now (RecordsRunningSince): an after-state written
// 2 ms after an approval carried a time before it, under load, and the
// call that wrote the Makefile counted as ended before the approval. Set
// after the write, it is never before the call's end. Not synced: after
// a crash the kernel's own time stands, a tick early at most.
func stampNow(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// MarkKilled keeps why record id of project's store under stateDir has no
// after-state when its launcher was killed before it could record one
// (keepUnrecorded): written by the recovery that swept for the call, its
// time is when the call is known to have ended (RecordsRunningSince). A
// record with an after-state, or a reason already, is left as it is.
func MarkKilled(stateDir, project, id, why string) error {
	s, err := Open(stateDir, project)
	if err != nil {
		return err
	}
	if !validID(id) {
		return fmt.Errorf("%q is not a record's name", id)
	}
	if _, err := os.Lstat(filepath.Join(s.recordDir(id), "meta.json")); err != nil {
		return err
	}
	for _, name := range []string{"after", "unrecorded"} {
		if _, err := os.Lstat(filepath.Join(s.recordDir(id), name)); err == nil {
			return nil
		}
	}
	return s.keepUnrecorded(id, why)
}

// markUndone says when record id was undone.
func (s *Store) markUndone(id string, t time.Time) error {
	return fsx.WriteFile(filepath.Join(s.recordDir(id), "undone"), []byte(t.UTC().Format(time.RFC3339Nano)+"\n"), 0o600, true)
}

// manifest reads the manifest at rel (below the store: the name of a
// before-state, or records/ID/after); ok is false when it is not there.
func (s *Store) manifest(rel string) (ents []Entry, ok bool, err error) {
	ents, _, ok, err = s.listing(rel)
	return ents, ok, err
}

// listing is manifest's, and the whole manifest it was built from: for a
// listing written whole, its name and ents themselves; for one written as
// a delta (deltaMagic), its base's name and listing. A delta's base must
// be a whole manifest, and be there: a delta whose base is gone is an
// error, not a listing.
func (s *Store) listing(rel string) (ents []Entry, base baseListing, ok bool, err error) {
	name, ents, err := s.readManifest(rel)
	if errors.Is(err, os.ErrNotExist) {
		return nil, baseListing{}, false, nil
	}
	if err != nil {
		return nil, baseListing{}, false, err
	}
	if name == "" {
		return ents, baseListing{name: rel, ents: ents}, true, nil
	}
	again, be, err := s.readManifest(name)
	if err == nil && again != "" {
		err = errManifest // a delta's base is never a delta
	}
	if err != nil {
		return nil, baseListing{}, false, fmt.Errorf("%s: its base %s: %w", rel, name, err)
	}
	return merge(be, ents), baseListing{name: name, ents: be}, true, nil
}

// readManifest reads the manifest at rel (as manifest names it) without
// merging a delta with its base: the base's name ("" for a whole
// manifest) and the manifest's own entries. A records/ID/after file is
// never a delta.
func (s *Store) readManifest(rel string) (base string, ents []Entry, err error) {
	p := filepath.Join(s.manifestsDir(), rel)
	if strings.Contains(rel, "/") {
		p = filepath.Join(s.Dir, rel)
	}
	b, err := fsx.ReadRegular(p, maxManifest, 0)
	switch {
	case err != nil:
		return "", nil, err
	case !strings.Contains(rel, "/") && isDelta(b):
		base, ents, err = parseDelta(b)
	default:
		ents, err = parseManifest(b)
	}
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", rel, err)
	}
	return base, ents, nil
}

// baseListing is a whole manifest: its name and its listing.
type baseListing struct {
	name string
	ents []Entry
}

// baseOf is the name of the whole manifest the manifest name is built
// on: name itself when it is whole. It reads a delta's first two lines
// alone. The error is not-exist where there is no such manifest.
func (s *Store) baseOf(name string) (string, error) {
	f, err := os.OpenFile(filepath.Join(s.manifestsDir(), name), os.O_RDONLY|syscall.O_NONBLOCK|fsx.NoFollow, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var buf [len(deltaMagic) + 65]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	head := string(buf[:n])
	if strings.HasPrefix(head, manifestMagic) {
		return name, nil
	}
	if rest, ok := strings.CutPrefix(head, deltaMagic); ok {
		if base, _, ok := strings.Cut(rest, "\n"); ok && validID(base) {
			return base, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, errManifest)
}

// writeNew writes a file that does not exist yet: a temp file renamed to
// its name (no rename over a file, which would make ext4 flush it).
func (s *Store) writeNew(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|fsx.NoFollow, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
