package state

import (
	"encoding/json"
	"errors"
	"os"
	"time"
)

// Allowed records a call the hook let run, so PostToolUse can compare what
// ran with what was approved. It is a note for detection, not a credential:
// nothing is ever allowed because of it.
type Allowed struct {
	Session    string    `json:"session"`
	Agent      string    `json:"agent"`
	Tool       string    `json:"tool"`
	ToolUseID  string    `json:"tool_use_id"`
	Digest     string    `json:"digest"`
	CallDigest string    `json:"call_digest"`
	Grant      string    `json:"grant"`
	Principal  string    `json:"principal"`
	Time       time.Time `json:"time"`
	// Cwd is the call's cwd when it was allowed: PostToolUse reports the
	// shell's cwd after the call ran, which a cd in it moved.
	Cwd string `json:"cwd,omitempty"`
}

func (s *Store) allowedName(session, key string) string {
	return hashKey(session, key) + ".json"
}

// NoteAllowed records a under its tool_use_id, for PostToolUse.
func (s *Store) NoteAllowed(a Allowed) error {
	if a.ToolUseID == "" {
		return nil
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	// A detection note: atomic (never torn) but not fsynced.
	return writeFile(s.path("allowed"), s.allowedName(a.Session, "use:"+a.ToolUseID), data, false)
}

// TakeAllowed returns and removes the record of the call with toolUseID.
func (s *Store) TakeAllowed(session, toolUseID string) (Allowed, error) {
	var a Allowed
	p := s.path("allowed", s.allowedName(session, "use:"+toolUseID))
	data, err := readFile(p, 64<<10)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, ErrCorrupt
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return a, err
	}
	return a, nil
}

// ConsumedGrant returns the exact grant consumed for this call and when it
// was consumed.
func (s *Store) ConsumedGrant(session, agent, tool, digest string) (GrantFile, time.Time, error) {
	p := s.consumedPath(session, agent, tool, digest)
	fi, err := os.Lstat(p)
	if err != nil {
		return GrantFile{}, time.Time{}, ErrNotFound
	}
	gf := ReadGrant(p)
	return gf, fi.ModTime(), gf.Err
}
