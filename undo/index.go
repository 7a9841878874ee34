package undo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
	"sort"

	"github.com/loopguard/loopguard/fsx"
)

// An index is what a before-state's manifest says of each file it copied,
// for the next record: its key and its blob, fixed-size and sorted by
// inode, so that the next record looks a file up in the bytes it read,
// without parsing the manifest (10,000 files: 720 kB, mapped).
const indexRecord = 5*8 + 32

// unvouched is the change time an index gives a file it does not vouch
// for (its blob is still named, for pruning): no file has it (1677).
const unvouched = math.MinInt64

// makeIndex is the index of ents. A file changed at or after racy (ns) is
// kept with its change time unvouched, so no lookup finds it: a write in
// the same clock tick as the change its key shows, after the file was
// read, would leave the key as it was, so only a key older than the
// record by a margin vouches for the content read.
func makeIndex(ents []Entry, racy int64) []byte {
	// The records are written once, into the index's own bytes, and
	// sorted there (a record of 10,000 files: no second copy of 720 kB).
	n := 0
	for i := range ents {
		if ents[i].Kind == File && len(ents[i].Hash) == 64 {
			n++
		}
	}
	out := make([]byte, 0, n*indexRecord)
	fsx.PrefaultSlice(out)
	for i := range ents {
		if ents[i].Kind == File {
			out = appendRecord(out, &ents[i], racy)
		}
	}
	sort.Sort(indexRecords(out))
	return out
}

// appendRecord appends the index record of the file e (its key, its
// change time unvouched if at or after racy, and its blob) to out;
// nothing when e has no blob.
func appendRecord(out []byte, e *Entry, racy int64) []byte {
	if len(e.Hash) != 64 {
		return out
	}
	k := e.key()
	if e.Ctime >= racy {
		k.ctime = unvouched
	}
	start := len(out)
	out = binary.BigEndian.AppendUint64(out, k.ino)
	out = binary.BigEndian.AppendUint64(out, k.dev)
	out = binary.BigEndian.AppendUint64(out, uint64(k.size))
	out = binary.BigEndian.AppendUint64(out, uint64(k.mtime))
	out = binary.BigEndian.AppendUint64(out, uint64(k.ctime))
	for j := 0; j < 64; j += 2 {
		hi, lo := unhex(e.Hash[j]), unhex(e.Hash[j+1])
		if hi > 15 || lo > 15 {
			return out[:start] // not a hash: left out
		}
		out = append(out, hi<<4|lo)
	}
	return out
}

// mergeIndex is the index of a walk that found some files in the last
// index old (hit: a bit per record of old) and read the others (fresh:
// their records, in any order): the records of old it found, which are
// what makeIndex would make of those files again (same key, same blob;
// one record for several names of one file), merged with fresh's, sorted.
// Only fresh's records are sorted; old's are copied as they are.
func mergeIndex(old []byte, hit []uint64, fresh []byte) []byte {
	sort.Sort(indexRecords(fresh))
	n := len(fresh)
	for _, w := range hit {
		n += bits.OnesCount64(w) * indexRecord
	}
	out := make([]byte, 0, n)
	fsx.PrefaultSlice(out)
	less := func(a, b []byte) bool { return bytes.Compare(a[:40], b[:40]) < 0 }
	for i := 0; i < len(old)/indexRecord; i++ {
		if hit[i/64]&(1<<(i%64)) == 0 {
			continue
		}
		r := old[i*indexRecord : (i+1)*indexRecord]
		for len(fresh) > 0 && less(fresh, r) {
			out, fresh = append(out, fresh[:indexRecord]...), fresh[indexRecord:]
		}
		out = append(out, r...)
	}
	return append(out, fresh...)
}

// unhex is the value of the hex digit c, 255 for any other byte.
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// indexRecords sorts an index's records in place: by key, as
// compareKey orders keys (big-endian, so by their bytes).
type indexRecords []byte

func (r indexRecords) Len() int { return len(r) / indexRecord }
func (r indexRecords) Less(i, j int) bool {
	return bytes.Compare(r[i*indexRecord:i*indexRecord+40], r[j*indexRecord:j*indexRecord+40]) < 0
}
func (r indexRecords) Swap(i, j int) {
	var t [indexRecord]byte
	a, b := r[i*indexRecord:(i+1)*indexRecord], r[j*indexRecord:(j+1)*indexRecord]
	copy(t[:], a)
	copy(a, b)
	copy(b, t[:])
}

func compareKey(a, b key) int {
	if c := cmp.Compare(a.ino, b.ino); c != 0 {
		return c
	}
	if c := cmp.Compare(a.dev, b.dev); c != 0 {
		return c
	}
	if c := cmp.Compare(uint64(a.size), uint64(b.size)); c != 0 {
		return c
	}
	if c := cmp.Compare(uint64(a.mtime), uint64(b.mtime)); c != 0 {
		return c
	}
	return cmp.Compare(uint64(a.ctime), uint64(b.ctime))
}

// index is a read index: the bytes of its file, mapped or read, and
// where the last lookup ended.
type index struct {
	recs   []byte
	mapped bool // recs is a mapping (else read)
	last   int
}

// lookup is the blob of the file with key k ("" when unknown).
func (x *index) lookup(k key) string {
	if h := x.find(k); h != nil {
		return hex.EncodeToString(h)
	}
	return ""
}

// find is the hash of the file with key k, in the index's bytes (nil
// when unknown): a search by inode, then the whole key. A walk meets files in about the order
// they were made, which is about the order of their inodes: the search
// gallops from where the last one ended before it halves the rest.
func (x *index) find(k key) []byte {
	if i := x.findRec(k); i >= 0 {
		return x.recs[i*indexRecord+40 : (i+1)*indexRecord]
	}
	return nil
}

// findRec is the number of the record of the file with key k (-1 when
// unknown).
func (x *index) findRec(k key) int {
	n := len(x.recs) / indexRecord
	ino := func(i int) uint64 { return binary.BigEndian.Uint64(x.recs[i*indexRecord:]) }
	lo, hi := 0, n
	if x.last < n && ino(x.last) < k.ino {
		lo, hi = x.last+1, n
		for step := 1; lo+step < n; step *= 2 {
			if ino(lo+step) >= k.ino {
				hi = lo + step + 1
				break
			}
			lo += step + 1
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ino(m) < k.ino {
			lo = m + 1
		} else {
			hi = m
		}
	}
	x.last = min(lo, max(n-1, 0))
	for i := lo; i < n && ino(i) == k.ino; i++ {
		r := x.recs[i*indexRecord : (i+1)*indexRecord]
		if binary.BigEndian.Uint64(r[8:]) == k.dev && int64(binary.BigEndian.Uint64(r[16:])) == k.size &&
			int64(binary.BigEndian.Uint64(r[24:])) == k.mtime && int64(binary.BigEndian.Uint64(r[32:])) == k.ctime {
			return i
		}
	}
	return -1
}
