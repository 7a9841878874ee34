package shellparse

import (
	"reflect"
	"testing"
)

// TestResultOutlineIsOutline: the outline of an analysed command, from the
// analysis's own parse, is the outline a fresh parse gives (the analysis
// changes nothing in the tree it reads), over the shell corpus.
func TestResultOutlineIsOutline(t *testing.T) {
	fx := newFixture(t)
	var cmds []string
	for _, r := range loadCorpus(t) {
		for _, in := range r.inputs {
			cmds = append(cmds, fx.repl.Replace(in))
		}
	}
	cmds = append(cmds, agentCommands(t)...)
	n := 0
	for _, cmd := range cmds {
		res := Analyze(cmd, fx.env)
		got, ok1 := res.Outline()
		if res.Sketch == nil {
			// Refused before a parse (a control character), or bash
			// cannot parse it: no outline of the analysis's own.
			if ok1 {
				t.Errorf("%q: an outline without a parse", cmd)
			}
			continue
		}
		want, ok2 := Outline(cmd)
		if ok1 != ok2 || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: the analysis's outline differs from a fresh parse's (%v/%v)", cmd, ok1, ok2)
		}
		if ok2 {
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d commands outlined: the corpus did not load", n)
	}
}
