package state

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// A pending call a human has open — shown by loopguard show, approve or
// review — is pinned: CapPending does not drop it for PinFor, so a flood of
// new calls cannot evict the one being approved. Only the CLI's human
// commands pin (at a terminal, outside an agent), pins expire, and at most
// MaxPins are kept per session (the oldest goes first): pinning cannot keep
// a session's queue full for ever.
const (
	PinFor  = 10 * time.Minute
	MaxPins = 16
)

const pinSuffix = ".pin"

// Pin records that a human opened pending call id at now.
func (s *Store) Pin(id string, now time.Time) error {
	if len(id) != PendingIDLen || !validID(id) {
		return fmt.Errorf("invalid pending id %q", id)
	}
	if _, err := s.getMeta(id); err != nil {
		return err
	}
	if err := writeFile(s.path("pending"), id+pinSuffix, []byte(now.UTC().Format(time.RFC3339Nano)), false); err != nil {
		return err
	}
	return s.trimPins(now)
}

// trimPins removes expired pins and, past MaxPins in one session, the
// oldest ones: pins in one session never displace another's.
func (s *Store) trimPins(now time.Time) error {
	names, err := listNames(s.path("pending"), pinSuffix)
	if err != nil {
		return err
	}
	type pin struct {
		id string
		at time.Time
	}
	bySession := map[string][]pin{}
	for _, n := range names {
		id := strings.TrimSuffix(n, pinSuffix)
		at, ok := s.pinnedAt(id)
		p, err := s.getMeta(id)
		if !ok || !pinLive(at, now) || err != nil {
			_ = removePin(s.path("pending", n))
			continue
		}
		bySession[p.Session] = append(bySession[p.Session], pin{id, at})
	}
	for _, pins := range bySession {
		sort.Slice(pins, func(i, j int) bool { return pins[i].at.After(pins[j].at) })
		for _, p := range pins[min(len(pins), MaxPins):] {
			_ = removePin(s.path("pending", p.id+pinSuffix))
		}
	}
	return nil
}

func removePin(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// pinnedAt returns when id was pinned, if it is.
func (s *Store) pinnedAt(id string) (time.Time, bool) {
	b, err := readFile(s.path("pending", id+pinSuffix), 64)
	if err != nil {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, string(b))
	return at, err == nil
}

// pinLive: a pin lasts PinFor; one dated in the future (a clock set back)
// counts for PinFor at most past now.
func pinLive(at, now time.Time) bool {
	return now.Sub(at) < PinFor && at.Sub(now) < PinFor
}

// Pinned reports whether a human opened id within PinFor of now.
func (s *Store) Pinned(id string, now time.Time) bool {
	at, ok := s.pinnedAt(id)
	return ok && pinLive(at, now)
}

// Held reports whether a hook in wait mode holds p now: open, within its
// wait, and the holding process alive.
func (p *Pending) Held(now time.Time) bool {
	return p.Status == StatusOpen && p.HolderPID > 0 && now.Before(p.HeldUntil) && alive(p.HolderPID)
}

// ProcessAlive reports whether process pid exists.
func ProcessAlive(pid int) bool { return alive(pid) }
