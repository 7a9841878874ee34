package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// Answer is how one of loopguard's hooks answered one call, kept so that
// another registration of loopguard the host runs for the same call (Copilot
// CLI runs every hook file it finds, and the hooks of a repository's
// .claude/settings.json too) answers it the same way instead of deciding
// again: the second decision would find the first's single-use approval
// consumed and deny the call the human approved. It is keyed by the call's
// identity as the host hands it to every hook of that call, and is a
// record of an answer, never a credential: what it replays was decided
// with a grant.
type Answer struct {
	Time time.Time `json:"time"`
	// Regs are the registrations that answered (each answers at most once).
	Regs []string `json:"regs"`
	// Digests are the inputs the answer is for: the call as decided and,
	// when it was rewritten, as it runs (a host that chains hooks hands the
	// next hook the rewritten input).
	Digests []string `json:"digests"`
	// Decision is the answer, encoded by the engine.
	Decision json.RawMessage `json:"decision"`
}

func (s *Store) answerName(session, key string) string { return hashKey("answer", session, key) }

// LockAnswer takes the lock of the answer to (session, key), waiting for
// it: the hooks of one call decide one after the other. The returned
// function releases it.
func (s *Store) LockAnswer(session, key string) (func(), error) {
	dir := s.path("answers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, s.answerName(session, key)+".lock"), os.O_RDWR|os.O_CREATE|fsx.NoFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// GetAnswer returns the answer to (session, key), or ErrNotFound.
func (s *Store) GetAnswer(session, key string) (*Answer, error) {
	data, err := readFile(s.path("answers", s.answerName(session, key)+".json"), 1<<20)
	if err != nil {
		return nil, err
	}
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, ErrCorrupt
	}
	return &a, nil
}

// PutAnswer records the answer to (session, key), in place of any other.
func (s *Store) PutAnswer(session, key string, a *Answer) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return writeFile(s.path("answers"), s.answerName(session, key)+".json", data, false)
}
