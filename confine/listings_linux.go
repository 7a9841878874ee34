//go:build linux

package confine

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/undo"
	"golang.org/x/sys/unix"
)

// listings are the directory listings a project-write plan's walk read,
// kept beside the project's undo records (undo.Store.ListingsFile), so
// that the next plan of the project lists again only the directories that
// changed: the walk read every directory of the project on every call
// that may write, and in a project of 8,000 directories (82,000 entries,
// most of them a node_modules) that was most of the call's time.
//
// A listing is taken again only for the directory it was read from, as it
// was then: the same device and inode (one fstatat from the project), and
// the same change time, which the kernel sets to the current time
// whenever a name is made, removed or moved in the directory, and which
// no program sets back (utimensat sets the access and modification times
// alone; only the clock, root's, moves it). Only a listing whose change
// time was at least listingSettle before the walk that read it began is
// kept: a change in the same tick of the kernel's coarse clock as the
// reading (or the same second, where a file system keeps whole seconds)
// could leave the time as it was. Only directories on the project's own
// device are kept, and only where that is a local file system whose
// change times are its own (not NFS, whose client may answer a stat from
// its cache, nor FUSE).
//
// What the walk makes of a listing (clean, held, the rules) is made again
// on every call, from the listing: the file holds what the directories
// are, never what the guard decided. A rule the plan makes is still
// opened beneath the project through no link, and on the inode the walk
// took (Plan.RuleIDs). The file is where the undo records are, which no
// confined program reaches and which the hook keeps from every agent's
// tool as the guard's own (policy.UndoDir); it is read whole, checked
// (its sum, the project's device and inode) and taken as empty when
// anything in it is not as written. Where the undo directory cannot be
// written (Claude Code's sandbox without init's exception for it), no
// listing is kept, and every walk reads every directory.
type listings struct {
	path  string
	dev   uint64 // the project's device
	root  uint64 // the project's inode
	start int64  // when this plan began, in ns: what settled means
	// data is the file as read (unchanged after: names are substrings of
	// it), old where each directory's record is in it.
	data string
	old  map[string]listingSpan
	// What this walk will leave, if it is not what it found: the records
	// it took again (where each is in data), and those it read and may
	// keep, encoded (fresh). Nothing is copied until then: most walks
	// leave the file as it is.
	took  [][2]int
	fresh []byte
	kept  int // directories read anew whose listing is in fresh
}

// listingSpan is one directory's record in listings.data: its inode and
// change time, and where the record begins, its entries' encoding
// begins, and the record ends.
type listingSpan struct {
	ino            uint64
	ctime          int64
	rec, ents, end int
}

// A listings file: listingsMagic, the project's device and inode and the
// number of records (uvarints), the records, and the CRC-32C (Castagnoli)
// of all before it, little-endian. A record: its length, then the
// directory's path in the project ("" the top), inode and change time (a
// varint), the number of entries, and each entry's name, type (entCode)
// and inode; strings are a length and the bytes.
const (
	listingsMagic = "loopguard-listings 1\n"
	maxListings   = 256 << 20
)

// listingsTable is made when a launch first reads or writes listings, not
// at every start of the launcher and the hook (about 0.1 ms of the
// launcher's start here: a table a CPU feature picks, built by hand).
var listingsTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// listingsFS are the file systems whose change times listings trust: the
// local ones a project lives on.
var listingsFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true,
	unix.TMPFS_MAGIC: true, unix.F2FS_SUPER_MAGIC: true, unix.BCACHEFS_SUPER_MAGIC: true,
}

// openListings reads the listings of project, open as root (O_PATH), kept
// beside its undo records in the undo directory of stateDir; nil where
// none can be kept (no state directory, another file system).
func openListings(stateDir, project string, root int, started time.Time) *listings {
	var st unix.Stat_t
	var fs unix.Statfs_t
	store, err := undo.Open(stateDir, project)
	if err != nil || unix.Fstat(root, &st) != nil || unix.Fstatfs(root, &fs) != nil || !listingsFS[int64(fs.Type)] {
		return nil
	}
	l := &listings{path: store.ListingsFile(), dev: st.Dev, root: st.Ino, start: started.Add(-listingSettle).UnixNano()}
	l.load()
	return l
}

// dirs is how many directories the file lists.
func (l *listings) dirs() int { return len(l.old) }

// load reads the file; anything not as written leaves old empty.
func (l *listings) load() {
	b, err := fsx.ReadRegular(l.path, maxListings, fsx.NoFollow)
	if err != nil || len(b) < len(listingsMagic)+4 || string(b[:len(listingsMagic)]) != listingsMagic {
		return
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, listingsTable()) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return
	}
	// Never written after this: each name the walk takes from it is a
	// substring, not a copy.
	data := unsafe.String(unsafe.SliceData(body), len(body))
	r := reader{s: data, i: len(listingsMagic)}
	if r.uvarint() != l.dev || r.uvarint() != l.root || r.bad {
		return
	}
	count := r.uvarint()
	if r.bad || count > uint64(len(data)) {
		return
	}
	old := make(map[string]listingSpan, count)
	for r.i < len(data) && !r.bad {
		rec := r.i
		size := r.uvarint()
		if r.bad || size > uint64(len(data)-r.i) {
			return
		}
		end := r.i + int(size)
		rel := r.str()
		ino, ctime := r.uvarint(), r.varint()
		if _, twice := old[rel]; r.bad || r.i > end || twice {
			return
		}
		old[rel] = listingSpan{ino: ino, ctime: ctime, rec: rec, ents: r.i, end: end}
		r.i = end
	}
	if uint64(len(old)) != count {
		return
	}
	if !r.bad {
		l.data, l.old = data, old
	}
}

