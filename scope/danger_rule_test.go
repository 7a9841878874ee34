package scope_test

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
)

// TestDangerOfRule: a rule whose own words carry a DANGER line covers
// nothing (grant refuses it); a rule whose wildcard can take one is named
// with the calls it will not cover; a rule with neither gets nothing.
func TestDangerOfRule(t *testing.T) {
	project := t.TempDir()
	danger := func(argv []string) []string { return present.ArgvDanger(argv, project, project) }
	for _, c := range []struct {
		rule, every, some string
	}{
		{"Bash(git reset --hard)", "git reset --hard discards changes", ""},
		{"Bash(git reset --hard *)", "git reset --hard discards changes", ""},
		{"Bash(git push --force *)", "git push rewrites or deletes history", ""},
		{"Bash(git clean -fd)", "git clean deletes untracked files", ""},
		{"Bash(git checkout -- .)", "discards changes", ""},
		{"Bash(git push *)", "", "git push --force"},
		{"Bash(git reset *)", "", "git reset --hard"},
		{"Bash(git checkout *)", "", "git checkout ."},
		{"Bash(cat .env)", "credentials file (.env)", ""},
		{"Bash(cat *)", "", ""},
		// Controls: nothing a DANGER line reads.
		{"Bash(git status *)", "", ""},
		{"Bash(git push origin main)", "", ""},
		{"Bash(go test ./...)", "", ""},
		{"Bash(*)", "", ""},
		{"Edit(src/**)", "", ""},
	} {
		r, err := scope.Parse(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		every, some := scope.DangerOfRule(r, danger)
		if c.every == "" && every != "" || c.every != "" && !strings.Contains(every, c.every) {
			t.Errorf("%s: every %q, want %q", c.rule, every, c.every)
		}
		joined := strings.Join(some, "; ")
		if c.some == "" && joined != "" || c.some != "" && !strings.Contains(joined, c.some) {
			t.Errorf("%s: some %q, want one with %q", c.rule, joined, c.some)
		}
	}
}
