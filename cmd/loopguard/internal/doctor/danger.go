package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
)

// checkDangerGrants warns about live Bash grants whose own words carry a
// DANGER line (Bash(git reset --hard), granted before grant refused it, or
// in a restored state): no grant covers a DANGER call, so such a grant
// covers nothing, and the call it names is held for an exact approval.
func checkDangerGrants(st *state.Store, now time.Time) checkResult {
	r, all, ok := grantsCheck("DANGER grants", st)
	if !ok {
		return r
	}
	project := cli.ProjectDir()
	var useless []string
	for _, gf := range all {
		if gf.Err != nil || gf.Grant.Exact() || !now.Before(gf.Grant.Expiry) {
			continue
		}
		rule, err := scope.Parse(gf.Grant.Scope)
		if err != nil || rule.Tool() != "Bash" {
			continue
		}
		if every, _ := scope.DangerOfRule(rule, cli.RuleDanger(project)); every != "" {
			useless = append(useless, fmt.Sprintf("%s %s (%s)", gf.Grant.ID(), present.EscapeText(rule.String()), every))
		}
	}
	if len(useless) == 0 {
		r.detail = "no grant covers a call with a DANGER line (a forced push, git reset --hard, rm -r of the project's directories...): each is held for an exact approval whatever grant matches it"
		return r
	}
	r.status = statusWarn
	r.detail = "these grants cover nothing, since every call they match carries a DANGER line and no grant covers one: " + strings.Join(useless, "; ")
	r.fix = "revoke them (loopguard revoke ID); approve such calls one at a time"
	return r
}
