package hooks

import (
	"context"
	"os"
	"path/filepath"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/fsx"
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
// confine.NetworkCommand so that the sandbox.excludedCommands entry
// init writes for it with two-phase enforcement takes it out of Claude Code's
// sandbox, into the launcher's own (Landlock, and namespaces where the
// kernel allows them). It runs only on the hook's ticket for exactly that
// text (package ticket): the entry routes, the ticket permits.

// Beyond the network (issue 36): an exact approval of a call that needs
// what neither Claude Code's sandbox nor the jail gives (git push, git
// fetch: the network and git's own directory, keys in ~/.ssh, an agent or
// a credential helper; npm install -g, go install, a write to ~/.config:
// outside the project) could not do its work. Where the host takes the launcher's forms out of its
// sandbox on the hook's ticket (Env.LeaveSandbox: init's two entries,
// two-phase enforcement), it runs unconfined, as exact approvals ran
// before the sandbox was on: written as confine.UnconfinedCommand, on the
// hook's ticket for exactly that text. Never for a scoped grant or the
// jail grant; never for a call with a DANGER line, one that cannot be
// parsed, one that asks to leave the sandbox itself
// (dangerouslyDisableSandbox) or one that touches executable
// configuration: those run as written, inside the sandbox, as before
// (under the jail grant in the as-written form, heldAsWritten). One
// that needs git's own directory alone (git add -A && git commit) runs
// in the jail with it (escapeGit), out of the sandbox by init's third
// entry. The human is told before deciding (the hold's
// reason, and a warning on review's, approve's and the console's screen)
// and the model after (the allow's message).

// exactAllowed is the answer to a call an exact grant allows: through the
// launcher with the network (networkJail), unconfined outside the sandbox
// (unconfinedLaunch), or as written where it is (heldAsWritten: under the
// jail grant, holding the project).
func (e *Engine) exactAllowed(ctx context.Context, c *Call, d *described, g *token.Grant) Decision {
	what := "approved by " + g.Principal + " for this exact call"
	if updated, ok := e.unconfinedLaunch(ctx, c, d); ok {
		dec := e.allowedAs(c, d, ReasonExactGrant, g, what, updated, "")
		dec.Capability = confine.CapUnconfined
		dec.Message = "loopguard: " + what + "; " + unconfinedNote + ", as written (grant " + g.ID() + ")"
		return dec
	}
	updated, cp, ok := e.networkJail(ctx, c, d)
	if !ok {
		return e.heldAsWritten(ctx, c, d, g, what)
	}
	if !c.Rewrite {
		// The wrapper makes the launch from the ticket (Call.Wrapped).
		updated = nil
	}
	dec := e.allowedAs(c, d, ReasonExactGrant, g, what, updated, cp.String())
	dec.Capability = cp.String()
	if cp.Git {
		dec.Message = "loopguard: " + what + "; it runs whole, as written, in the jail with git's own directory (" + cp.String() +
			": no network; git's configuration and hooks stay as they are) (grant " + g.ID() + ")"
		return dec
	}
	dec.Message = "loopguard: " + what + "; it runs whole, as written, in the jail with the network (" + cp.String() + ": " +
		cp.NetworkReach() + ") (grant " + g.ID() + ")"
	return dec
}

// unconfinedNote is what the human and the model are told of a call that
// runs in the unconfined form.
const unconfinedNote = "it runs outside Claude Code's sandbox and the jail, unconfined (as you: your files, keys and network)"

// unconfinedWarning is the line review, approve and the console show
// among the call's warnings (pending.Warnings) when an exact approval
// would run it in the unconfined form.
const unconfinedWarning = "UNCONFINED ONCE APPROVED: approved exactly, " + unconfinedNote + "; it needs more than the jail and the sandbox give"

// escalation is the form an exactly approved call that leaves the jail
// runs in.
type escalation int

const (
	escapeNone       escalation = iota // as written, where it is
	escapeNetwork                      // networkJail's
	escapeUnconfined                   // unconfinedLaunch's
	escapeGit                          // networkJail's, with git's own directory instead
)

// escalationOf is the form an exact approval of c would run in, from the
// analysis alone (the jail grant is the caller's to check): the network
// form for a call that leaves the jail for the network alone, the
// unconfined form for one that needs what neither the jail nor Claude
// Code's sandbox gives (outside the project; the network and git's own
// directory) where the host can route it (Env.LeaveSandbox), none
// otherwise; ports are the network's.
func (e *Engine) escalationOf(c *Call, d *described) (escalation, []int) {
	if c.ToolName != "Bash" || d.shell == nil || !c.Launches() || e.Env.Launcher == "" || testknobs.On(testknobs.NoRewrite) || d.execConfig != "" {
		return escapeNone, nil
	}
	if e.namedProject(c) == "" {
		return escapeNone, nil
	}
	project := filepath.Clean(e.projectDir(c))
	if tooWideAJail(project, e.Env.Home) != "" {
		return escapeNone, nil
	}
	b, ok := e.beyondJail(c, d, project)
	switch {
	case !ok:
		return escapeNone, nil
	case (b.outside || b.network && b.git) && e.Env.LeaveSandbox && c.Rewrite:
		return escapeUnconfined, nil
	case b.network && !b.outside && !b.git:
		return escapeNetwork, b.ports
	case b.git && !b.network && !b.outside && ownRepository(project, c.Cwd):
		// Git's own directory alone (git add -A && git commit): in the
		// jail with it (confine.GitCommand), out of Claude Code's sandbox,
		// whose /dev/null mounts over the project's missing dotfiles make
		// git add -A fail there.
		return escapeGit, nil
	}
	return escapeNone, nil
}

// ownRepository reports whether git run in cwd works on the project's own
// repository, the one +git writes: the project has a .git (a directory,
// or a worktree's or a submodule's file), and no directory from cwd up to
// the project holds another. git init in a project without one, or a
// commit in a nested repository, would fail in the git form (the jail
// holds a new or nested .git): such a call runs as written, as before.
func ownRepository(project, cwd string) bool {
	if _, err := os.Lstat(filepath.Join(project, ".git")); err != nil {
		return false
	}
	cwd = filepath.Clean(cwd)
	if !fsx.Within(cwd, project) {
		return false
	}
	for d := cwd; d != project; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return false
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
	return true
}

// unconfinedLaunch is the input an exactly approved Bash call runs as in
// the unconfined form (escalationOf), under a jail grant; ok is false for
// any other call.
func (e *Engine) unconfinedLaunch(ctx context.Context, c *Call, d *described) (map[string]any, bool) {
	if form, _ := e.escalationOf(c, d); form != escapeUnconfined || !e.hasJail(ctx, c) {
		return nil, false
	}
	bash := policy.BashPath()
	if bash == "" {
		return nil, false
	}
	cmd, _ := c.ToolInput["command"].(string)
	project := filepath.Clean(e.projectDir(c))
	spec := confine.Spec{Project: project, Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}, Holds: e.reachedPlaces(c, d, project)}
	text, ok := confine.UnconfinedCommand(e.Env.Launcher, spec)
	if !ok {
		return nil, false
	}
	return withCommand(c.ToolInput, text), true
}