// lookup appends to dst the listing of rel ("" the project) kept for it,
// if rel is still the directory it was read from, as it was then (its
// device, inode and change time), and keeps it for the next walk.
func (l *listings) lookup(dst []dirEnt, root int, rel string) (ctime int64, id [2]uint64, ents []dirEnt, ok bool) {
	s, found := l.old[rel]
	if !found {
		return 0, id, dst, false
	}
	var st unix.Stat_t
	if statBeneath(root, rel, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR ||
		st.Dev != l.dev || st.Ino != s.ino || st.Ctim.Nano() != s.ctime {
		return 0, id, dst, false
	}
	r := reader{s: l.data[:s.end], i: s.ents}
	n := r.uvarint()
	if r.bad || n > uint64(s.end-s.ents) {
		return 0, id, dst, false
	}
	ents = dst
	for range n {
		name := r.str()
		t := r.byte()
		ino := r.uvarint()
		typ, known := entType(t)
		if r.bad || !known || !entName(name) {
			return 0, id, dst, false
		}
		ents = append(ents, dirEnt{name: name, typ: typ, ino: ino})
	}
	if r.i != s.end {
		return 0, id, dst, false
	}
	l.took = append(l.took, [2]int{s.rec, s.end})
	return s.ctime, [2]uint64{st.Dev, st.Ino}, ents, true
}

// keep keeps the listing ents of rel, just read (its change time ctime,
// its device and inode id), if it had settled when the walk began.
func (l *listings) keep(rel string, ctime int64, id [2]uint64, ents []dirEnt) {
	if id[0] != l.dev || ctime >= l.start {
		return
	}
	var body []byte
	body = appendStr(body, rel)
	body = binary.AppendUvarint(body, id[1])
	body = binary.AppendVarint(body, ctime)
	body = binary.AppendUvarint(body, uint64(len(ents)))
	for _, e := range ents {
		t, ok := entCode(e.typ)
		if !ok {
			return // a type not read (ModeIrregular): read again next time
		}
		body = appendStr(body, e.name)
		body = append(body, t)
		body = binary.AppendUvarint(body, e.ino)
	}
	l.fresh = append(binary.AppendUvarint(l.fresh, uint64(len(body))), body...)
	l.kept++
}

// save writes the listings this walk read or took again, when they are
// not those it found: a listing read anew, or one not taken again (a
// directory gone, or changed and not yet settled). A write that fails
// (the project's undo directory not made yet, or read-only) leaves the
// old file, or none: the next walk reads what it must.
func (l *listings) save() {
	if len(l.fresh) == 0 && len(l.took) == len(l.old) {
		return
	}
	b := make([]byte, 0, len(l.data)+len(l.fresh)+4)
	b = binary.AppendUvarint(binary.AppendUvarint(append(b, listingsMagic...), l.dev), l.root)
	b = binary.AppendUvarint(b, uint64(len(l.took)+l.kept))
	for _, t := range l.took {
		b = append(b, l.data[t[0]:t[1]]...)
	}
	b = append(b, l.fresh...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, listingsTable()))
	_ = fsx.WriteFile(l.path, b, 0o600, false)
}

// entCode is the byte a listing keeps for an entry's type: the types
// readDir gives, ModeIrregular (not read) none.
func entCode(t os.FileMode) (byte, bool) {
	switch t {
	case 0:
		return 'f', true
	case os.ModeDir:
		return 'd', true
	case os.ModeSymlink:
		return 'l', true
	case os.ModeDevice:
		return 'o', true
	}
	return 0, false
}

// entType is entCode's inverse.
func entType(c byte) (os.FileMode, bool) {
	switch c {
	case 'f':
		return 0, true
	case 'd':
		return os.ModeDir, true
	case 'l':
		return os.ModeSymlink, true
	case 'o':
		return os.ModeDevice, true
	}
	return 0, false
}

// entName: name is one a directory can hold (not empty, ".", "..", and
// no / or NUL in it).
func entName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader decodes a listings file; bad is set at the first thing that is
// not as written, and everything after reads as zero.
type reader struct {
	s   string
	i   int
	bad bool
}

func (r *reader) uvarint() uint64 {
	var v uint64
	for shift := uint(0); !r.bad; shift += 7 {
		if r.i >= len(r.s) || shift > 63 {
			r.bad = true
			break
		}
		c := r.s[r.i]
		r.i++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	return 0
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

func (r *reader) byte() byte {
	if r.bad || r.i >= len(r.s) {
		r.bad = true
		return 0
	}
	r.i++
	return r.s[r.i-1]
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)-r.i) {
		r.bad = true
		return ""
	}
	r.i += int(n)
	return r.s[r.i-int(n) : r.i]
}
