package state

import (
	"os"
)

// Told remembers what the model of one (session, agent) has been told
// once and need not be told again (the jail's note, package hooks): an
// empty marker file among the hook's other per-session notes (allowed/),
// named by a hash of the three. It is a courtesy, not a record: a marker
// that is missing or unreadable means "tell again", never an error, and
// Prune removes markers older than its cut-off with the other notes.

func (s *Store) toldName(session, agent, what string) string {
	return hashKey("told", what, session, agent) + ".told"
}

// Told reports whether MarkTold recorded what for (session, agent): one
// lstat.
func (s *Store) Told(session, agent, what string) bool {
	fi, err := os.Lstat(s.path("allowed", s.toldName(session, agent, what)))
	return err == nil && fi.Mode().IsRegular()
}

// MarkTold records that (session, agent) was told what: atomic (never a
// torn file) but not fsynced, since losing it costs telling once more.
func (s *Store) MarkTold(session, agent, what string) error {
	return writeFile(s.path("allowed"), s.toldName(session, agent, what), nil, false)
}