// heldAsWritten is the answer to an exactly approved call that takes no
// other form: as written, where the host runs it. Under the jail grant,
// where jailed calls and the file tools' writes run in the project with
// no decision, a Bash call the host runs through the launcher (its
// rewrite, or loopguard's wrapper) runs as confine.AsWrittenCommand's
// text: the same program, no restriction added, in the same place (the
// text matches no excludedCommands entry, so it leaves no sandbox), but
// holding the project while any of its processes runs, so that nothing
// that runs with no decision changes what it runs (the ninety-fifth
// attack run: Copilot CLI, and Claude Code with no --ticket, ran an
// approved make that ran a deploy.sh a jailed call rewrote meanwhile).
// Without the jail grant, or where the host can neither rewrite nor wrap,
// it runs as written, unheld.
func (e *Engine) heldAsWritten(ctx context.Context, c *Call, d *described, g *token.Grant, what string) Decision {
	updated, ok := e.asWrittenLaunch(ctx, c, d)
	if !ok {
		return e.allowed(c, d, ReasonExactGrant, g, what)
	}
	if !c.Rewrite {
		// The wrapper makes the launch from the ticket (Call.Wrapped).
		updated = nil
	}
	dec := e.allowedAs(c, d, ReasonExactGrant, g, what, updated, "")
	dec.Capability = confine.CapAsWritten
	dec.Message = "loopguard: " + what + "; " + asWrittenNote + " (grant " + g.ID() + ")"
	return dec
}

