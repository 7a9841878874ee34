//go:build linux

package undo

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// prune removes the oldest records past MaxRecords that are older than
// KeepFor, or past MaxRecentRecords (mayGo), and past MaxBlobBytes (the
// copies, the manifests and the after-states), then every manifest and blob no kept record
// needs. keep
// is never removed. What each record removed changed, and when its call
// ran, is appended to the pruned trace first (tracePrune): the hook's
// warning names it still. The blobs a manifest needs are read from its index
// (fixed-size records, mapped, no parse); the blobs are swept only when a
// manifest went (the records of an unchanged project share one manifest:
// removing them frees no blob) or they are over their bound.
func (s *Store) prune(keep string) error {
	ents, err := os.ReadDir(s.recordsDir())
	if err != nil {
		return err
	}
	var ids []string
	for _, ent := range ents {
		if validID(ent.Name()) {
			ids = append(ids, ent.Name())
		}
	}
	slices.Sort(ids)
	over := s.blobsOver()
	now := time.Now()
	if countGoing(ids, now) <= pruneSlack && !over {
		return nil
	}
	for mayGo(ids, now) && ids[0] != keep {
		if err := s.tracePrune(ids[0]); err != nil {
			return err
		}
		if err := os.RemoveAll(s.recordDir(ids[0])); err != nil {
			return err
		}
		ids = ids[1:]
	}
	for {
		// named: the listings the kept records name; manifests: the files
		// they need, their bases among them.
		named, manifests := map[string]bool{}, map[string]bool{}
		for _, id := range ids {
			m, err := s.Meta(id)
			if err != nil && !errors.Is(err, ErrNoRecord) {
				// What a record whose description cannot be read needs
				// cannot be told: every manifest and blob is kept
				// (undo --list names it), rather than its copies lost.
				return nil
			}
			if err == nil && m.Before != "" && !named[m.Before] {
				named[m.Before], manifests[m.Before] = true, true
				// A delta's base (writeDelta), which may be no record's own.
				// A listing there whose base cannot be told: as above.
				b, err := s.baseOf(m.Before)
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil
				}
				if b != "" {
					manifests[b] = true
				}
			}
		}
		removed := false
		if files, err := os.ReadDir(s.manifestsDir()); err == nil {
			for _, f := range files {
				name, isIndex := strings.CutSuffix(f.Name(), ".idx")
				// The index of a base no kept record names goes too: the
				// copies of its files every kept record has changed since
				// are swept (usedBlobs), and a walk must not take one of
				// those files back from it unread (latestIndex).
				if !manifests[name] || isIndex && !named[name] {
					_ = os.Remove(filepath.Join(s.manifestsDir(), f.Name()))
					removed = true
				}
			}
		}
		if !removed && !over {
			return nil
		}
		used, err := s.usedBlobs(named)
		if err != nil {
			return err
		}
		total, err := s.sweepBlobs(used)
		if err != nil {
			return err
		}
		over = total > storedBytes
		if !over || len(ids) <= 1 || ids[0] == keep {
			return nil
		}
		if err := s.tracePrune(ids[0]); err != nil {
			return err
		}
		if err := os.RemoveAll(s.recordDir(ids[0])); err != nil {
			return err
		}
		ids = ids[1:]
	}
}

// mayGo reports whether the oldest of ids (sorted, oldest first) may go
// by their count: past the newest MaxRecentRecords, or past the newest
// MaxRecords and started more than KeepFor before now (a name that holds
// no time is old). The eighteenth attack run pushed the record of an rm
// out with 30 calls that changed nothing; now it takes MaxRecentRecords
// calls in a day.
func mayGo(ids []string, now time.Time) bool {
	if len(ids) > MaxRecentRecords {
		return true
	}
	if len(ids) <= MaxRecords {
		return false
	}
	t, ok := idTime(ids[0])
	return !ok || now.Sub(t) > KeepFor
}

// countGoing is how many of ids mayGo would remove, oldest first.
func countGoing(ids []string, now time.Time) int {
	n := 0
	for mayGo(ids[n:], now) {
		n++
	}
	return n
}

