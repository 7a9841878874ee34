package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// SubshellHolds reports whether bash reads body whole inside the one
// subshell of before+body+after, a script a host builds around a command
// (Gemini CLI's wrapCommandForBackgroundPIDs): before opens the subshell,
// after closes it on a line of its own ("\n)" first). It holds when the
// script parses, its one top-level subshell closes at that parenthesis,
// and it has as many top-level statements as with an empty body: a body
// with a parenthesis of its own closes the subshell early (what follows
// then runs outside it), and a quote or here-document left open swallows
// the rest.
func SubshellHolds(before, body, after string) bool {
	if !strings.HasPrefix(after, "\n)") {
		return false
	}
	f, err := parse(before + body + after)
	if err != nil {
		return false
	}
	empty, err := parse(before + after)
	if err != nil || len(f.Stmts) != len(empty.Stmts) {
		return false
	}
	rparen := uint(len(before) + len(body) + 1)
	n := 0
	for _, st := range f.Stmts {
		if sub, ok := st.Cmd.(*syntax.Subshell); ok {
			n++
			if sub.Rparen.Offset() != rparen {
				return false
			}
		}
	}
	return n == 1
}
