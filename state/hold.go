package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// MinPrefixLen is the shortest id prefix that ResolvePending and
// ResolveGrant accept.
const MinPrefixLen = 3

// ErrAmbiguous is an id prefix that more than one record starts with.
var ErrAmbiguous = errors.New("ambiguous id prefix")

// ResolvePending returns the id of the one pending record whose id starts
// with prefix (a whole id is its own prefix).
func (s *Store) ResolvePending(prefix string) (string, error) {
	if validID(prefix) {
		if _, err := s.getMeta(prefix); err == nil {
			return prefix, nil
		}
	}
	if len(prefix) < MinPrefixLen || strings.Trim(prefix, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		return "", fmt.Errorf("%w: no pending call %q (ids are letters a-z and digits 2-7; give at least %d characters)", ErrNotFound, prefix, MinPrefixLen)
	}
	names, err := listNames(s.path("pending"), pendingSuffix)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, n := range names {
		id := strings.TrimSuffix(n, pendingSuffix)
		if strings.HasPrefix(id, prefix) && validID(id) {
			hits = append(hits, id)
		}
	}
	return one(prefix, "pending call", hits)
}

// one returns the single hit, or says why there is not exactly one.
func one(prefix, what string, hits []string) (string, error) {
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("%w: no %s starts with %q", ErrNotFound, what, prefix)
	case 1:
		return hits[0], nil
	}
	sort.Strings(hits)
	if len(hits) > 5 {
		hits = append(hits[:5], "...")
	}
	return "", fmt.Errorf("%w: %q starts %s ids %s; type more characters", ErrAmbiguous, prefix, what, strings.Join(hits, ", "))
}

// ResolvePrefix returns the one id in ids that starts with prefix.
func ResolvePrefix(prefix, what string, ids []string) (string, error) {
	var hits []string
	for _, id := range ids {
		if id == prefix {
			return id, nil
		}
		if len(prefix) >= MinPrefixLen && strings.HasPrefix(id, prefix) {
			hits = append(hits, id)
		}
	}
	if len(prefix) < MinPrefixLen && len(hits) == 0 {
		return "", fmt.Errorf("%w: no %s %q (give at least %d characters)", ErrNotFound, what, prefix, MinPrefixLen)
	}
	return one(prefix, what, hits)
}

// Refuse records a human's refusal of a pending call with an optional
// note for the model.
func (s *Store) Refuse(id, by, note string, at time.Time) error {
	p, err := s.getMeta(id)
	if err != nil {
		return err
	}
	p.Status, p.DecidedBy, p.DecidedAt, p.Grant, p.Note = StatusDenied, by, at.UTC(), "", note
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return writeAtomic(s.path("pending"), id+pendingSuffix, data)
}

// BoundGrants returns the scoped grants bound to exactly this session
// value (for a project binding, see token.ProjectSession), without those
// minted for any session.
func (s *Store) BoundGrants(session string) ([]GrantFile, error) {
	return readGrants([]GrantFile{}, s.scopedDir(session))
}
