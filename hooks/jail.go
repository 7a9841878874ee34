package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// The jail grant (issue 36). `loopguard init` mints one scoped grant more,
// Bash(*), whose calls run whole, whatever their shape, in the jail
// (policy.JailCapability: project-write, no network, the private temp,
// executable configuration and instruction files read-only, read-only's
// environment) through the launcher: the model's own text, unchanged, as
// the argument of bash -c. The kernel decides what such a call can do; the
// analysis below decides only when to ask instead: a call that needs what
// the jail does not give (the network, a write outside the project, git's
// own directory), carries a danger line, or cannot be parsed goes to the
// human as before. A narrower grant that covers the call (the read-only
// preset, Bash(git commit *)) is used first: the jail is the last grant
// tried before a question.

// Reason codes of the jail.
const (
	// ReasonJailed: the call ran in the jail, under the jail grant.
	ReasonJailed = "jailed"
	// ReasonLeavesJail: the jail grant exists, but the call needs what
	// the jail does not give (said in the message): a human decides.
	ReasonLeavesJail = "leaves_jail"
)

// jailed allows c to run in the jail when a jail grant covers it and the
// analysis finds nothing the jail cannot hold. ok is false when it does
// not decide the call; d.leaves then says what took it out of the jail
// ("" when no jail grant applies at all).
func (e *Engine) jailed(ctx context.Context, c *Call, d *described) (Decision, bool) {
	if c.ToolName != "Bash" || d.shell == nil || !c.Launches() || e.Env.Launcher == "" || testknobs.On(testknobs.NoRewrite) {
		return Decision{}, false
	}
	grants, project, fail := e.grantsOf(ctx, c, d)
	if fail != nil {
		return *fail, true
	}
	var jail []*token.Grant
	for _, gf := range grants {
		if gf.Err == nil && gf.Grant.Tool == "Bash" && gf.Grant.Scope == scope.JailRule {
			jail = append(jail, gf.Grant)
		}
	}
	if len(jail) == 0 {
		return Decision{}, false
	}
	// A call near executable configuration reaches no scoped grant (an
	// exact approval only): the jail takes it when it only reads there.
	if d.execConfig != "" {
		if !e.readsOnlyProtected(c, d) {
			return Decision{}, false
		}
	} else if e.analysedCovers(ctx, c, d, grants, project) {
		return Decision{}, false
	}
	g, fail := e.verifiedJail(ctx, c, jail, project)
	if fail != nil {
		return *fail, true
	}
	if g == nil {
		return Decision{}, false
	}
	// Where the jail does not apply, the call is decided as without it,
	// with the reason it would have had.
	if e.jailProject(c) == "" {
		return Decision{}, false
	}
	if why := e.leavesJail(c, d); why != "" {
		if form, _ := e.escalationOf(c, d); form == escapeUnconfined {
			// What an exact approval would mean, before the human
			// decides: the model's line, and the screens' warning.
			why += "; approved exactly, " + unconfinedNote
			d.notes = append(d.notes, unconfinedWarning)
		}
		d.leaves = why
		return Decision{}, false
	}
	updated, cp, why := e.jailLaunch(c)
	if why != "" {
		d.leaves = why
		return Decision{}, false
	}
	if !c.Rewrite {
		// The wrapper runs the model's text under the ticket's
		// capability: the same launch, made by the wrapper.
		updated = nil
	}
	dec := e.allowedAs(c, d, ReasonJailed, g, "run in the jail granted by "+g.Principal, updated, cp.String())
	dec.Capability = cp.String()
	dec.Context = e.jailContext(c, cp, true)
	return dec, true
}

// jailProject is the jail's write set for c: the project the host names,
// never the payload's cwd, which the agent moves with cd (a cd into
// ~/.ssh would make that the project); "" when the host names none or it
// is too wide to jail a call in (tooWideAJail).
func (e *Engine) jailProject(c *Call) string {
	if e.namedProject(c) == "" {
		return ""
	}
	project := filepath.Clean(e.projectDir(c))
	if tooWideAJail(project, e.Env.Home) != "" {
		return ""
	}
	return project
}

