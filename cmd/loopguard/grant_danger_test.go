package main

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/scope"
)

// A rule whose own words carry a DANGER line (granted before grant
// refused it, or a team's) is listed by grants as covering nothing; a rule
// with a wildcard is not.
func TestDangerUsable(t *testing.T) {
	project := t.TempDir()
	for rule, want := range map[string]string{
		"Bash(git reset --hard)":   "no: every call it matches carries a DANGER line (git reset --hard discards changes)",
		"Bash(git push --force *)": "no: every call it matches carries a DANGER line (git push rewrites",
		"Bash(git push *)":         "",
		"Bash(git status)":         "",
	} {
		r, err := scope.Parse(rule)
		if err != nil {
			t.Fatal(err)
		}
		got := dangerUsable(r, project)
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", rule, got, want)
		}
	}
}
