//go:build linux

package undo

import (
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// last is the newest record, which took its after-state from the
// watcher's answer named since, listing with the same skip set.
type last struct {
	meta  Meta
	chain chain
}

// lastChained is the newest record when the watcher's answer since is
// the one it took its after-state from; ok is false for anything else
// (no record, a newer one unfinished, another skip set).
func (s *Store) lastChained(skip, since string) (last, bool) {
	ents, err := os.ReadDir(s.recordsDir())
	if err != nil {
		return last{}, false
	}
	for i := len(ents) - 1; i >= 0; i-- {
		if !ents[i].IsDir() || !validID(ents[i].Name()) {
			continue
		}
		m, err := s.Meta(ents[i].Name())
		if err != nil || !m.Finished || m.Before == "" {
			return last{}, false
		}
		c, ok := s.readChain(m.ID)
		if !ok || c.after != since || c.skip != skip {
			return last{}, false
		}
		return last{meta: m, chain: c}, true
	}
	return last{}, false
}

// fromLast is the before-state from the last record's after-state and
// what the watcher heard changed since (changed): only those paths, the
// files the last record did not read or vouch for (changed by its call,
// or within 2 s of it) and the files with more than one name (a write
// through a name outside the project is heard nowhere) are looked at
// again; every other entry is the last record's. ok is false when it
// cannot be had (the listing unreadable): then the caller walks. Nothing
// changed at all: ents is nil, the record names the last listing, and
// reads it only if its after-state needs it (loadBefore).
func (r *Recorder) fromLast(w *walker, l last, changed map[string]bool) (ents []Entry, ok bool, err error) {
	delta, found, err := r.s.manifest("records/" + l.meta.ID + "/after")
	if err != nil || !found {
		return nil, false, nil
	}
	// The last record's left-out directories that are still there, and
	// (below) those the watcher heard made since: it watches none of
	// them, and a node_modules the user's npm install made after the
	// last walk, which a jailed call then rewrote, was named by no
	// record (the eighty-eighth attack run).
	r.meta.Left, r.meta.LeftMore = leftThere(r.s.Project, l.meta.Left), l.meta.LeftMore
	r.multi = l.chain.multi
	if len(changed) == 0 && len(delta) == 0 && len(l.chain.multi) == 0 && l.chain.clean {
		r.meta.Before, r.meta.Entries, r.lazy, r.clean = l.meta.Before, l.meta.Entries, l.meta.Before, true
		return nil, true, nil
	}
	before, whole, found, err := r.s.listing(l.meta.Before)
	if err != nil || !found {
		return nil, false, nil
	}
	r.base = whole
	slices.SortFunc(delta, func(a, b Entry) int { return walkOrder(a.Path, b.Path) })
	base := merge(before, delta)
	dirty := make(map[string]bool, len(changed))
	for p := range changed {
		dirty[p] = true
	}
	cut := l.meta.Started.Add(-2 * time.Second).UnixNano()
	kept := make([]Entry, 0, len(base))
	fsx.PrefaultSlice(kept)
	for _, e := range base {
		if unread(&e, cut) {
			dirty[e.Path] = true // looked at and read again
			continue
		}
		kept = append(kept, e)
	}
	root, err := unix.Open(r.s.Project, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("failed to open the project: %w", err)
	}
	defer unix.Close(root)
	otherNames(root, base, dirty)
	r.before = kept
	d, err := r.changes(dirty) // r.multi's files among them
	if err != nil {
		return nil, false, nil
	}
	r.meta.addLeft(r.left)
	r.left = nil
	ents = merge(kept, d) // d is in walk order
	if len(ents) > maxEntries {
		return nil, false, &TooLargeError{Bound: maxEntries}
	}
	multi := map[string]bool{}
	for _, m := range l.chain.multi {
		multi[m] = true
	}
	for i := range ents {
		e := &ents[i]
		if e.Kind != File || e.Hash != "" || e.Note != "" {
			continue
		}
		pfd, err := openParent(root, e.Path)
		if err != nil {
			e.Note = "could not be copied: " + errText(err)
			continue
		}
		name := path.Base(e.Path)
		var st fileStat
		if statAt(pfd, name, &st) == nil && st.nlink > 1 {
			multi[e.Path] = true
		}
		w.content(pfd, name, e)
		unix.Close(pfd)
	}
	r.multi = r.multi[:0:0]
	for i := range ents {
		if ents[i].Kind == File && multi[ents[i].Path] {
			r.multi = append(r.multi, ents[i].Path)
		}
	}
	w.partial = true
	return ents, true, nil
}

// loadBefore reads the before-state's listing where the record only
// named it (fromLast: nothing had changed).
func (r *Recorder) loadBefore() error {
	if r.before != nil || r.lazy == "" {
		return nil
	}
	ents, found, err := r.s.manifest(r.lazy)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("the listing %s is gone", r.lazy)
	}
	r.before = ents
	return nil
}

// otherNames adds to dirty the other names, in base, of each file in
// dirty that has more than one name now: a link made in the project
// (ln a b) is heard as b alone, and a write through b is heard in b's
// directory alone, while a's content changes too.
func otherNames(root int, base []Entry, dirty map[string]bool) {
	var byIno map[[2]uint64][]string
	for _, p := range slices.Collect(maps.Keys(dirty)) {
		pfd, err := openParent(root, p)
		if err != nil {
			continue
		}
		var st fileStat
		err = statAt(pfd, path.Base(p), &st)
		unix.Close(pfd)
		if err != nil || st.mode&unix.S_IFMT != unix.S_IFREG || st.nlink < 2 {
			continue
		}
		if byIno == nil {
			byIno = map[[2]uint64][]string{}
			for _, e := range base {
				if e.Kind == File {
					k := [2]uint64{e.Dev, e.Ino}
					byIno[k] = append(byIno[k], e.Path)
				}
			}
		}
		for _, q := range byIno[[2]uint64{st.dev, st.ino}] {
			dirty[q] = true
		}
	}
}