// jailLaunch is c's input rewritten to run its command whole, as written,
// through the launcher in the jail: `bash -c COMMAND` under the jail's
// capability, in the project jailProject names. why says what stops it
// ("" when nothing does).
func (e *Engine) jailLaunch(c *Call) (updated map[string]any, cp policy.Capability, why string) {
	project := e.jailProject(c)
	if c.ToolName != "Bash" || !c.Launches() || e.Env.Launcher == "" || project == "" {
		return nil, cp, "the jail does not apply to this call"
	}
	bash := policy.BashPath()
	if bash == "" {
		return nil, cp, "no bash in /usr/bin or /bin to run it with"
	}
	cmd, _ := c.ToolInput["command"].(string)
	cp = e.jailCapability()
	spec := confine.Spec{Cap: cp, Project: project, Cwd: c.Cwd, Exe: bash, Argv: []string{"bash", "-c", cmd}}
	words := append([]string{e.confiner()}, spec.Args()...)
	for i, w := range words {
		words[i] = shellparse.Quote(w)
	}
	return withCommand(c.ToolInput, strings.Join(words, " ")), cp, ""
}

// jailCapability is what a jailed call runs with: the jail, where the
// kernel scopes signals and abstract Unix sockets to it (Landlock ABI 6);
// below that, read-only with the jail's environment, since a program that
// writes could signal the user's other processes.
func (e *Engine) jailCapability() policy.Capability {
	if confine.ABI() < 6 {
		return policy.Capability{Jail: true}
	}
	return policy.JailCapability
}

// analysedCovers reports whether a narrower grant than the jail covers the
// whole call: a simple command, or every part of a chain. Nothing is
// recorded; the scoped steps after this one decide it.
func (e *Engine) analysedCovers(ctx context.Context, c *Call, d *described, grants []state.GrantFile, project string) bool {
	if sandboxEscape(c) != "" || len(e.dangerLines(c, d)) > 0 {
		// No scope covers a DANGER call: not the narrower grant, and
		// not the jail (leavesJail) either.
		return false
	}
	if d.shell.Verdict == shellparse.Simple {
		cv := e.coverOne(ctx, c, grants, project, d.shell, c.Cwd, func(rule scope.Rule) error {
			_, err := e.rewrite(c, d, rule)
			return err
		})
		return cv.g != nil
	}
	if len(d.shell.Parts) == 0 {
		return false
	}
	caps := map[string]bool{}
	for i := range d.shell.Parts {
		p := &d.shell.Parts[i]
		cv := e.coverOne(ctx, c, grants, project, p, p.Cwd, nil)
		if cv.g == nil {
			return false
		}
		if !p.Builtin {
			caps[cv.rule.Capability().String()] = true
		}
	}
	// loopguard's wrapper runs a chain whole under one capability
	// (scopedChain): parts granted different ones go to the jail.
	return c.Rewrite || !c.Wrapped || len(caps) <= 1
}

// verifiedJail is the first of the jail grants that verifies for this
// call's session and agent.
func (e *Engine) verifiedJail(ctx context.Context, c *Call, jail []*token.Grant, project string) (*token.Grant, *Decision) {
	verify, err := e.verifier(ctx)
	if err != nil {
		d := e.fail(ReasonKeyring, err)
		return nil, &d
	}
	for _, g := range jail {
		agent := c.Agent()
		switch {
		case g.Agent == agent, g.Agent == token.Any:
		case c.AgentType != "" && g.Agent == "type:"+c.AgentType:
			agent = g.Agent
		default:
			continue
		}
		session := c.SessionID
		if project != "" && g.Session == project {
			session = project
		}
		err := verify(g, token.Call{Session: session, Agent: agent, Tool: g.Tool}, e.now())
		if f := e.custodyFailure(err); f != nil {
			return nil, f
		}
		if err == nil {
			return g, nil
		}
	}
	return nil, nil
}

