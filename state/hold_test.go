package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// An id prefix names a pending call only when exactly one id starts with
// it; the whole id always names its own call.
func TestResolvePending(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	ids := []string{"abcde" + strings.Repeat("a", PendingIDLen-5), "abcdf" + strings.Repeat("a", PendingIDLen-5), "q7" + strings.Repeat("b", PendingIDLen-2)}
	for i, id := range ids {
		if err := s.PutPending(&Pending{ID: id, Created: now, Seen: now, Session: "s", Tool: "Bash", Digest: strings.Repeat(string(rune('0'+i)), 64), Descriptor: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		prefix, want string
		err          error
	}{
		{"abcde", ids[0], nil},
		{"abcdf", ids[1], nil},
		{ids[0], ids[0], nil},
		{"q7b", ids[2], nil}, // control: a unique prefix
		{"abcd", "", ErrAmbiguous},
		{"abc", "", ErrAmbiguous},
		{"q7", "", ErrNotFound},   // too short
		{"zzzz", "", ErrNotFound}, // no such id
		{"q7B", "", ErrNotFound},  // not an id's alphabet
		{"../x", "", ErrNotFound},
		{"", "", ErrNotFound},
	} {
		got, err := s.ResolvePending(c.prefix)
		if got != c.want || !errors.Is(err, c.err) && !(c.err == nil && err == nil) {
			t.Errorf("ResolvePending(%q) = %q, %v; want %q, %v", c.prefix, got, err, c.want, c.err)
		}
	}
	_, err := s.ResolvePending("abc")
	if err == nil || !strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1]) {
		t.Errorf("an ambiguous prefix does not name its candidates: %v", err)
	}
}

func TestResolvePrefix(t *testing.T) {
	ids := []string{"3fa9c2d17e0b", "3fa9ffff0000", "77aa00bb11cc"}
	for _, c := range []struct {
		prefix, want string
		err          error
	}{
		{"3fa9c", ids[0], nil},
		{"77a", ids[2], nil},
		{"3fa9", "", ErrAmbiguous},
		{"77", "", ErrNotFound},
		{"ffff", "", ErrNotFound},
	} {
		got, err := ResolvePrefix(c.prefix, "grant", ids)
		if got != c.want || !errors.Is(err, c.err) && !(c.err == nil && err == nil) {
			t.Errorf("ResolvePrefix(%q) = %q, %v; want %q, %v", c.prefix, got, err, c.want, c.err)
		}
	}
}
