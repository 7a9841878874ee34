package state

import (
	"fmt"
	"path/filepath"
	"time"
)

// waitEndSuffix names the mark a hook leaves when it let a held call go
// unanswered: its wait ran out and it told the agent the call did not run.
const waitEndSuffix = ".waitend"

// EndWait records that the hook holding p let it go unanswered (its wait,
// until p.HeldUntil, ran out) and told the agent so: the call stays in
// review, approvable for the agent's retry. The mark is a file of its own,
// naming the hold it ends, so a human's decision written at the same
// moment is never overwritten, and a later hold of the same call is not
// taken for an ended one.
func (s *Store) EndWait(p *Pending) error {
	if len(p.ID) != PendingIDLen || !validID(p.ID) {
		return fmt.Errorf("invalid pending id %q", p.ID)
	}
	return writeFile(s.path("pending"), p.ID+waitEndSuffix, []byte(p.HeldUntil.UTC().Format(time.RFC3339Nano)), false)
}

// WaitEnded reports whether the hook that last held p let it go unanswered
// and told the agent so (EndWait). It is false while the call is held, and
// for a hold whose hook went without telling the agent anything (Esc in
// the agent, the session ended).
func (s *Store) WaitEnded(p *Pending) bool {
	if p.HolderPID <= 0 || p.HeldUntil.IsZero() || !validID(p.ID) {
		return false
	}
	b, err := readFile(s.path("pending", p.ID+waitEndSuffix), 64)
	if err != nil {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, string(b))
	return err == nil && at.Equal(p.HeldUntil)
}

func (s *Store) removeWaitEnd(id string) error {
	return removeFile(filepath.Join(s.path("pending"), id+waitEndSuffix))
}
