package main

import (
	"sort"
	"strings"
	"time"

	"github.com/loopguard/loopguard/state"
)

// queueWindow is how long a call that no hook holds (default mode, where
// the agent retries after an approval) stays in review's queue.
const queueWindow = time.Hour

// sameTurn is how close in time the calls of one turn arrive: the agent
// sends a turn's tool calls together, and each is held by its own hook.
const sameTurn = 10 * time.Second

// held reports whether a hook in wait mode holds p now.
func held(p *state.Pending, now time.Time) bool { return p.Held(now) }

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
	if p.HolderPID > 0 && held(p, now) {
		return true
	}
	if p.HolderPID > 0 && !waitOver(st, p, now) {
		return false
	}
	return now.Sub(p.Seen) < queueWindow
}

// waitOver reports a call whose hook held it until its wait ran out and
// told the agent it did not run: an approval now is for the agent's retry
// of the identical call.
func waitOver(st *state.Store, p *state.Pending, now time.Time) bool {
	return p.Status == state.StatusOpen && !held(p, now) && st != nil && st.WaitEnded(p)
}

// statusOf is a call's status for people, the same words in pending,
// show, review and the console: open calls are held (with the time left);
// "wait over" where the hook held the call until its wait ran out and told
// the agent it did not run (review's WAIT OVER: approve for its retry);
// "abandoned" where the hook went without an answer (Esc in the agent,
// the session ended: it left review's queue); open (waiting for a retry);
// or stale. st (nil: unknown) holds the marks of ended waits.
func statusOf(st *state.Store, p *state.Pending, now time.Time) string {
	switch {
	case p.Status != state.StatusOpen:
		return p.Status
	case held(p, now):
		return "held, " + p.HeldUntil.Sub(now).Round(time.Second).String() + " left"
	case waitOver(st, p, now):
		return "wait over"
	case p.HolderPID > 0:
		return "abandoned"
	case now.Sub(p.Seen) < queueWindow:
		return "open"
	}
	return "stale"
}

// queueFilter narrows review's queue.
type queueFilter struct {
	session, project string
	since            time.Duration
}

func (f queueFilter) keep(p *state.Pending, now time.Time) bool {
	switch {
	case f.session != "" && !strings.HasPrefix(p.Session, f.session):
		return false
	case f.project != "" && p.ProjectDir != f.project:
		return false
	case f.since > 0 && now.Sub(p.Seen) > f.since:
		return false
	}
	return true
}

// queue lists the live calls that pass f and were not skipped, newest
// first.
func queue(st *state.Store, f queueFilter, skipped map[string]bool, now time.Time) ([]*state.Pending, []error) {
	list, errs := st.ListPending()
	var out []*state.Pending
	for _, p := range list {
		if live(st, p, now) && !skipped[p.ID] && f.keep(p, now) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seen.After(out[j].Seen) })
	return out, errs
}

// turnOf returns rc and the other queued calls of its turn: the same
// session and agent, arrived within sameTurn of it.
func turnOf(rc *reviewCall, calls []*reviewCall) []*reviewCall {
	p, out := rc.p, []*reviewCall{rc}
	for _, oc := range calls {
		o := oc.p
		if o.ID == p.ID || o.Session != p.Session || o.Agent != p.Agent {
			continue
		}
		if d := o.Created.Sub(p.Created); d < sameTurn && d > -sameTurn {
			out = append(out, oc)
		}
	}
	return out
}
