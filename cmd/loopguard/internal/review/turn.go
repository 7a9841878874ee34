package review

import "time"

// sameTurn is how close in time the calls of one turn arrive: the agent
// sends a turn's tool calls together, and each is held by its own hook.
const sameTurn = 10 * time.Second

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
