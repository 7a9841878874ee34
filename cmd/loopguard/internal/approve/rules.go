package approve

import (
	"fmt"
	"strings"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
)

// CheckNetworkRule refuses a standing network grant that the human
// should not mint (issue 36): a bare +network, which is how grants minted
// before ports were named are spelled (any port, and listening), and the
// network for a program that runs code the project chose (an install
// that runs lifecycle scripts, make, a build that runs build.rs, a test
// runner, npx): the agent can change that code in the jail, and it would
// have the network at every later call. The error offers the form that
// runs no project code when there is one.
func CheckNetworkRule(r scope.Rule) error {
	c := r.Capability()
	if !c.Network || r.IsJail() {
		return nil
	}
	if c.AnyPort {
		return cli.WithHint(fmt.Errorf("%s: a bare +network is how grants minted before ports were named are spelled (any TCP port, and listening); a new grant names its ports", r),
			"write +network:443 (HTTPS), or the ports the program needs: +network:22,443; or --network --port 22 --port 443")
	}
	pc, runs := r.RunsProjectCode()
	if !runs {
		return nil
	}
	return ProjectCodeError(r.String(), pc, c.NetworkWord())
}

// ProjectCodeError refuses a standing network (netWord, network:443) for
// what (a rule, or a command), which runs project code as pc says, with a
// hint at the form that runs none.
func ProjectCodeError(what string, pc policy.ProjectCode, netWord string) error {
	err := fmt.Errorf("no standing network for %s: %s, code the project chose (the agent can change it, and it would reach the network at every later call with no one asked)", what, pc.Why)
	if pc.Instead == nil {
		return cli.WithHint(err, "approve each call that needs the network once (loopguard review), or grant the download alone and run the rest in the jail")
	}
	rule := "Bash(" + strings.Join(pc.Instead, " ")
	if pc.Wild {
		rule += " *"
	}
	rule += ")"
	then := ""
	if pc.Then != "" {
		then = ", then " + pc.Then
	}
	if ir, perr := scope.Parse(rule); perr != nil || scope.Dangerous(ir, "") != nil {
		// Not a rule a grant takes (npm install PKG: the option table
		// never lets a rule name a package to install): once, then.
		return cli.WithHint(err, "approve the form that runs no project code once: "+strings.Join(pc.Instead, " ")+then)
	}
	return cli.WithHint(err, "grant the form that runs no project code: loopguard grant '"+rule+" +"+netWord+"'"+then)
}
