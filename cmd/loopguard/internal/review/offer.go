package review

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// What review offers to grant beside approving a call once (issue 36,
// item 6). g approves the call once and mints the narrowest rule for it
// (scope.Narrowest); for a chain of simple commands, the narrowest rule of
// each part that no grant covers yet (scope.NarrowestParts: the rules the
// hook judges a chain against, part by part, in the cwd an earlier cd
// moved to), each shown before the key is taken. w approves the call once
// and mints the rule one step wider than the command (scope.Wider:
// Bash(go test *) for go test -v ./...). Neither is offered for a call
// with a DANGER line, nor g for a chain with a DANGER part (present's
// ArgvDanger, which also reads the losses inside the project a jail lets
// through: git reset --hard), nor for a chain one part of which cannot be
// granted on its own. What is minted is exactly what was shown: the rules
// are worked out once, when the call is shown, and those are minted.

// grantOffer is what g and w offer for one call.
type grantOffer struct {
	rules []scope.Rule // g mints these, in order
	parts []offerPart  // a chain's parts, each with its rule or its grant
	err   error        // why g is not offered
	wider scope.Rule   // w mints it
	wErr  error        // why w is not offered
	// net is what n mints for a call that leaves the jail for the
	// network alone (network.go); netErr why n is not offered;
	// netNeeded, whether the call needs the network at all.
	net       scope.Rule
	netErr    error
	netNeeded bool
}

// offerPart is one part of a chain as g's offer shows it.
type offerPart struct {
	text    string // the part's words
	rule    string // the rule g mints for it; "" when a grant covers it
	covered string // the grant that covers it already: "grant ID: SCOPE"
}

// errChainWider: a chain gets no wider rule; its parts are granted with g.
var errChainWider = errors.New("a chain is granted part by part, with g")

// offerFor is review's offer for p, judged as OfferedRule judges a single
// rule (this terminal's PATH, the call's cwd and project) and against the
// grants of p's session and project in st at now.
func offerFor(st *state.Store, p *state.Pending, ge cli.GrantEnv, now time.Time) grantOffer {
	if hasDanger(p) {
		return grantOffer{err: ErrDangerRule, wErr: ErrDangerRule, netErr: ErrDangerRule}
	}
	c, env, err := scopeCall(p, ge)
	if err != nil {
		return grantOffer{err: err, wErr: err, netErr: err}
	}
	if sh := c.Shell; sh != nil && sh.Verdict == shellparse.Chained {
		if len(sh.Parts) == 0 {
			// Not simple commands joined by ;, &&, || or pipes: it is
			// approved whole, once.
			err := fmt.Errorf("%w: a chain is granted part by part only when each part is a simple command (%s)", scope.ErrNoNarrowRule, sh.Reason)
			return grantOffer{err: err, wErr: err}
		}
		o := chainOffer(st, p, c, env, now)
		o.wErr, o.netErr = errChainWider, errChainWider
		return o
	}
	var o grantOffer
	r, err := scope.Narrowest(c, env)
	if err != nil {
		o.err = err
	} else {
		o.rules = []scope.Rule{r}
	}
	if o.net, o.netNeeded, o.netErr = networkOffer(p, c, env); o.netNeeded && o.err == nil {
		o.err = errNeedsNetwork
	}
	danger := func(argv []string) bool { return len(present.ArgvDanger(argv, p.Cwd, p.ProjectDir)) > 0 }
	o.wider, o.wErr = scope.Wider(c, env, danger)
	if o.wErr == nil && o.err == nil && o.wider.String() == r.String() {
		o.wErr = errors.New("the exact rule is already the wider one")
	}
	return o
}

// chainOffer is g's offer for chain c: the narrowest rule of each part no
// grant covers yet, none when a part carries a DANGER line or cannot be
// granted on its own.
func chainOffer(st *state.Store, p *state.Pending, c scope.Call, env shellparse.Env, now time.Time) grantOffer {
	var o grantOffer
	seen := map[string]bool{}
	for i := range c.Shell.Parts {
		part := &c.Shell.Parts[i]
		text := scope.PartText(part)
		argv := make([]string, len(part.Argv))
		for j, w := range part.Argv {
			argv[j] = w.Value
		}
		if d := present.ArgvDanger(argv, part.Cwd, p.ProjectDir); len(d) > 0 {
			return grantOffer{err: fmt.Errorf("%w: the part `%s`: %s", ErrDangerRule, text, d[0])}
		}
		pc, penv := scope.Part(c, env, i)
		if cov := coveringGrant(st, p, pc, now); cov != "" {
			o.parts = append(o.parts, offerPart{text: text, covered: cov})
			continue
		}
		r, err := scope.Narrowest(pc, penv)
		if err != nil {
			return grantOffer{err: fmt.Errorf("the part `%s`: %w", text, err)}
		}
		o.parts = append(o.parts, offerPart{text: text, rule: r.String()})
		if !seen[r.String()] {
			seen[r.String()] = true
			o.rules = append(o.rules, r)
		}
	}
	if len(o.rules) == 0 {
		o.err = errors.New("every part is covered by a grant already")
	}
	return o
}

