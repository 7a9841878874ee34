package undo

import (
	"time"
)

// ChangedSince lists the paths below the project (slash-separated,
// relative; files, links and what is gone, not directories whose entries
// changed) that the records started at or after since changed, as their
// after-states say, newest record first, each path once, at most max of
// them; more reports that there were more. A record whose launcher did not
// finish has no after-state: it is counted in unfinished, its paths
// unknown. Records are what confined calls that could write left (package
// confine); nothing here reads the project itself.
func (s *Store) ChangedSince(since time.Time, max int) (paths []string, more bool, unfinished int, err error) {
	metas, err := s.List()
	if err != nil {
		return nil, false, 0, err
	}
	seen := map[string]bool{}
	for _, m := range metas {
		if m.Started.Before(since) {
			break
		}
		delta, ok, err := s.manifest("records/" + m.ID + "/after")
		if err != nil {
			return nil, false, 0, err
		}
		if !ok {
			unfinished++
			continue
		}
		for _, e := range delta {
			if e.Kind == Dir || seen[e.Path] {
				continue
			}
			seen[e.Path] = true
			if len(paths) == max {
				more = true
				continue
			}
			paths = append(paths, e.Path)
		}
	}
	return paths, more, unfinished, nil
}
