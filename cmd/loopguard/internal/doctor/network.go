package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/state"
)

// checkNetworkGrants lists the live grants that give a program the
// network, and warns about two kinds (issue 36): a bare +network, minted
// before ports were named, which still means any TCP port and listening
// (it is kept as the human granted it, neither narrowed nor widened), and
// a standing network grant for a program that runs code the project
// chose, which grant now refuses. Every one also reaches services on this
// machine and the local network on its ports: Landlock tells no address
// from another.
func checkNetworkGrants(st *state.Store, now time.Time) checkResult {
	r, all, ok := grantsCheck("network grants", st)
	if !ok {
		return r
	}
	var ports, anyPort, projectCode []string
	for _, gf := range all {
		if gf.Err != nil || !now.Before(gf.Grant.Expiry) {
			continue
		}
		rule, err := scope.Parse(gf.Grant.Scope)
		if err != nil || rule.IsJail() || !rule.Capability().Network {
			continue
		}
		c := rule.Capability()
		id, text := gf.Grant.ID(), present.EscapeText(rule.String())
		switch pc, runs := rule.RunsProjectCode(); {
		case runs:
			projectCode = append(projectCode, fmt.Sprintf("%s %s (%s)", id, text, pc.Why))
		case c.AnyPort:
			anyPort = append(anyPort, fmt.Sprintf("%s %s", id, text))
		default:
			ports = append(ports, fmt.Sprintf("%s %s", id, text))
		}
	}
	var parts []string
	if len(projectCode) > 0 {
		r.status = statusWarn
		parts = append(parts, "standing network for a program that runs project code, which the agent can change: "+strings.Join(projectCode, "; "))
		r.fix = "revoke them (loopguard revoke ID) and grant the form that runs no project code (npm install --ignore-scripts, cargo fetch, go mod download); loopguard grant says which"
	}
	if len(anyPort) > 0 {
		r.status = statusWarn
		parts = append(parts, "granted before ports were named, so any TCP port and listening: "+strings.Join(anyPort, "; "))
		if r.fix == "" {
			r.fix = "revoke them (loopguard revoke ID) and grant again with the ports they need: +network:443"
		}
	}
	if len(ports) > 0 {
		parts = append(parts, "TCP connect to the ports each names: "+strings.Join(ports, "; "))
	}
	if len(parts) == 0 {
		r.detail = "no live grant gives a program the network"
		return r
	}
	r.detail = strings.Join(parts, "; ") + "; each also reaches services on this machine and the local network on its ports, which Landlock cannot tell from the internet"
	return r
}
