package main

import (
	"strings"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
)

// dangerNote is the line grant shows under a Bash rule with a wildcard:
// no grant covers a call with a DANGER line, so what its wildcard could
// take that carries one (git push * takes git push --force) is held for an
// exact approval all the same; "" for any other rule.
func dangerNote(r scope.Rule, project string) string {
	if r.Tool() != "Bash" || r.IsJail() || r.WildcardNote() == "" {
		return ""
	}
	_, some := scope.DangerOfRule(r, cli.RuleDanger(project))
	what := "a call it matches with a DANGER line"
	if len(some) > 0 {
		what += " (" + present.EscapeText(strings.Join(some, ", ")) + ")"
	}
	return "it does not cover " + what + ", nor one naming a credentials file: each is held for your exact approval"
}

// dangerUsable is grants' USABLE HERE for a scoped rule whose own words
// carry a DANGER line (one granted before grant refused it, or a team's):
// it covers nothing; "" for any other.
func dangerUsable(r scope.Rule, project string) string {
	if every, _ := scope.DangerOfRule(r, cli.RuleDanger(project)); every != "" {
		return "no: every call it matches carries a DANGER line (" + every + "), and no grant covers one"
	}
	return ""
}
