package state

import (
	"os"
	"testing"
	"time"
)

// TestTold: a marker is per (session, agent, what); one that is missing,
// not a regular file, or pruned means "not told".
func TestTold(t *testing.T) {
	s := newStore(t)
	if s.Told("s1", "main", "jail") {
		t.Fatal("told before anything was marked")
	}
	if err := s.MarkTold("s1", "main", "jail"); err != nil {
		t.Fatal(err)
	}
	if !s.Told("s1", "main", "jail") {
		t.Error("not told after MarkTold")
	}
	for _, o := range [][3]string{{"s2", "main", "jail"}, {"s1", "a1", "jail"}, {"s1", "main", "other"}} {
		if s.Told(o[0], o[1], o[2]) {
			t.Errorf("%v told: the marker is for (s1, main, jail) only", o)
		}
	}
	// A directory where the marker would be is not a marker.
	if err := os.MkdirAll(s.path("allowed", s.toldName("s3", "main", "jail")), 0o700); err != nil {
		t.Fatal(err)
	}
	if s.Told("s3", "main", "jail") {
		t.Error("a directory counted as a marker")
	}
	// Prune removes markers older than the cut-off.
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(s.path("allowed", s.toldName("s1", "main", "jail")), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(time.Now(), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if s.Told("s1", "main", "jail") {
		t.Error("an old marker survived Prune")
	}
}
