package state

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"
)

// PruneCounts says what Prune removed.
type PruneCounts struct {
	ExpiredGrants int // unconsumed grants past their expiry
	Consumed      int // used exact grants older than the cut-off
	Pending       int // pending records (and their calls) not seen since the cut-off
	Notes         int // PostToolUse notes, told markers and temp files older than the cut-off
}

// Prune removes what can no longer allow anything or needs no decision:
// grants whose expiry has passed, and consumed grants, pending records,
// PostToolUse notes and stray temp files untouched since before cutoff.
// Grants that still verify are never removed here (revoke does that).
func (s *Store) Prune(now, cutoff time.Time) (PruneCounts, error) {
	var c PruneCounts
	all, err := s.AllGrants()
	if err != nil {
		return c, err
	}
	for _, gf := range all {
		if gf.Grant != nil && !now.Before(gf.Grant.Expiry) {
			if err := s.RemoveGrant(gf.Path); err == nil {
				c.ExpiredGrants++
			}
		}
	}
	old := func(dir string, fn func(name string) error) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) {
				continue
			}
			if err := fn(e.Name()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := old(s.path("consumed"), func(n string) error {
		if os.Remove(s.path("consumed", n)) == nil {
			c.Consumed++
		}
		return nil
	}); err != nil {
		return c, err
	}
	if err := old(s.path("pending"), func(n string) error {
		id, ok := strings.CutSuffix(n, pendingSuffix)
		if !ok || !validID(id) {
			return nil
		}
		if p, err := s.getMeta(id); err == nil && p.Seen.After(cutoff) {
			return nil
		}
		if s.RemovePending(id) == nil {
			c.Pending++
		}
		return nil
	}); err != nil {
		return c, err
	}
	// PostToolUse notes of calls that never reported back (and what
	// sessions long over were told once: told.go), and the answers (and
	// their locks) of calls long decided.
	for _, dir := range []string{"allowed", "answers"} {
		if err := old(s.path(dir), func(n string) error {
			if os.Remove(s.path(dir, n)) == nil {
				c.Notes++
			}
			return nil
		}); err != nil {
			return c, err
		}
	}
	// Temp files of interrupted writes, and calls whose record never got
	// written (a crash between the two).
	if err := old(s.path("pending"), func(n string) error {
		id, isCall := strings.CutSuffix(n, callSuffix)
		if !isCall {
			id, isCall = strings.CutSuffix(n, snapshotSuffix)
		}
		if !isCall {
			id, isCall = strings.CutSuffix(n, pinSuffix)
		}
		orphan := isCall && validID(id) && !exists(s.path("pending", id+pendingSuffix))
		if strings.HasPrefix(n, tmpPrefix) || orphan {
			if os.Remove(s.path("pending", n)) == nil {
				c.Notes++
			}
		}
		return nil
	}); err != nil {
		return c, err
	}
	return c, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
