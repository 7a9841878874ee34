package review

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
)

// What review offers for a call held because it leaves the jail for the
// network alone (issue 36, item 3): besides approving it once, n approves
// it once and grants its program the network for that exact command,
// never wider than what was shown (the narrowest rule, pinned, with
// +network: the ports its URLs name, 443 when none), and the screen says it also reaches services on this
// machine and the local network, which Landlock cannot tell from the
// internet. Never for a program that runs project code
// (policy.RunsProjectCode): the line then names the form that runs none
// (npm install --ignore-scripts), to grant with loopguard grant. g is not
// offered for such a call: its rule, without the network, would cover the
// next one and run it where it cannot work.

// errNeedsNetwork: g's rule would lack the network the call needs.
var errNeedsNetwork = errors.New("it needs the network: n grants it with the network, or approve it once with a")

// networkOffer is n's rule for p (c and env as scopeCall made them), or
// why n offers none; needs reports whether the call needs the network at
// all (g is then not offered).
func networkOffer(p *state.Pending, c scope.Call, env shellparse.Env) (r scope.Rule, needs bool, err error) {
	if p.Reason != hooks.ReasonLeavesJail || c.Shell == nil || c.Shell.Verdict != shellparse.Simple || len(c.Shell.Argv) == 0 {
		return scope.Rule{}, false, errors.New("only a simple command held for leaving the jail")
	}
	argv := make([]string, len(c.Shell.Argv))
	for i, w := range c.Shell.Argv {
		argv[i] = w.Value
	}
	network := false
	for _, n := range policy.NeedsBeyondJail(argv, c.Cwd, c.ProjectDir, c.Home) {
		if n.Right != policy.JailNetwork {
			return scope.Rule{}, network, fmt.Errorf("it needs more than the network (%s)", n.Why)
		}
		network = true
	}
	if !network {
		return scope.Rule{}, false, errors.New("it does not need the network")
	}
	if pc, runs := policy.RunsProjectCode(argv, true); runs {
		n, _ := policy.NetworkPorts(urlPorts(argv)...)
		return scope.Rule{}, true, approve.ProjectCodeError(strings.Join(argv, " "), pc, n.NetworkWord())
	}
	r, err = scope.Narrowest(c, env)
	if err != nil {
		return scope.Rule{}, true, err
	}
	n, err := policy.NetworkPorts(urlPorts(argv)...)
	if err != nil {
		return scope.Rule{}, true, err
	}
	r = r.Widened(n)
	if err := approve.CheckNetworkRule(r); err != nil {
		return scope.Rule{}, true, err
	}
	return r, true, nil
}

// nKey is n's entry on the prompt, "" when n is not offered.
func (o grantOffer) nKey() string {
	if o.netErr != nil {
		return ""
	}
	return "[n]etwork grant " + present.EscapeText(o.net.String())
}

// netLines are the lines above the prompt of a call that needs the
// network: what n grants and where it reaches, or, for a program that
// runs project code, why there is no such grant and what to grant
// instead.
func (o grantOffer) netLines(width int) string {
	switch {
	case !o.netNeeded:
		return ""
	case o.netErr == nil:
		return wrapText("n approves this call once and grants "+present.EscapeText(o.net.String())+": "+o.net.Capability().NetworkReach()+".", width)
	}
	var h *cli.HintError
	if errors.As(o.netErr, &h) {
		return wrapText("No network grant is offered: "+present.EscapeText(h.Error())+". "+present.EscapeText(strings.TrimSuffix(h.Hint(), "."))+".", width)
	}
	return wrapText("No network grant is offered ("+present.EscapeText(o.netErr.Error())+"); approve it once with a.", width)
}

// urlPorts is policy.URLPorts.
func urlPorts(argv []string) []int { return policy.URLPorts(argv) }
