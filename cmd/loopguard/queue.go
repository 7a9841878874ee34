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
// hook now or, in the default mode, seen recently. A call whose hook is
// gone (wait over, session ended, Esc) has left the queue; pending --all
// still lists it.
func live(p *state.Pending, now time.Time) bool {
	if p.Status != state.StatusOpen {
		return false
	}
	if p.HolderPID > 0 {
		return held(p, now)
	}
	return now.Sub(p.Seen) < queueWindow
}

// statusOf is a call's status for people: open calls are held (with the
// time left), waiting for a retry, or gone.
func statusOf(p *state.Pending, now time.Time) string {
	switch {
	case p.Status != state.StatusOpen:
		return p.Status
	case held(p, now):
		return "held, " + p.HeldUntil.Sub(now).Round(time.Second).String() + " left"
	case p.HolderPID > 0:
		return "wait over"
	case live(p, now):
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
		if live(p, now) && !skipped[p.ID] && f.keep(p, now) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seen.After(out[j].Seen) })
	return out, errs
}

// turnOf returns p and the other queued calls of its turn: the same
// session and agent, arrived within sameTurn of it.
func turnOf(p *state.Pending, calls []*state.Pending) []*state.Pending {
	out := []*state.Pending{p}
	for _, o := range calls {
		if o.ID == p.ID || o.Session != p.Session || o.Agent != p.Agent {
			continue
		}
		if d := o.Created.Sub(p.Created); d < sameTurn && d > -sameTurn {
			out = append(out, o)
		}
	}
	return out
}
