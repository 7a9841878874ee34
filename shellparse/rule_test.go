package shellparse

import (
	"slices"
	"testing"
)

// TestRuleWordsAreTheAnalysisWords: a rule's literal words are read with
// the analysis's own quoting, so the words a rule names are the argv the
// analysis gives the same text (the $'...' decoder included: one decoder,
// one answer).
func TestRuleWordsAreTheAnalysisWords(t *testing.T) {
	fx := newFixture(t)
	for _, text := range []string{
		`cat $'\x2dn' $'\101' $'\u00e9' 'a b' "c\"d" e\ f`,
		`git log $'--format=%H'`,
		`echo "a\$b" 'x'"y"z $'\t'`,
		`ls $'\e' $'\0101'`,
	} {
		res := Analyze(text, fx.env)
		if res.Verdict != Simple {
			t.Fatalf("%s: %s %s", text, res.Verdict, res.Reason)
		}
		var argv []string
		for _, w := range res.Argv {
			argv = append(argv, w.Value)
		}
		rc, re := ParseRuleCommand(text)
		if re != nil {
			t.Fatalf("%s: %v", text, re)
		}
		var words []string
		for _, w := range rc.Words {
			if len(w.Lits) != 1 {
				t.Fatalf("%s: wildcard in %v", text, w.Lits)
			}
			words = append(words, w.Lits[0])
		}
		if !slices.Equal(words, argv) {
			t.Errorf("%s: rule words %q, analysis argv %q", text, words, argv)
		}
	}
}

// TestRuleRefusesWhatTheAnalysisRefuses: the escapes the analysis will not
// decode are not rule words either. Control: \xHH is.
func TestRuleRefusesWhatTheAnalysisRefuses(t *testing.T) {
	for _, text := range []string{`cat $'\x{2d}n'`, `cat $'\cA'`, `cat $'\x{}'`, `cat $'a\0'`} {
		if _, re := ParseRuleCommand(text); re == nil {
			t.Errorf("%s: read as a rule", text)
		}
	}
	rc, re := ParseRuleCommand(`cat $'\x2dn' *.go`)
	if re != nil || rc.Words[1].Lits[0] != "-n" || len(rc.Words[2].Lits) != 2 {
		t.Errorf("control: %+v %v", rc, re)
	}
}
