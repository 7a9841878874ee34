package undo

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
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
	type rec struct {
		k key
		h [32]byte
	}
	var rs []rec
	for _, e := range ents {
		if e.Kind != File || len(e.Hash) != 64 {
			continue
		}
		var r rec
		r.k = e.key()
		if e.Ctime >= racy {
			r.k.ctime = unvouched
		}
		if _, err := hex.Decode(r.h[:], []byte(e.Hash)); err != nil {
			continue
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b rec) int { return compareKey(a.k, b.k) })
	out := make([]byte, 0, len(rs)*indexRecord)
	for _, r := range rs {
		out = binary.BigEndian.AppendUint64(out, r.k.ino)
		out = binary.BigEndian.AppendUint64(out, r.k.dev)
		out = binary.BigEndian.AppendUint64(out, uint64(r.k.size))
		out = binary.BigEndian.AppendUint64(out, uint64(r.k.mtime))
		out = binary.BigEndian.AppendUint64(out, uint64(r.k.ctime))
		out = append(out, r.h[:]...)
	}
	return out
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