// leavesJail says why the call needs more than the jail gives, "" when the
// jail holds it all: a command the analysis cannot parse, one that leaves
// Claude Code's sandbox, a DANGER line (dangerLines: present.DangerOf, and
// the losses inside the project present.InsideDanger names), or a command that needs the
// network, a write outside the project or git's own directory
// (policy.NeedsBeyondJail), wherever it is nested, in a bash -c string too.
func (e *Engine) leavesJail(c *Call, d *described) string {
	if why := sandboxEscape(c); why != "" {
		return why
	}
	if d.shell.Verdict == shellparse.Unparseable || d.shell.Sketch == nil {
		return "it cannot be parsed (" + present.EscapeText(d.shell.Reason) + ")"
	}
	project := filepath.Clean(e.projectDir(c))
	// A program that reads commands from its standard input is no DANGER
	// line here (dangerLines): the jail holds whatever it is given.
	if danger := e.dangerLines(c, d); len(danger) > 0 {
		return "DANGER: " + present.EscapeText(strings.Join(danger, "; "))
	}
	var why []string
	seen := map[string]bool{}
	eachCall(d.shell.Sketch, 0, func(argv []string) bool {
		if len(argv) == 0 {
			return true
		}
		var lines []string
		for _, n := range policy.NeedsBeyondJail(argv, c.Cwd, project, e.Env.Home) {
			if installed(n.Unless) {
				continue
			}
			lines = append(lines, jailRightText(n.Right)+" ("+n.Why+")")
		}
		for _, l := range lines {
			if !seen[l] {
				seen[l] = true
				why = append(why, l)
			}
		}
		return len(why) < 4
	})
	if len(why) == 0 {
		for _, w := range d.shell.Sketch.Writes {
			if policy.JailWritesOutside(w, c.Cwd, project, e.Env.Home) {
				return "it writes outside the project (> " + present.EscapeText(w) + ")"
			}
		}
	}
	return present.EscapeText(strings.Join(why, "; "))
}

func jailRightText(right string) string {
	switch right {
	case "network":
		return "it needs the network"
	case "outside":
		return "it writes or acts outside the project"
	case "git":
		return "it writes git's own directory"
	case "links":
		return "it makes a symbolic link in the project"
	}
	return "it needs " + right
}

// maxShellDepth bounds how deep eachCall follows bash -c strings.
const maxShellDepth = 3

// eachCall calls f with every simple command of sk, and of every string a
// shell among them runs with -c (sh -c 'rm -rf src'), to maxShellDepth;
// f returns false to stop.
func eachCall(sk *shellparse.Sketch, depth int, f func([]string) bool) bool {
	for _, argv := range sk.Calls {
		if !f(argv) {
			return false
		}
		if depth >= maxShellDepth {
			continue
		}
		if s, ok := shellString(argv); ok {
			// A string bash cannot parse runs nothing but its error.
			inner, parsed := shellparse.SketchOf(s)
			if parsed && !eachCall(&inner, depth+1, f) {
				return false
			}
		}
	}
	return true
}

// shellString is the command string a shell runs with -c (sh -c 'x',
// bash -ec 'x', env bash -c 'x').
func shellString(argv []string) (string, bool) {
	for len(argv) > 0 && (filepath.Base(argv[0]) == "env" || filepath.Base(argv[0]) == "command" || filepath.Base(argv[0]) == "exec") {
		argv = argv[1:]
		for len(argv) > 0 && strings.Contains(argv[0], "=") {
			argv = argv[1:]
		}
	}
	if len(argv) < 3 {
		return "", false
	}
	switch filepath.Base(argv[0]) {
	case "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox":
	default:
		return "", false
	}
	for i, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+2 < len(argv) {
			return argv[i+2], true
		}
	}
	return "", false
}

// leavesMessage is what the model is told of a call the jail does not
// hold: it waits for the human, who sees the same line.
func leavesMessage(why string) string {
	return "your commands run in a jail without a decision, but not this one: " + why +
		". It needs the user's exact approval; or do the work without it"
}