// asWrittenNote is what the model is told of a call that runs in the
// as-written form.
const asWrittenNote = "it runs as written, where it would run, through loopguard's launcher, which adds no restriction and holds the project while the call runs: jailed calls there wait for it, and a file tool's write there is held for a decision"

// asWrittenLaunch is the input an exactly approved Bash call runs as in
// the as-written form (heldAsWritten); ok is false where no jail grant
// applies to the call's project or the host cannot launch it.
func (e *Engine) asWrittenLaunch(ctx context.Context, c *Call, d *described) (map[string]any, bool) {
	if c.ToolName != "Bash" || !c.Launches() || e.Env.Launcher == "" || testknobs.On(testknobs.NoRewrite) {
		return nil, false
	}
	project := e.jailProject(c)
	bash := policy.BashPath()
	if project == "" || bash == "" || !e.hasJail(ctx, c) {
		return nil, false
	}
	cmd, _ := c.ToolInput["command"].(string)
	spec := confine.Spec{Project: project, Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}, Holds: e.reachedPlaces(c, d, project)}
	text, ok := confine.AsWrittenCommand(e.Env.Launcher, spec)
	if !ok {
		return nil, false
	}
	return withCommand(c.ToolInput, text), true
}

// networkJail is the input an exactly approved Bash call runs as when it
// leaves the jail for the network alone, or for git's own directory alone
// (no danger line, no write outside the project, nothing unparseable, no
// request of the agent's to leave the sandbox), and the capability it runs
// with; ok is false for any other call, or where no jail grant applies or
// the launcher cannot be named bare.
func (e *Engine) networkJail(ctx context.Context, c *Call, d *described) (map[string]any, policy.Capability, bool) {
	var none policy.Capability
	form, ports := e.escalationOf(c, d)
	if form != escapeNetwork && form != escapeGit || !e.hasJail(ctx, c) {
		return nil, none, false
	}
	bash := policy.BashPath()
	if bash == "" {
		return nil, none, false
	}
	cp := policy.Capability{Write: true, Git: true}
	command := confine.GitCommand
	if form == escapeNetwork {
		n, err := policy.NetworkPorts(ports...)
		if err != nil {
			return nil, none, false
		}
		cp = policy.Capability{Write: true, Network: true, Ports: n.Ports}
		command = confine.NetworkCommand
	}
	cmd, _ := c.ToolInput["command"].(string)
	spec := confine.Spec{Cap: cp, Project: filepath.Clean(e.projectDir(c)), Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}}
	text, ok := command(e.Env.Launcher, spec)
	if !ok {
		return nil, none, false
	}
	return withCommand(c.ToolInput, text), cp, true
}

// beyond is what a call needs beyond the jail, as far as the analysis
// tells (policy.NeedsBeyondJail's rights): the network (to the TCP ports
// its URLs name), outside the project, git's own directory.
type beyond struct {
	network, outside, git bool
	ports                 []int
}

// beyondJail is what c needs beyond the jail; ok is false for a call no
// escalation form takes: one that asks to leave the sandbox itself, that
// cannot be parsed, or that carries a DANGER line.
func (e *Engine) beyondJail(c *Call, d *described, project string) (beyond, bool) {
	var b beyond
	if sandboxEscape(c) != "" || d.shell.Verdict == shellparse.Unparseable || d.shell.Sketch == nil || len(d.danger(project)) > 0 {
		return b, false
	}
	ok := true
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
			switch n.Right {
			case policy.JailNetwork:
				b.network = true
			case policy.JailOutside:
				b.outside = true
			case policy.JailGit:
				b.git = true
			default:
				ok = false
				return false
			}
		}
		b.ports = append(b.ports, policy.URLPorts(argv)...)
		return true
	})
	if !ok {
		return beyond{}, false
	}
	for _, w := range d.shell.Sketch.Writes {
		if policy.JailWritesOutside(w, c.Cwd, project, e.Env.Home) {
			b.outside = true
		}
	}
	return b, true
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