// coveringGrant names the stored grant that covers chain part pc for p's
// session (or project) and agent, "" for none: a grant that has not
// expired, whose rule parses, covers the part (scope.Match) and is not
// refused by today's policy (scope.Dangerous), as the hook would judge
// it. The MAC is not checked here: a grant this finds that the hook then
// refuses leaves the part uncovered, and the chain is held again (it
// fails closed). Another machine's call (p.Away) is judged against no
// grant.
func coveringGrant(st *state.Store, p *state.Pending, pc scope.Call, now time.Time) string {
	if st == nil || p.Away {
		return ""
	}
	grants, err := st.ScopedGrants(p.Session)
	if err != nil {
		return ""
	}
	if session, _ := GrantBinding(p); session != p.Session {
		bound, err := st.BoundGrants(session)
		if err != nil {
			return ""
		}
		grants = append(grants, bound...)
	}
	for _, gf := range grants {
		g := gf.Grant
		if gf.Err != nil || g == nil || !now.Before(g.Expiry) {
			continue
		}
		if g.Agent != p.Agent && g.Agent != token.Any && (p.AgentType == "" || g.Agent != "type:"+p.AgentType) {
			continue
		}
		r, err := scope.Parse(g.Scope)
		if err != nil || !r.CoversTool(p.Tool) || scope.Match(r, pc) != nil || scope.Dangerous(r, pc.Home) != nil {
			continue
		}
		return "grant " + g.ID() + ": " + g.Scope
	}
	return ""
}

// scopeCall is p as scope judges it: its input, cwd and project, and for
// Bash the command analysed with this terminal's PATH (a PATH that
// differs from the hook's pins another executable, and a rule minted
// then covers nothing: it fails closed).
func scopeCall(p *state.Pending, ge cli.GrantEnv) (scope.Call, shellparse.Env, error) {
	v, err := token.Decode(p.Descriptor)
	if err != nil {
		return scope.Call{}, shellparse.Env{}, err
	}
	m, _ := v.(map[string]any)
	in, _ := m["input"].(map[string]any)
	if in == nil {
		return scope.Call{}, shellparse.Env{}, scope.ErrNoNarrowRule
	}
	env := shellparse.Env{Cwd: p.Cwd, Path: ge.Path, ProjectDir: p.ProjectDir, Home: ge.Home, Trusted: ge.Trusted}
	session, _ := GrantBinding(p)
	c := scope.Call{Tool: p.Tool, Input: in, Cwd: p.Cwd, ProjectDir: p.ProjectDir, Home: ge.Home,
		// As the hook sees a call whose host named its project (the
		// calls a grant binds to the project: GrantBinding).
		ProjectNamed: session != p.Session}
	if p.Tool == "Bash" {
		cmd, _ := in["command"].(string)
		res := shellparse.Analyze(cmd, env)
		c.Shell = &res
	}
	return c, env, nil
}

// gKey is g's entry on the prompt, "" when g is not offered.
func (o grantOffer) gKey() string {
	switch {
	case o.err != nil:
		return ""
	case o.parts != nil:
		return fmt.Sprintf("[g]rant the %d rule(s) above", len(o.rules))
	}
	return "[g]rant " + present.EscapeText(o.rules[0].String())
}

// wKey is w's entry on the prompt, "" when w is not offered.
func (o grantOffer) wKey() string {
	if o.wErr != nil {
		return ""
	}
	return "[w]ider grant " + present.EscapeText(o.wider.String())
}

// partLines are the lines shown above a chain's prompt: each part, and
// the rule g mints for it or the grant that covers it already (the
// heading wrapped to width).
func (o grantOffer) partLines(width int) string {
	if o.err != nil || o.parts == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(wrapText("g approves this call once and grants, for each part of the chain:", width))
	for _, pt := range o.parts {
		if pt.rule == "" {
			fmt.Fprintf(&b, "  %s\n      covered by %s\n", present.EscapeText(pt.text), present.EscapeText(pt.covered))
		} else {
			fmt.Fprintf(&b, "  %s\n      grant %s\n", present.EscapeText(pt.text), present.EscapeText(pt.rule))
		}
	}
	return b.String()
}

// noGrantLine says why g offers nothing (err, from offerFor).
func noGrantLine(err error) string {
	if errors.Is(err, ErrDangerRule) && err != ErrDangerRule {
		return fmt.Sprintf("No rule is offered for a chain with a DANGER part (%s); approve it once with a.", present.EscapeText(strings.TrimPrefix(err.Error(), ErrDangerRule.Error()+": ")))
	}
	return noRuleLine(err)
}

// noWiderLine says why w offers nothing.
func noWiderLine(err error) string {
	if errors.Is(err, ErrDangerRule) {
		return "No wider rule is offered for a call with a DANGER line; approve it once with a."
	}
	return fmt.Sprintf("No wider rule is offered for this call (%s).", present.EscapeText(err.Error()))
}