// readsOnlyProtected reports whether a call that touches executable
// configuration (or another protected path short of what the guard stands
// on) only reads it, as far as the analysis can tell: no redirection
// writes there, and every command whose words name such a path is a
// read-only program (policy.DefaultCapability: ls, cat, grep, git log...;
// sed only without -i). The jail cannot write executable configuration
// whatever the prediction; this only decides whether the human is asked
// first. Each word is judged from the call's cwd (a chain's parts from
// their own too): a cd the analysis did not follow can only make the
// kernel refuse a write, never allow one.
func (e *Engine) readsOnlyProtected(c *Call, d *described) bool {
	if d.shell.Sketch == nil || d.shell.Verdict == shellparse.Unparseable {
		return false
	}
	pl := e.places(c)
	named := func(cwd, w string) bool {
		rv := &resolver{pl: pl, cwd: cwd, home: e.Env.Home}
		for _, cand := range pathCandidates(w) {
			if cand == "" {
				continue
			}
			if hasGlobMeta(cand) && pl.GlobProtection(filepath.Clean(fsx.Abs(cwd, e.Env.Home, cand))).Protected() {
				return true
			}
			if rv.judge(cand).prot.Protected() {
				return true
			}
		}
		return false
	}
	for _, w := range d.shell.Sketch.Writes {
		if named(c.Cwd, w) {
			return false
		}
	}
	for i := range d.shell.Parts {
		for _, r := range d.shell.Parts[i].Redirects {
			if r.Writes && named(d.shell.Parts[i].Cwd, r.Target) {
				return false
			}
		}
	}
	ok := true
	eachCall(d.shell.Sketch, 0, func(argv []string) bool {
		if len(argv) == 0 || readOnlyProgram(argv) {
			return true
		}
		for _, w := range argv[1:] {
			if named(c.Cwd, w) {
				ok = false
				return false
			}
		}
		return true
	})
	return ok
}

// readOnlyProgram: a program (and subcommand) whose rules run read-only,
// sed without in-place editing.
func readOnlyProgram(argv []string) bool {
	words := argv[:min(len(argv), 2)]
	if policy.DefaultCapability(words, false) != (policy.Capability{}) {
		return false
	}
	if filepath.Base(argv[0]) == "sed" {
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--in-place") || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "i")) {
				return false
			}
		}
	}
	return true
}

// installed reports whether one of paths (a package's local program, for
// an npx that then needs no download) is there.
func installed(paths []string) bool {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// tooWideAJail says why project cannot be a jail's write set, "" when it
// can: the root, a top-level directory (/tmp, /home), the home or a
// directory above it, a shared temp directory itself, or a place in one of
// the home's hidden directories (~/.config/x, ~/.ssh). A session started
// there would let every jailed call write all of it.
func tooWideAJail(project, home string) string {
	if !filepath.IsAbs(project) {
		return "the project directory is not known"
	}
	// The home reached through a link (/home -> /var/home) is judged by
	// its real path too: the project the host names is a real path (the
	// ninety-first attack run's project at the home's real path).
	if real := policy.RealHome(home); real != "" {
		if why := tooWideAJail(project, real); why != "" {
			return why
		}
	}
	segs := strings.Split(strings.Trim(project, "/"), "/")
	switch {
	case project == "/" || len(segs) < 2:
		return "the project is " + present.EscapeText(project) + ", too wide to jail a call in"
	case home != "" && fsx.Within(home, project):
		return "the project is " + present.EscapeText(project) + ", which holds the home directory: too wide to jail a call in"
	case project == os.TempDir() || project == "/var/tmp" || project == "/dev/shm":
		return "the project is the shared temp directory " + present.EscapeText(project) + ": too wide to jail a call in"
	}
	if root := confine.HeldTempDir(project, os.TempDir(), os.Getuid()); root != "" {
		return "the project " + present.EscapeText(project) + " holds the temp directory " + present.EscapeText(root) + ", where launches keep their records: too wide to jail a call in"
	}
	if rel, err := filepath.Rel(home, project); home != "" && err == nil && strings.HasPrefix(rel, ".") && !strings.HasPrefix(rel, "..") {
		return "the project " + present.EscapeText(project) + " lies in a hidden directory of the home, where tools keep their configuration: not a jail's write set"
	}
	return ""
}
