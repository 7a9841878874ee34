package cli

import (
	"sort"
	"strings"
	"time"

	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
)

// queueWindow is how long a call that no hook holds (default mode, where
// the agent retries after an approval) stays in review's queue.
const queueWindow = time.Hour

// Held reports whether a hook in wait mode holds p now.
func Held(p *state.Pending, now time.Time) bool { return p.Held(now) }

// live reports whether p belongs in the queue: open, and either held by a
// hook now, or let go by its hook with the agent told it did not run (its
// wait ran out: approving it is for the agent's retry), or, in the
// default mode, seen recently. A call whose hook went without telling the
// agent (Esc, the session ended) has left the queue; pending --all still
// lists it.
func live(st *state.Store, p *state.Pending, now time.Time) bool {
	if p.Status != state.StatusOpen {
		return false
	}
	if p.HolderPID > 0 && Held(p, now) {
		return true
	}
	if p.HolderPID > 0 && !WaitOver(st, p, now) {
		return false
	}
	return now.Sub(p.Seen) < queueWindow
}

// WaitOver reports a call whose hook held it until its wait ran out and
// told the agent it did not run: an approval now is for the agent's retry
// of the identical call.
func WaitOver(st *state.Store, p *state.Pending, now time.Time) bool {
	return p.Status == state.StatusOpen && !Held(p, now) && st != nil && st.WaitEnded(p)
}

// StatusOf is a call's status for people, the same words in pending,
// show, review and the console: open calls are held (with the time left);
// "wait over" where the hook held the call until its wait ran out and told
// the agent it did not run (review's WAIT OVER: approve for its retry);
// "abandoned" where the hook went without an answer (Esc in the agent,
// the session ended: it left review's queue); open (waiting for a retry);
// or stale. st (nil: unknown) holds the marks of ended waits.
func StatusOf(st *state.Store, p *state.Pending, now time.Time) string {
	switch {
	case p.Status != state.StatusOpen:
		return p.Status
	case Held(p, now):
		return "held, " + p.HeldUntil.Sub(now).Round(time.Second).String() + " left"
	case WaitOver(st, p, now):
		return "wait over"
	case p.HolderPID > 0:
		return "abandoned"
	case now.Sub(p.Seen) < queueWindow:
		return "open"
	}
	return "stale"
}

// QueueFilter narrows review's queue.
type QueueFilter struct {
	Session, Project string
	Since            time.Duration
}

func (f QueueFilter) Keep(p *state.Pending, now time.Time) bool {
	switch {
	case f.Session != "" && !strings.HasPrefix(p.Session, f.Session):
		return false
	case f.Project != "" && p.ProjectDir != f.Project:
		return false
	case f.Since > 0 && now.Sub(p.Seen) > f.Since:
		return false
	}
	return true
}

// Queue lists the live calls that pass f and were not skipped, newest
// first.
func Queue(st *state.Store, f QueueFilter, skipped map[string]bool, now time.Time) ([]*state.Pending, []error) {
	list, errs := st.ListPending()
	var out []*state.Pending
	for _, p := range list {
		if live(st, p, now) && !skipped[p.ID] && f.Keep(p, now) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seen.After(out[j].Seen) })
	// What changed in each call's project is as of now, not as of its
	// hold (hooks.RefreshPlanted).
	hooks.RefreshPlantedAll(st, out)
	return out, errs
}
