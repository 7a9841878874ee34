package policy

import (
	"strings"
	"testing"
)

// TestGlobManyBracesCountsAsMatch: a segment of more alternations than
// maxGlobBraces is not given to doublestar, whose match is exponential in
// them (the seventy-second attack run's {,} 32 times then x, 101 bytes,
// held the hook to its deadline): it counts as a match, a question. The
// control: the same shape with maxGlobBraces alternations is still
// matched, and does not match a name it cannot.
func TestGlobManyBracesCountsAsMatch(t *testing.T) {
	many := strings.Repeat("{,}", 32) + "x"
	if !globCouldMatch(many, ".claude", true) {
		t.Errorf("%q: not counted as a match", many)
	}
	few := strings.Repeat("{,}", maxGlobBraces) + "x"
	if globCouldMatch(few, ".claude", true) || !globCouldMatch(few, "x", true) {
		t.Errorf("control: %q matches .claude %v and x %v, want false and true", few, globCouldMatch(few, ".claude", true), globCouldMatch(few, "x", true))
	}
}
