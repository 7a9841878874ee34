package state

import (
	"errors"
	"testing"
	"time"

	"github.com/loopguard/loopguard/token"
)

// TestWithdrawExact: a withdrawn exact grant is found no more, reads as
// consumed at WithdrawnAt (never a use a moment ago, which would let the
// call's permission request through), and a second withdrawal, or a claim
// after it, finds nothing. Control: a claim stamps the use's time.
func TestWithdrawExact(t *testing.T) {
	s := newStore(t)
	k := testKeys(t)
	digest := token.DigestOf([]byte("call"))
	put := func() {
		t.Helper()
		if _, err := s.PutGrant(exactGrant(t, k, digest), GrantRecord{Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	put()
	if err := s.ClaimExact("s1", "main", "Bash", digest); err != nil {
		t.Fatal(err)
	}
	if _, at, err := s.ConsumedGrant("s1", "main", "Bash", digest); err != nil || time.Since(at) > time.Minute || s.Withdrawn("s1", "main", "Bash", digest) {
		t.Fatalf("control: a claim's time %v (%v), withdrawn %v", at, err, s.Withdrawn("s1", "main", "Bash", digest))
	}
	put()
	if err := s.WithdrawExact("s1", "main", "Bash", digest); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ExactGrant("s1", "main", "Bash", digest); !errors.Is(err, ErrNotFound) {
		t.Errorf("withdrawn, still found: %v", err)
	}
	if _, at, _ := s.ConsumedGrant("s1", "main", "Bash", digest); !at.Equal(WithdrawnAt) || !s.Withdrawn("s1", "main", "Bash", digest) {
		t.Errorf("withdrawn: consumed at %v", at)
	}
	if err := s.WithdrawExact("s1", "main", "Bash", digest); !errors.Is(err, ErrClaimed) {
		t.Errorf("withdrawn twice: %v", err)
	}
	if err := s.ClaimExact("s1", "main", "Bash", digest); !errors.Is(err, ErrClaimed) {
		t.Errorf("claimed after the withdrawal: %v", err)
	}
}
