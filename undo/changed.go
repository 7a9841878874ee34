package undo

import (
	"time"
)

// Changes is what the records of the calls since a time say they
// changed (ChangedSince).
type Changes struct {
	// Paths are below the project (slash-separated, relative; files,
	// links and what is gone, not directories whose entries changed),
	// newest record first, each once; More: there were more than asked.
	Paths []string
	More  bool
	// Unfinished are the records whose launcher did not finish (killed):
	// no after-state, their paths unknown. Unreadable are the records
	// whose description cannot be read (undo --list names them): what
	// their calls changed is not known either.
	Unfinished, Unreadable int
	// Left are the directories those calls' records left out (the
	// regenerable ones, node_modules and the like), whose files the
	// calls may have changed unseen: the first maxLeft, each once, and
	// LeftMore whether there were more.
	Left     []string
	LeftMore bool
	// Pruned is how many records of those calls prune removed (their
	// paths, as the pruned trace keeps them, are among Paths), and of
	// them PrunedUnknown had no after-state: what they changed is not
	// known. PrunedCut: records of calls since were pruned and the trace
	// of them is gone too (it is bounded): what they changed is not known.
	Pruned, PrunedUnknown int
	PrunedCut             bool
}

// ChangedSince lists what the records of the calls that ran at or after
// since changed (RecordsRunningSince; live: a launch of the project runs
// now), as their after-states say, at most max paths. Records are what
// confined calls that could write left (package confine), and the trace
// of those prune removed (PrunedSince); nothing here reads the project
// itself.
func (s *Store) ChangedSince(since time.Time, max int, live bool) (Changes, error) {
	var c Changes
	metas, bad, err := s.RecordsRunningSince(since, live)
	if err != nil {
		return c, err
	}
	c.Unreadable = len(bad)
	seen, left := map[string]bool{}, map[string]bool{}
	for _, m := range metas {
		c.addLeft(left, m.Left, m.LeftMore > 0)
		if c.More {
			// The paths named are all there will be: an after-state is
			// not read (the hook asks on every held call, and each may
			// be tens of megabytes), only whether there is one.
			if !m.Finished {
				c.Unfinished++
			}
			continue
		}
		delta, ok, err := s.manifest("records/" + m.ID + "/after")
		if err != nil {
			return c, err
		}
		if !ok {
			c.Unfinished++
			continue
		}
		for _, e := range delta {
			if e.Kind != Dir && appendOnce(&c.Paths, seen, max, e.Path) {
				c.More = true
			}
		}
	}
	// The records prune removed: the eighty-sixth attack run pushed a
	// Makefile edit's record out with 215 jailed `true` calls, and the
	// warning on the held `make` was silent.
	p, err := s.PrunedSince(since, max)
	c.Pruned, c.PrunedUnknown, c.PrunedCut = p.Pruned, p.PrunedUnknown, p.PrunedCut || err != nil
	c.More = c.More || p.More
	// A pruned record's left-out directories too: a record of a call
	// that rewrote node_modules/lib/index.js changed nothing it recorded.
	c.addLeft(left, p.Left, p.LeftMore)
	if appendOnce(&c.Paths, seen, max, p.Paths...) {
		c.More = true
	}
	return c, nil
}

// addLeft adds to c.Left each of dirs that seen does not hold yet (past
// maxLeft, LeftMore is set), and sets LeftMore where more were left out
// than dirs names.
func (c *Changes) addLeft(seen map[string]bool, dirs []string, more bool) {
	if appendOnce(&c.Left, seen, maxLeft, dirs...) || more {
		c.LeftMore = true
	}
}

// appendOnce appends to *dst each of items that seen does not hold yet,
// and marks it seen, while *dst holds fewer than max; it reports whether
// an item was left out for the bound.
func appendOnce(dst *[]string, seen map[string]bool, max int, items ...string) (more bool) {
	for _, it := range items {
		if seen[it] {
			continue
		}
		seen[it] = true
		if len(*dst) == max {
			more = true
			continue
		}
		*dst = append(*dst, it)
	}
	return more
}
