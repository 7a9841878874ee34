package shellparse

import (
	"math/rand"
	"regexp"
	"testing"
)

// The hook matches this shape by hand (a regexp compiled on every hook
// call cost more than the match); the regexp it replaces is the oracle
// here. policy's versionedName has its own (coderules_test.go).
var assignLikeRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\+?=`)

// matcherInputs is the named shapes, then random strings over an alphabet
// that reaches every branch of both matchers.
func matcherInputs() []string {
	in := []string{"", "python", "python3", "python3.12", "python3.12-dbg", "python3.12-dbgx", "perl5.36.0",
		"node18", "node18ab", "node18abc", "3python", "python3-", "python3.1a-dbg", "py.3", "a1", "A1",
		"ruby3.2.2p", "-dbg", "x9-dbg-dbg", "bash5.2", "zsh5.9rc", "FOO=1", "FOO+=1", "_=x", "9A=1", "A==",
		"A+", "A+=", "a_b9=", "=x", "+=", "a b=", "ä=1", "A-1=", "python3.12\n"}
	return append(in, randomStrings(16, "az09.-+=_AZbdg\n é", 20000, 12)...)
}

// randomStrings are n strings of fewer than maxLen bytes of alphabet,
// from seed.
func randomStrings(seed int64, alphabet string, n, maxLen int) []string {
	r := rand.New(rand.NewSource(seed))
	out := make([]string, 0, n)
	for range n {
		b := make([]byte, r.Intn(maxLen))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		out = append(out, string(b))
	}
	return out
}

func TestAssignLikeMatchesRegexp(t *testing.T) {
	matched := 0
	for _, s := range matcherInputs() {
		if got, want := assignLike(s), assignLikeRe.MatchString(s); got != want {
			t.Errorf("assignLike(%q) = %v, the regexp says %v", s, got, want)
		}
		if assignLike(s) {
			matched++
		}
	}
	if matched < 100 {
		t.Fatalf("only %d inputs matched: the comparison proves little", matched)
	}
}
