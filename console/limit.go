package console

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// bucket is a token bucket: burst requests at once, then one every per.
// The console has one human, so the limits are for the whole server, not
// per address (behind an SSH tunnel every request comes from loopback).
type bucket struct {
	burst  float64
	per    time.Duration
	tokens float64
	last   time.Time
}

// Limits of each kind of request: registering a passkey, signing in, and
// deciding (each decision is two requests).
func newLimits() map[string]*bucket {
	return map[string]*bucket{
		"enroll":   {burst: 6, per: 20 * time.Second},
		"login":    {burst: 10, per: 6 * time.Second},
		"decision": {burst: 40, per: time.Second},
	}
}

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

func (s *Server) limited(kind string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		wait, ok := s.limits[kind].take(s.o.Now())
		s.mu.Unlock()
		if !ok {
			secs := int(wait/time.Second) + 1
			w.Header().Set("Retry-After", fmt.Sprint(secs))
			httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests; try again in %d s", secs))
			return
		}
		next(w, r)
	}
}
