package undo

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/loopguard/loopguard/fsx"
)

// Kind is what an entry of a manifest is.
type Kind byte

const (
	File    Kind = 'f'
	Dir     Kind = 'd'
	Link    Kind = 'l'
	Skipped Kind = 'x' // there, but not recorded (Entry.Note says why)
	Gone    Kind = '-' // in an after-state's changes: no longer there
)

// Entry is one path below the project, as a record saw it.
type Entry struct {
	Path string // relative to the project, slash-separated
	Kind Kind
	Mode uint32 // permission bits, setuid, setgid and sticky
	Size int64
	// Mtime and Ctime are in nanoseconds; with Dev and Ino they are the
	// key that tells a file the record saw from one that changed since
	// (the change time is set by the kernel on every write, rename and
	// chmod, and no program can set it back).
	Mtime, Ctime int64
	Dev, Ino     uint64
	Hash         string // a File's content (hex SHA-256), before-states only; "" with a Note: not recorded
	Target       string // a Link's target, as readlink gives it
	Note         string // why a Skipped entry, or a File without Hash, was not recorded
}

// key is what tells whether a file is unchanged.
type key struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func (e Entry) key() key { return key{e.Dev, e.Ino, e.Size, e.Mtime, e.Ctime} }

// manifestMagic starts every manifest: its format's version.
const manifestMagic = "loopguard-undo-manifest 1\n"

// fields is the number of NUL-terminated fields of one entry.
const fields = 11

// maxManifest bounds what a manifest read may hold.
const maxManifest = 512 << 20

// writeManifest writes the entries: each field NUL-terminated (no path
// holds a NUL), in the order of Entry.
func writeManifest(w io.Writer, ents []Entry) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(manifestMagic)
	var b []byte
	for i := range ents {
		b = appendEntry(b[:0], &ents[i])
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// manifestBytes is what writeManifest writes, in one allocation (sized
// for the longest numbers each entry can have).
func manifestBytes(ents []Entry) []byte {
	b := make([]byte, 0, manifestSize(ents))
	fsx.PrefaultSlice(b)
	b = append(b, manifestMagic...)
	for i := range ents {
		b = appendEntry(b, &ents[i])
	}
	return b
}

// manifestSize bounds what writeManifest writes of ents.
func manifestSize(ents []Entry) int {
	size := len(manifestMagic)
	for i := range ents {
		e := &ents[i]
		size += len(e.Path) + len(e.Hash) + len(e.Target) + len(e.Note) + maxEntryFixed
	}
	return size
}

// recordMax bounds a manifest a record writes: one over what a read takes
// (maxManifest) made its record one undo could never read, even once the
// files were gone (the sixteenth attack run: 140,000 names of about 4,000
// bytes, a 565 MB listing after the call). A test lowers it.
var recordMax = maxManifest

// errTooLarge: a listing over recordMax.
var errTooLarge = fmt.Errorf("its listing would be over %d MiB (names that long): too large to record", maxManifest>>20)

// maxEntryFixed bounds what an entry's manifest text holds beside its
// path, hash, target and note: its kind, its mode (octal), five more
// numbers and a NUL after each field.
const maxEntryFixed = 1 + 11 + 5*20 + fields

// appendEntry appends e's manifest text to b.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, e.Path...)
	b = append(b, 0, byte(e.Kind), 0)
	b = strconv.AppendUint(b, uint64(e.Mode), 8)
	b = append(b, 0)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, e.Mtime, 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, e.Ctime, 10)
	b = append(b, 0)
	b = strconv.AppendUint(b, e.Dev, 10)
	b = append(b, 0)
	b = strconv.AppendUint(b, e.Ino, 10)
	b = append(b, 0)
	b = append(b, e.Hash...)
	b = append(b, 0)
	b = append(b, e.Target...)
	b = append(b, 0)
	b = append(b, e.Note...)
	return append(b, 0)
}

// errManifest: a manifest that is not one this version wrote.
var errManifest = errors.New("malformed undo manifest")

// parseManifest reads what writeManifest wrote. The entries' strings
// share data's bytes, which the caller must not change afterwards.
func parseManifest(data []byte) ([]Entry, error) {
	if len(data) == 0 {
		return nil, errManifest
	}
	rest, ok := strings.CutPrefix(unsafe.String(&data[0], len(data)), manifestMagic)
	if !ok {
		return nil, errManifest
	}
	return parseEntries(rest)
}

// deltaMagic starts a manifest written as what its listing changes of
// another manifest's, its base: the base's name on the next line, then
// entries as a whole manifest's, in walk order, a Gone entry for a path
// the base lists and this listing does not. The listing is the base's
// with them applied (merge). A base is always a whole manifest.
//
// A record whose before-state differs from the last whole listing in
// a few files (the project's watcher heard what changed) writes one of
// these, a few hundred bytes, where a whole listing of a project of
// 10,000 files is 1.5 MB and its index 0.7 MB more.
const deltaMagic = "loopguard-undo-delta 1\n"

