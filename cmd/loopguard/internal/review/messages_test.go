package review

import (
	"strings"
	"testing"
)

// TestReviewOffersOnlyItsKeys: review's banner names g and t as what the
// prompt under a call may offer, not as keys that always work, and a key
// that is none is answered with the keys the prompt offers, no others.
func TestReviewOffersOnlyItsKeys(t *testing.T) {
	c := &console{fd: -1}
	intro := strings.Join(strings.Fields((&reviewLocal{}).intro(c)), " ")
	if want := "loopguard review: pending calls appear here as they arrive. a approve, d deny, s skip, v view, q quit; g (approve and grant a rule), w (grant a wider rule) and t (approve a whole turn) when the prompt under a call offers them."; intro != want {
		t.Errorf("review's banner:\n%s\nwant:\n%s", intro, want)
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"[a]pprove", "[d]eny", "[s]kip", "[v]iew", "[q]uit"}, "Press a, d, s, v or q."},
		{[]string{"[a]pprove", "[g]rant Bash(go test ./...)", "[d]eny", "[s]kip", "[v]iew", "[q]uit"}, "Press a, g, d, s, v or q."},
		{[]string{"[a]pprove", "[g]rant Bash(ls)", "[t]urn: all 3", "[d]eny", "[s]kip", "[v]iew", "[q]uit"}, "Press a, g, t, d, s, v or q."},
		{[]string{"[a]pprove", "[g]rant Bash(go test -v ./...)", "[w]ider grant Bash(go test *)", "[d]eny", "[s]kip", "[v]iew", "[q]uit"}, "Press a, g, w, d, s, v or q."},
	} {
		if got := pressLine(c.keys); got != c.want {
			t.Errorf("pressLine(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}
