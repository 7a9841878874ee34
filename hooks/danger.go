package hooks

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// ReasonDangerNotCovered: a scoped grant (one the human typed, a team's
// from Vault, a preset's, the jail's Bash(*)) would cover the call, but
// the call carries a DANGER line: no scope covers a DANGER call, only an
// exact approval of it (issue 36: review never offers such a rule, and
// the engine does not honour one either).
const ReasonDangerNotCovered = "danger_not_covered"

// dangerLines is the DANGER lines of a Bash call, read once per call: what
// the human is shown (present.DangerOf: a forced push, a recursive delete
// outside the project, a download piped into a shell, a credentials file
// named...) and the losses inside the project (present.InsideDanger: rm -r
// of the project's directories, git reset --hard, git clean, git checkout
// -- .), of every simple command wherever it is nested: a chain, a pipe, a
// subshell, a loop, a bash -c string (eachCall, to maxShellDepth). A
// program that reads commands from its standard input is no DANGER line
// here: a scope refuses it as interactive_command, and the jail holds
// what it is given. nil for any other tool, and for a call with none.
func (e *Engine) dangerLines(c *Call, d *described) []string {
	if d.dangerRead {
		return d.dangerous
	}
	d.dangerRead = true
	if c.ToolName != "Bash" || d.shell == nil {
		return nil
	}
	project := filepath.Clean(e.projectDir(c))
	stdin := present.StdinWarning("")
	seen := map[string]bool{}
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			d.dangerous = append(d.dangerous, l)
		}
	}
	for _, l := range d.danger(project) {
		if !strings.HasSuffix(l, stdin) {
			add(l)
		}
	}
	// The sketch of the parse the analysis made; a command it refused
	// before parsing (a control character) gets the parse DangerOf made.
	sk := d.shell.Sketch
	if sk == nil {
		cmd, _ := c.ToolInput["command"].(string)
		s, ok := shellparse.SketchOf(cmd)
		if !ok {
			return d.dangerous
		}
		sk = &s
	}
	eachCall(sk, 0, func(argv []string) bool {
		if len(argv) > 0 {
			if w := present.InsideDanger(argv, c.Cwd, project); w != "" {
				add(w)
			}
		}
		return len(d.dangerous) < 8
	})
	return d.dangerous
}

// dangerHeld holds a call a scoped grant would cover (granted names the
// grants: one, or one per part of a chain) because it carries a DANGER
// line; ok is false when it carries none and the grant decides it.
func (e *Engine) dangerHeld(ctx context.Context, c *Call, d *described, this string, granted []*token.Grant) (Decision, bool) {
	lines := e.dangerLines(c, d)
	if len(lines) == 0 || (c.ToolName == "Bash" && testknobs.On(testknobs.LooseAnalysis)) {
		return Decision{}, false
	}
	var names []string
	seen := map[string]bool{}
	for _, g := range granted {
		if g == nil || seen[g.ID()] {
			continue
		}
		seen[g.ID()] = true
		names = append(names, g.ID()+" ("+present.EscapeText(g.Scope)+")")
	}
	grants := "grant " + strings.Join(names, ", ")
	if len(names) > 1 {
		grants = "grants " + strings.Join(names, ", ")
	}
	detail := grants + " would cover " + this + ", but it carries a DANGER line (" + present.EscapeText(strings.Join(lines, "; ")) +
		"): a grant does not cover a DANGER call, whatever its rule; only an exact approval of this call does"
	switch {
	case e.Store.Withdrawn(c.SessionID, c.Agent(), c.ToolName, d.digest):
		detail += "; the approval of this exact call was withdrawn: calls that ran with no decision changed the project after it"
	case e.Store.Consumed(c.SessionID, c.Agent(), c.ToolName, d.digest):
		detail += "; the approval of this exact call was used already (approvals are single-use)"
	}
	return e.pending(ctx, c, d, ReasonDangerNotCovered, detail), true
}
