package console

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// bucket is a token bucket: burst requests at once, then one every per.
//
// No limit is shared by the whole server: a process on the machine that
// has neither a passkey nor a registration link could use it up and lock
// the human out. A decision's limit belongs to its sign-in (after the
// passkey signed in), a registration's to its link (after the link is
// found valid); a sign-in keeps nothing on the server until it succeeds
// (its challenge is sealed into the handle the page sends back), so there
// is nothing there to exhaust.
type bucket struct {
	burst  float64
	per    time.Duration
	tokens float64
	last   time.Time
}

// decisionLimit is one sign-in's: each decision is two requests.
func decisionLimit() *bucket { return &bucket{burst: 40, per: time.Second} }

// enrollLimit is one registration link's.
func enrollLimit() *bucket { return &bucket{burst: 6, per: 20 * time.Second} }

// take spends a token at now, or says how long until one is there.
func (b *bucket) take(now time.Time) (time.Duration, bool) {
	if b.last.IsZero() {
		b.tokens = b.burst
	} else {
		b.tokens = math.Min(b.burst, b.tokens+float64(now.Sub(b.last))/float64(b.per))
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) * float64(b.per)), false
}

// tooMany is the refusal of a request over its limit.
func tooMany(wait time.Duration) error {
	return &apiError{code: http.StatusTooManyRequests, msg: fmt.Sprintf("too many requests; try again in %d s", int(wait/time.Second)+1)}
}

// limited spends a token of the request's sign-in (signedIn runs first).
func (s *Server) limited(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, _ := r.Context().Value(sessionKey{}).([32]byte)
		s.mu.Lock()
		wait, ok := time.Duration(0), false
		if se := s.sessions[key]; se != nil {
			wait, ok = se.limit.take(s.o.Now())
		}
		s.mu.Unlock()
		if !ok {
			w.Header().Set("Retry-After", fmt.Sprint(int(wait/time.Second)+1))
			httpError(w, http.StatusTooManyRequests, tooMany(wait).Error())
			return
		}
		next(w, r)
	}
}

// enrollTake spends a token of registration link id (the hash its file
// is named by).
func (s *Server) enrollTake(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.enrollLimits[id]
	if b == nil {
		b = enrollLimit()
		s.enrollLimits[id] = b
	}
	if wait, ok := b.take(s.o.Now()); !ok {
		return tooMany(wait)
	}
	return nil
}