// usedBlobs are the blobs the listings named need, each with its size:
// of a whole listing, from its index, or the listing itself where the
// index cannot be read; of a delta, its own entries', and its base's
// entries that some delta named does not change (a base no kept record
// names itself holds on to nothing every kept record has changed since:
// the twenty-fifth attack run had a base keep 1.4 GB of copies no record
// needed, which pruned every record but the last). A listing that cannot
// be read is an error: no blob it may need is removed.
func (s *Store) usedBlobs(named map[string]bool) (map[[32]byte]int64, error) {
	used := map[[32]byte]int64{}
	add := func(e Entry) {
		var h [32]byte
		if len(e.Hash) == 64 {
			if _, err := hex.Decode(h[:], []byte(e.Hash)); err == nil {
				used[h] = e.Size
			}
		}
	}
	read := func(name string) (base string, ents []Entry, err error) {
		if base, ents, err = s.readManifest(name); err != nil {
			return "", nil, fmt.Errorf("failed to read the manifest %s to prune: %v", name, err)
		}
		return base, ents, nil
	}
	deltas := map[string][][]Entry{} // base -> the changes of each delta named on it
	for name := range named {
		if x, ok := mapIndex(filepath.Join(s.manifestsDir(), name+".idx")); ok {
			for b := x.recs; len(b) >= indexRecord; b = b[indexRecord:] {
				used[[32]byte(b[40:indexRecord])] = int64(binary.BigEndian.Uint64(b[16:]))
			}
			x.unmap()
			continue
		}
		base, ents, err := read(name)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			add(e)
		}
		if base != "" {
			deltas[base] = append(deltas[base], ents)
		}
	}
	for base, ds := range deltas {
		if named[base] {
			continue // counted whole
		}
		_, ents, err := read(base)
		if err != nil {
			return nil, err
		}
		changed := map[string]int{} // path -> how many of ds change it
		for _, d := range ds {
			for _, e := range d {
				changed[e.Path]++
			}
		}
		for _, e := range ents {
			if changed[e.Path] < len(ds) {
				add(e)
			}
		}
	}
	return used, nil
}

// blobsOver reports whether the blobs and manifests were over their
// bound when last counted (the size file the last sweep wrote, plus what
// was copied and listed since).
func (s *Store) blobsOver() bool {
	b, err := os.ReadFile(filepath.Join(s.Dir, "blobs-size"))
	if err != nil {
		return false
	}
	var n int64
	_, _ = fmt.Sscan(string(b), &n)
	return n > storedBytes
}

// storedBytes is MaxBlobBytes (a test lowers it).
var storedBytes int64 = MaxBlobBytes

// addBlobBytes adds n to the blobs' counted size.
func (s *Store) addBlobBytes(n int64) {
	if n == 0 {
		return
	}
	p := filepath.Join(s.Dir, "blobs-size")
	var cur int64
	if b, err := os.ReadFile(p); err == nil {
		_, _ = fmt.Sscan(string(b), &cur)
	}
	_ = fsx.WriteFile(p, []byte(fmt.Sprintln(cur+n)), 0o600, false)
}

// sweepBlobs removes every blob used does not name (and every file in
// the blob directories that is not a blob), and returns the size of
// those left, as the indexes say (the size of the file each was copied
// from; no blob is looked at), and of the manifests, which count toward
// MaxBlobBytes too.
func (s *Store) sweepBlobs(used map[[32]byte]int64) (int64, error) {
	var total int64
	dirs, err := os.ReadDir(s.blobsDir())
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		sub := filepath.Join(s.blobsDir(), d.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		for _, f := range files {
			size, ok := blobSize(used, f.Name())
			if !ok {
				_ = os.Remove(filepath.Join(sub, f.Name()))
				continue
			}
			total += size
		}
	}
	total += s.manifestBytes() + s.afterBytes()
	_ = fsx.WriteFile(filepath.Join(s.Dir, "blobs-size"), []byte(fmt.Sprintln(total)), 0o600, false)
	return total, nil
}

// afterBytes is the size of the records' after-states (records/ID/after),
// which count toward MaxBlobBytes with the manifests: a call that made a
// Cargo.toml beside a target/ of 64 MiB of long names, which the next
// record left out, wrote an after-state of that size, uncounted, on every
// call (the seventy-seventh attack run).
func (s *Store) afterBytes() int64 {
	var n int64
	ids, _ := s.recordIDs()
	for _, id := range ids {
		if fi, err := os.Lstat(filepath.Join(s.recordDir(id), "after")); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// manifestBytes is the size of the manifests (their indexes left out:
// fixed records, a few per cent of a manifest).
func (s *Store) manifestBytes() int64 {
	var n int64
	files, _ := os.ReadDir(s.manifestsDir())
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".idx") {
			continue
		}
		if fi, err := f.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// blobSize is the size used gives the blob named name (a lowercase hex
// SHA-256); ok is false when used does not name it.
func blobSize(used map[[32]byte]int64, name string) (size int64, ok bool) {
	var h [32]byte
	if len(name) != 64 || strings.ToLower(name) != name {
		return 0, false
	}
	if _, err := hex.Decode(h[:], []byte(name)); err != nil {
		return 0, false
	}
	size, ok = used[h]
	return size, ok
}
