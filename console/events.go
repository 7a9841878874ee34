package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"time"
)

// callView is one call as the page gets it.
type callView struct {
	ID        string    `json:"id"`
	Digest    string    `json:"digest"`
	Tool      string    `json:"tool"`
	Host      string    `json:"host,omitempty"`
	Status    string    `json:"status"`
	Held      bool      `json:"held"`
	HeldUntil time.Time `json:"held_until,omitzero"`
	Head      []Line    `json:"head"`
	Body      []Line    `json:"body"`
	Rule      string    `json:"rule,omitempty"`
	NoRule    string    `json:"no_rule,omitempty"` // why no rule is offered
	// Bytes and Lines measure the whole rendering (head and body), as
	// the page says above it.
	Bytes int `json:"bytes"`
	Lines int `json:"lines"`
	// TooLong, when set, says why the call cannot be approved here and
	// where it can: its rendering is over MaxShown, so the page gets its
	// head only, and the server refuses to approve or grant it.
	TooLong string `json:"too_long,omitempty"`
	// View names what the page shows of the call (shown): the page
	// sends it with a decision, the statement signs it, and the server
	// refuses a decision whose call it would now show otherwise.
	View string `json:"view"`
}

type queueView struct {
	Calls []callView `json:"calls"`
	Error string     `json:"error,omitempty"`
}

func (s *Server) queueView(ctx context.Context) queueView {
	calls, err := s.o.Backend.Queue(ctx)
	q := queueView{Calls: []callView{}}
	if err != nil {
		q.Error = err.Error()
	}
	for _, c := range calls {
		q.Calls = append(q.Calls, s.viewOf(c))
	}
	s.noteShown(q.Calls)
	return q
}

// noteShown keeps, for each call of the queue as the page gets it, when
// the server first computed the view it has now (earlier views, and calls
// gone, are forgotten: a decision on them is refused anyway). An approval
// covers the project as the page showed it, as of then, not as of the
// click: a jailed rewrite of a Makefile the warning on the page named
// already changes no word of the view (the eighty-eighth attack run,
// through review).
func (s *Server) noteShown(calls []callView) {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]time.Time, len(calls))
	for _, v := range calls {
		k := v.ID + "\x00" + v.View
		t, ok := s.shown[k]
		if !ok {
			t = now
		}
		next[k] = t
	}
	s.shown = next
}

// firstShown is when the server first computed view v of call id for the
// page (noteShown); false when it never did.
func (s *Server) firstShown(id, view string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.shown[id+"\x00"+view]
	return t, ok
}

// viewOf is call c as the page gets it: the queue's calls and the call
// a decision is checked against are built here alone.
func (s *Server) viewOf(c Call) callView {
	head, body := s.o.Backend.Render(c)
	v := callView{ID: c.Pending.ID, Digest: c.Pending.Digest, Tool: c.Pending.Tool, Host: c.Host, Status: c.Status,
		Held: c.Held, Head: head, Body: body}
	v.Bytes, v.Lines = size(head, body)
	if v.Bytes > MaxShown {
		v.Body, v.TooLong = nil, s.tooLong(c, v.Bytes)
	}
	if c.Held {
		v.HeldUntil = c.Pending.HeldUntil.UTC()
	}
	if rule, err := s.o.Backend.Rule(c); err == nil {
		v.Rule = rule
	} else {
		v.NoRule = err.Error()
	}
	v.View = shown(v)
	return v
}

