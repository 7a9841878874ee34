package hooks

import (
	"context"
	"path/filepath"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// The download that asks once and then works (issue 36). Under the jail
// grant a call that needs the network is held for the human
// (leaves_jail); approved exactly, it used to run unchanged, inside Claude
// Code's sandbox, whose network namespace has no way out, so it failed
// after the one decision. Now an exact approval of a call that leaves the
// jail for the network alone runs whole through the launcher with the
// jail's write set and the network to the ports its URLs name
// (project-write+network:PORTS, 443 when none), written as
// confine.NetworkCommand so that the one sandbox.excludedCommands entry
// init writes with two-phase enforcement takes it out of Claude Code's
// sandbox, into the launcher's own (Landlock, and namespaces where the
// kernel allows them). It runs only on the hook's ticket for exactly that
// text (package ticket): the entry routes, the ticket permits.

// exactAllowed is the answer to a call an exact grant allows: unchanged,
// or through the launcher with the network (networkJail).
func (e *Engine) exactAllowed(ctx context.Context, c *Call, d *described, g *token.Grant) Decision {
	what := "approved by " + g.Principal + " for this exact call"
	updated, cp, ok := e.networkJail(ctx, c, d)
	if !ok {
		return e.allowed(c, d, ReasonExactGrant, g, what)
	}
	if !c.Rewrite {
		// The wrapper makes the launch from the ticket (Call.Wrapped).
		updated = nil
	}
	dec := e.allowedAs(c, d, ReasonExactGrant, g, what, updated, cp.String())
	dec.Capability = cp.String()
	dec.Message = "loopguard: " + what + "; it runs whole, as written, in the jail with the network (" + cp.String() + ": " +
		cp.NetworkReach() + ") (grant " + g.ID() + ")"
	return dec
}

// networkJail is the input an exactly approved Bash call runs as when it
// leaves the jail for the network alone (no danger line, no write outside
// the project or into git's own directory, nothing unparseable, no
// request of the agent's to leave the sandbox), and the capability it runs
// with; ok is false for any other call, or where no jail grant applies or
// the launcher cannot be named bare.
func (e *Engine) networkJail(ctx context.Context, c *Call, d *described) (map[string]any, policy.Capability, bool) {
	var none policy.Capability
	if c.ToolName != "Bash" || d.shell == nil || !c.Launches() || e.Env.Launcher == "" || testknobs.On(testknobs.NoRewrite) || d.execConfig != "" {
		return nil, none, false
	}
	if e.namedProject(c) == "" {
		return nil, none, false
	}
	project := filepath.Clean(e.projectDir(c))
	if tooWideAJail(project, e.Env.Home) != "" {
		return nil, none, false
	}
	ports, ok := e.networkOnly(c, d, project)
	if !ok || !e.hasJail(ctx, c) {
		return nil, none, false
	}
	bash := policy.BashPath()
	if bash == "" {
		return nil, none, false
	}
	n, err := policy.NetworkPorts(ports...)
	if err != nil {
		return nil, none, false
	}
	cp := policy.Capability{Write: true, Network: true, Ports: n.Ports}
	cmd, _ := c.ToolInput["command"].(string)
	spec := confine.Spec{Cap: cp, Project: project, Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}}
	text, ok := confine.NetworkCommand(e.Env.Launcher, spec)
	if !ok {
		return nil, none, false
	}
	return withCommand(c.ToolInput, text), cp, true
}

// networkOnly reports whether every need of the call beyond the jail is
// the network, and the TCP ports its URLs name.
func (e *Engine) networkOnly(c *Call, d *described, project string) ([]int, bool) {
	if sandboxEscape(c) != "" || d.shell.Verdict == shellparse.Unparseable || d.shell.Sketch == nil || len(d.danger(project)) > 0 {
		return nil, false
	}
	network, ok := false, true
	var ports []int
	eachCall(d.shell.Sketch, 0, func(argv []string) bool {
		if len(argv) == 0 {
			return true
		}
		if present.InsideDanger(argv, c.Cwd, project) != "" {
			ok = false
			return false
		}
		for _, n := range policy.NeedsBeyondJail(argv, c.Cwd, project, e.Env.Home) {
			if installed(n.Unless) {
				continue
			}
			if n.Right != policy.JailNetwork {
				ok = false
				return false
			}
			network = true
		}
		ports = append(ports, policy.URLPorts(argv)...)
		return true
	})
	if !ok || !network {
		return nil, false
	}
	for _, w := range d.shell.Sketch.Writes {
		if policy.JailWritesOutside(w, c.Cwd, project, e.Env.Home) {
			return nil, false
		}
	}
	return ports, true
}

// hasJail reports whether a jail grant verifies for this call: the human
// chose the jail, and the approval escalates from it.
func (e *Engine) hasJail(ctx context.Context, c *Call) bool {
	grants, project, fail := e.scopedGrants(ctx, c)
	if fail != nil {
		return false
	}
	var jail []*token.Grant
	for _, gf := range grants {
		if gf.Err == nil && gf.Grant.Tool == "Bash" && gf.Grant.Scope == scope.JailRule {
			jail = append(jail, gf.Grant)
		}
	}
	if len(jail) == 0 {
		return false
	}
	g, f := e.verifiedJail(ctx, c, jail, project)
	return f == nil && g != nil
}
