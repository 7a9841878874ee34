package undo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"math"
	"sort"
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
	for i := range ents {
		e := &ents[i]
		if e.Kind != File || len(e.Hash) != 64 {
			continue
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
				out = out[:start] // not a hash: left out
				break
			}
			out = append(out, hi<<4|lo)
		}
	}
	sort.Sort(indexRecords(out))
	return out
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
			return r[40:]
		}
	}
	return nil
}