// shown is the SHA-256 hex of what the page shows of call v beyond its
// id, digest and hold: every line of its head and body (kind and text),
// the rule offered or why none, and why it is too long to approve here.
// The rendering changes with no change of digest (its warning of what
// jailed calls and file tools changed in the project since the last
// decision), so a decision names this too.
func shown(v callView) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) } // each field its length first: no text passes for two
	field(v.Rule)
	field(v.NoRule)
	field(v.TooLong)
	for _, part := range [][]Line{v.Head, v.Body} {
		fmt.Fprintf(h, "%d:", len(part))
		for _, l := range part {
			field(l.Kind)
			field(l.Text)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fingerprint names what the page shows of q, to send it again only when
// it changed (the status line's seconds are left out: the page counts).
// Each call's part is its view (viewOf computed it, shown), the one a
// decision is checked against.
func fingerprint(q queueView) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", q.Error)
	for _, c := range q.Calls {
		fmt.Fprintf(h, "%s\x00%s\x00%t\x00%s\x00", c.ID, c.Digest, c.Held, c.View)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MaxShown bounds what the page shows of one call: its rendering (head
// and body, as review renders it, never folded) up to 1 MiB is sent whole
// and shown in a scrolling box, with its size; a longer call is shown by
// its head only and cannot be approved or granted from the page (it can
// be denied): the page says where to approve it.
const MaxShown = 1 << 20

// size measures a rendering as the page shows it: bytes and lines.
func size(head, body []Line) (bytes, lines int) {
	for _, l := range append(head[:len(head):len(head)], body...) {
		bytes += len(l.Text) + 1
		lines++
	}
	return bytes, lines
}

// tooLong says why call c, rendered in n bytes, is not approved here.
func (s *Server) tooLong(c Call, n int) string {
	return fmt.Sprintf("This call is %d bytes as rendered, more than this page shows (%d): it cannot be approved here. Read and approve it at your terminal: %s (it can be denied here).",
		n, MaxShown, s.o.Elsewhere(c.Pending.ID))
}

func (s *Server) apiQueue(w http.ResponseWriter, r *http.Request) {
	writeJSON200(w, s.queueView(r.Context()))
}

// apiEvents is the live queue: a server-sent "queue" event whenever it
// changes, and a comment every 15 s to keep proxies from closing it.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "streaming is not supported")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	ctx := r.Context()
	key := ctx.Value(sessionKey{}).([32]byte)
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	last, quiet := "", 0
	for {
		q := s.queueView(ctx)
		if fp := fingerprint(q); fp != last {
			last = fp
			b, _ := json.Marshal(q)
			if _, err := fmt.Fprintf(w, "event: queue\ndata: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
			quiet = 0
		} else if quiet++; time.Duration(quiet)*s.o.Poll >= 15*time.Second {
			if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
				return
			}
			fl.Flush()
			quiet = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, ok := s.live(key); !ok {
			fmt.Fprint(w, "event: signed-out\ndata: {}\n\n")
			fl.Flush()
			return
		}
	}
}

// Watch pushes through Options.Push once for each newly held call, until
// ctx ends; it also forgets expired ceremonies and sign-ins.
func (s *Server) Watch(ctx context.Context) {
	seen := map[string]bool{}
	first := true
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	for {
		calls, err := s.o.Backend.Queue(ctx)
		if err == nil {
			now := map[string]bool{}
			fresh := 0
			for _, c := range calls {
				now[c.Pending.ID] = true
				if c.Held && !seen[c.Pending.ID] {
					fresh++
				}
			}
			// Calls held before the console started are not pushed: the
			// human is at the console that just started.
			if fresh > 0 && !first && s.o.Push != nil {
				if err := s.o.Push.Send(ctx, len(calls)); err != nil && s.o.OnError != nil {
					s.o.OnError(err)
				}
			}
			seen, first = now, false
		}
		s.sweep()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Server) sweep() {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.sessions, func(_ [32]byte, v *session) bool { return !now.Before(v.expires) })
	maps.DeleteFunc(s.spent, func(_ [32]byte, until time.Time) bool { return !now.Before(until) })
	maps.DeleteFunc(s.enrolls, func(_ string, v ceremony) bool { return !now.Before(v.Expires) })
	maps.DeleteFunc(s.enrollLimits, func(_ string, b *bucket) bool { return now.Sub(b.last) > MaxEnrollTTL })
	maps.DeleteFunc(s.decisions, func(_ string, v *decisionCeremony) bool { return !now.Before(v.expires) })
}
