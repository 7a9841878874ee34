package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPendingIDLength(t *testing.T) {
	id := PendingID("s1", "main", "Bash", strings.Repeat("a", 64))
	if len(id) != PendingIDLen || PendingIDBytes*8 < 96 {
		t.Fatalf("pending id %q: %d characters, %d bits; want at least 96 bits", id, len(id), PendingIDBytes*8)
	}
	if !validID(id) {
		t.Fatalf("%q is not a valid id", id)
	}
	// Distinct calls, distinct ids (a small sample, no collision).
	seen := map[string]bool{}
	for i := range 10000 {
		id := PendingID("s1", "main", "Bash", fmt.Sprintf("%064x", i))
		if seen[id] {
			t.Fatalf("collision at %d", i)
		}
		seen[id] = true
	}
}

// A record is never replaced by a call with another digest under its id.
func TestPendingNeverReplaced(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	d1, d2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	id := PendingID("s1", "main", "Bash", d1)
	if err := s.PutPending(&Pending{ID: id, Created: now, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d1, Descriptor: []byte(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	// The same id with another call (as a collision would give): refused,
	// and the record and its call are unchanged.
	err := s.PutPending(&Pending{ID: id, Created: now, Seen: now.Add(time.Minute), Session: "s1", Agent: "main", Tool: "Bash", Digest: d2, Descriptor: []byte(`{"a":2}`)})
	if !errors.Is(err, ErrIDTaken) {
		t.Fatalf("PutPending with another digest: %v, want ErrIDTaken", err)
	}
	p, err := s.GetPending(id)
	if err != nil || p.Digest != d1 || string(p.Descriptor) != `{"a":1}` {
		t.Fatalf("record changed: %+v, %v", p, err)
	}
	// Control: the same call again is fine.
	if err := s.PutPending(&Pending{ID: id, Created: now, Seen: now.Add(time.Minute), Session: "s1", Agent: "main", Tool: "Bash", Digest: d1, Descriptor: []byte(`{"a":1}`)}); err != nil {
		t.Fatalf("the same call again: %v", err)
	}
	// A record under id whose digest does not give id (not written by
	// loopguard) is no collision: the call that owns the id replaces it.
	id2 := PendingID("s1", "main", "Bash", d2)
	if err := s.PutPending(&Pending{ID: id2, Created: now, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d1, Descriptor: []byte(`{"forged":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPending(&Pending{ID: id2, Created: now, Seen: now, Session: "s1", Agent: "main", Tool: "Bash", Digest: d2, Descriptor: []byte(`{"a":2}`)}); err != nil {
		t.Fatalf("the owner of the id was refused: %v", err)
	}
	if p, err := s.GetPending(id2); err != nil || p.Digest != d2 || string(p.Descriptor) != `{"a":2}` {
		t.Fatalf("the forged record stayed: %+v, %v", p, err)
	}
	// A short id is refused for writing.
	if err := s.PutPending(&Pending{ID: "abcdefgh", Digest: d1}); err == nil {
		t.Fatal("a 40-bit id was written")
	}
}

// A session cannot pile up more than the caps: the oldest open calls go,
// the new one and decided ones stay; other sessions are untouched.
func TestPendingCap(t *testing.T) {
	s := newStore(t)
	t0 := time.Now()
	put := func(session string, i int) string {
		d := fmt.Sprintf("%064x", i)
		id := PendingID(session, "main", "Bash", d)
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if err := s.PutPending(&Pending{ID: id, Created: at, Seen: at, Session: session, Agent: "main", Tool: "Bash", Digest: d, Descriptor: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	other := put("s2", 0)
	first := put("s1", 1)
	decided := put("s1", 2)
	if err := s.Decide(decided, StatusDenied, "alice", "", t0); err != nil {
		t.Fatal(err)
	}
	var last string
	var dropped []*Pending
	for i := 3; i < MaxPendingPerSession+13; i++ {
		last = put("s1", i)
		d, err := s.CapPending("s1", last, t0)
		if err != nil {
			t.Fatal(err)
		}
		dropped = append(dropped, d...)
	}
	if len(dropped) != 12 || dropped[0].ID != first {
		t.Fatalf("dropped %d calls (first %v), want 12 starting with the oldest", len(dropped), dropped)
	}
	for _, id := range []string{last, decided, other} {
		if _, err := s.GetPending(id); err != nil {
			t.Errorf("%s was dropped: %v", id, err)
		}
	}
	list, _ := s.ListPending()
	n := 0
	for _, p := range list {
		if p.Session == "s1" {
			n++
		}
	}
	if n != MaxPendingPerSession {
		t.Errorf("session s1 keeps %d calls, want %d", n, MaxPendingPerSession)
	}
}

// BenchmarkPendingID gives the rate of a birthday search over ids: at
// PendingIDBytes*8 bits it needs about 2^(bits/2) ids.
func BenchmarkPendingID(b *testing.B) {
	d := strings.Repeat("a", 64)
	for i := range b.N {
		_ = PendingID("s1", "main", "Bash", d[:60]+fmt.Sprintf("%04x", i&0xffff))
	}
}
