package state

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// putCall records call i of session at t0+i ms, open.
func putCall(t *testing.T, s *Store, session string, i int, t0 time.Time, mod func(*Pending)) string {
	t.Helper()
	d := fmt.Sprintf("%064x", i)
	id := PendingID(session, "main", "Bash", d)
	at := t0.Add(time.Duration(i) * time.Millisecond)
	p := &Pending{ID: id, Created: at, Seen: at, Session: session, Agent: "main", Tool: "Bash", Digest: d, Descriptor: []byte("{}")}
	if mod != nil {
		mod(p)
	}
	if err := s.PutPending(p); err != nil {
		t.Fatal(err)
	}
	return id
}

// A flood of new calls never evicts the call a hook holds nor the one a
// human has open; without the hold or the pin the oldest goes as before.
func TestPendingFloodKeepsHeldAndOpened(t *testing.T) {
	for _, c := range []struct {
		name     string
		mark     func(t *testing.T, s *Store, id string, now time.Time) // nil: the control
		survives bool
	}{
		{"held", func(t *testing.T, s *Store, id string, now time.Time) {
			p, _ := s.getMeta(id)
			p.HeldUntil, p.HolderPID, p.Seen = now.Add(time.Minute), os.Getpid(), p.Seen.Add(time.Second)
			p.Descriptor = []byte("{}")
			if err := s.PutPending(p); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"pinned", func(t *testing.T, s *Store, id string, now time.Time) {
			if err := s.Pin(id, now); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"control", nil, false},
		{"held by a process that is gone", func(t *testing.T, s *Store, id string, now time.Time) {
			p, _ := s.getMeta(id)
			p.HeldUntil, p.HolderPID, p.Seen = now.Add(time.Minute), deadPID(t), p.Seen.Add(time.Second)
			p.Descriptor = []byte("{}")
			if err := s.PutPending(p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"held, the wait over", func(t *testing.T, s *Store, id string, now time.Time) {
			p, _ := s.getMeta(id)
			p.HeldUntil, p.HolderPID, p.Seen = now.Add(-time.Second), os.Getpid(), p.Seen.Add(time.Second)
			p.Descriptor = []byte("{}")
			if err := s.PutPending(p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"pinned long ago", func(t *testing.T, s *Store, id string, now time.Time) {
			if err := s.Pin(id, now.Add(-PinFor-time.Second)); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			now := time.Now()
			t0 := now.Add(-time.Hour)
			first := putCall(t, s, "s1", 0, t0, nil)
			if c.mark != nil {
				c.mark(t, s, first, now)
			}
			for i := 1; i <= MaxPendingPerSession+20; i++ {
				id := putCall(t, s, "s1", i, t0, nil)
				if _, err := s.CapPending("s1", id, now); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			_, err := s.GetPending(first)
			if survived := err == nil; survived != c.survives {
				t.Errorf("the first call survived the flood: %v, want %v (%v)", survived, c.survives, err)
			}
			list, _ := s.ListPending()
			if len(list) != MaxPendingPerSession {
				t.Errorf("%d calls kept, want %d", len(list), MaxPendingPerSession)
			}
		})
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}

// When every call of a full session is held, a new call is not queued:
// ErrPendingFull, and its record is gone; the held ones all stay.
func TestPendingFullFailsClosed(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	t0 := now.Add(-time.Hour)
	hold := func(p *Pending) { p.HeldUntil, p.HolderPID = now.Add(time.Minute), os.Getpid() }
	var held []string
	for i := range MaxPendingPerSession {
		held = append(held, putCall(t, s, "s1", i, t0, hold))
	}
	id := putCall(t, s, "s1", MaxPendingPerSession, t0, nil)
	dropped, err := s.CapPending("s1", id, now)
	if !errors.Is(err, ErrPendingFull) || len(dropped) != 0 {
		t.Fatalf("dropped %d, err %v; want ErrPendingFull and nothing dropped", len(dropped), err)
	}
	if _, err := s.GetPending(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused call is still recorded: %v", err)
	}
	for _, h := range held {
		if _, err := s.GetPending(h); err != nil {
			t.Fatalf("held call %s lost: %v", h, err)
		}
	}
	// Control: once one hold ends, the next call makes room by dropping it.
	p, _ := s.GetPending(held[5])
	p.HeldUntil = now.Add(-time.Second)
	p.Seen = p.Seen.Add(time.Minute)
	if err := s.PutPending(p); err != nil {
		t.Fatal(err)
	}
	id = putCall(t, s, "s1", MaxPendingPerSession+1, t0, nil)
	if dropped, err := s.CapPending("s1", id, now); err != nil || len(dropped) != 1 || dropped[0].ID != held[5] {
		t.Fatalf("after the hold ended: dropped %v, %v", dropped, err)
	}
}

// Pins are bounded: at most MaxPins, the oldest dropped; they expire; one
// dated in the future counts for PinFor at most; only a recorded call is
// pinned, and removing the call removes its pin.
func TestPinBounds(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	var ids []string
	for i := range MaxPins + 4 {
		id := putCall(t, s, "s1", i, now, nil)
		ids = append(ids, id)
		if err := s.Pin(id, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	at := now.Add(time.Duration(MaxPins+4) * time.Second)
	for i, id := range ids {
		if want := i >= 4; s.Pinned(id, at) != want {
			t.Errorf("pin %d: pinned %v, want %v", i, !want, want)
		}
	}
	if s.Pinned(ids[10], at.Add(PinFor+time.Minute)) {
		t.Error("a pin outlived PinFor")
	}
	// Another session's pins do not displace these.
	for i := range MaxPins + 2 {
		if err := s.Pin(putCall(t, s, "s2", 200+i, now, nil), at); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Pinned(ids[4], at) {
		t.Error("pins of another session displaced one of s1")
	}
	future := putCall(t, s, "s1", 100, now, nil)
	if err := s.Pin(future, now.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if s.Pinned(future, now) {
		t.Error("a pin dated a day ahead counts now")
	}
	if err := s.Pin(PendingID("s1", "main", "Bash", "none"), now); err == nil {
		t.Error("a call never recorded was pinned")
	}
	if err := s.RemovePending(ids[10]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.path("pending", ids[10]+pinSuffix)); !os.IsNotExist(err) {
		t.Errorf("the pin of a removed call stayed: %v", err)
	}
}
