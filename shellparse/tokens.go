package shellparse

import "strings"

// MaxTokens bounds the words of one command checked one by one
// against the protected set; a longer command is not checked word by word
// and needs an exact approval shown with a warning.
const MaxTokens = 4096

// Tokens splits text on blanks and shell operators, deduplicated, in
// order: a coarse cut, not bash's, for checks that look at every word a
// command could name (the protected paths, the approver's notes) and so
// must not depend on a parse succeeding.
func Tokens(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune(";&|()<>`$", r)
	})
	seen := make(map[string]bool, len(f))
	out := f[:0]
	for _, t := range f {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