// deltaBytes is the manifest of the listing base's listing with d
// applied.
func deltaBytes(base string, d []Entry) []byte {
	b := make([]byte, 0, len(deltaMagic)+len(base)+1+manifestSize(d))
	b = append(b, deltaMagic...)
	b = append(b, base...)
	b = append(b, '\n')
	for i := range d {
		b = appendEntry(b, &d[i])
	}
	return b
}

// isDelta reports whether data is a delta manifest (deltaBytes).
func isDelta(data []byte) bool {
	return strings.HasPrefix(unsafe.String(unsafe.SliceData(data), len(data)), deltaMagic)
}

// parseDelta reads what deltaBytes wrote: the base's name and the
// changes, which must be in walk order, each path once.
func parseDelta(data []byte) (base string, d []Entry, err error) {
	if len(data) == 0 {
		return "", nil, errManifest
	}
	rest, ok := strings.CutPrefix(unsafe.String(&data[0], len(data)), deltaMagic)
	if !ok {
		return "", nil, errManifest
	}
	base, rest, ok = strings.Cut(rest, "\n")
	if !ok || !validID(base) {
		return "", nil, errManifest
	}
	if d, err = parseEntries(rest); err != nil {
		return "", nil, err
	}
	for i := 1; i < len(d); i++ {
		if walkOrder(d[i-1].Path, d[i].Path) >= 0 {
			return "", nil, fmt.Errorf("%w: %q is not after %q", errManifest, d[i].Path, d[i-1].Path)
		}
	}
	return base, d, nil
}

// changesOf is what after changes of base, both listings in walk order:
// after's entry of each path base lists differently or not at all, a
// Gone entry for each path after no longer lists. merge(base,
// changesOf(base, after)) is after, field for field.
func changesOf(base, after []Entry) []Entry {
	var out []Entry
	i, j := 0, 0
	for i < len(base) || j < len(after) {
		switch c := nextOf(base, after, i, j); {
		case c < 0:
			out = append(out, Entry{Path: base[i].Path, Kind: Gone})
			i++
		case c > 0:
			out = append(out, after[j])
			j++
		default:
			if base[i] != after[j] {
				out = append(out, after[j])
			}
			i++
			j++
		}
	}
	return out
}

// parseEntries reads the entries of a manifest, after its first line.
func parseEntries(rest string) ([]Entry, error) {
	out := make([]Entry, 0, strings.Count(rest, "\x00")/fields)
	fsx.PrefaultSlice(out)
	var f [fields]string
	for len(rest) > 0 {
		for i := range f {
			j := strings.IndexByte(rest, 0)
			if j < 0 {
				return nil, errManifest
			}
			f[i], rest = rest[:j], rest[j+1:]
		}
		e := Entry{Path: f[0], Hash: f[8], Target: f[9], Note: f[10]}
		if len(f[1]) != 1 {
			return nil, errManifest
		}
		e.Kind = Kind(f[1][0])
		switch e.Kind {
		case File, Dir, Link, Skipped, Gone:
		default:
			return nil, errManifest
		}
		if !validRel(e.Path) {
			return nil, fmt.Errorf("%w: path %q", errManifest, e.Path)
		}
		mode, err1 := strconv.ParseUint(f[2], 8, 32)
		var err2, err3, err4 error
		e.Size, err2 = strconv.ParseInt(f[3], 10, 64)
		e.Mtime, err3 = strconv.ParseInt(f[4], 10, 64)
		e.Ctime, err4 = strconv.ParseInt(f[5], 10, 64)
		dev, err5 := strconv.ParseUint(f[6], 10, 64)
		ino, err6 := strconv.ParseUint(f[7], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil {
			return nil, errManifest
		}
		e.Mode, e.Dev, e.Ino = uint32(mode)&0o7777, dev, ino
		out = append(out, e)
	}
	return out, nil
}

// walkOrder compares two paths in the order a walk lists them (each
// directory's names sorted, a directory right before what it holds): the
// order of the bytes, but a '/' before any other.
func walkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return -1
		}
		if y == '/' {
			return 1
		}
		return cmp.Compare(x, y)
	}
	return cmp.Compare(len(a), len(b))
}

// merge is overlay for two listings in walk order (before's, a delta's):
// before with delta applied, in walk order, without a sort.
func merge(before, delta []Entry) []Entry {
	out := make([]Entry, 0, len(before)+len(delta))
	fsx.PrefaultSlice(out)
	i, j := 0, 0
	for i < len(before) || j < len(delta) {
		switch c := nextOf(before, delta, i, j); {
		case c < 0:
			out = append(out, before[i])
			i++
		case c > 0:
			if delta[j].Kind != Gone {
				out = append(out, delta[j])
			}
			j++
		default:
			if delta[j].Kind != Gone {
				out = append(out, delta[j])
			}
			i++
			j++
		}
	}
	return out
}

// nextOf says which of two listings in walk order, read up to a[i] and
// b[j], holds the next path: a (-1; b is done), b (1; a is done), or both
// (0). merge and changesOf walk two listings by it.
func nextOf(a, b []Entry, i, j int) int {
	switch {
	case j == len(b):
		return -1
	case i == len(a):
		return 1
	}
	return walkOrder(a[i].Path, b[j].Path)
}
