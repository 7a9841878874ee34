package hooks

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/token"
)

// Compound commands of granted parts. A chain of simple commands joined by
// ;, newlines, &&, || and pipes (shellparse gives its Parts, each judged in
// the cwd an earlier cd of the chain moved to) is allowed when a grant
// covers every part, and runs as the parts' canonical, confined forms
// joined by the same operators: each part through its own capability, a cd
// by the absolute directory it was judged to move to. Anything else in a
// chain (a substitution, a subshell, a function, a background job, an
// uncovered part) still needs an exact approval.

// scopedChain decides a chain: ok is false when it is not a chain the
// grants could cover, and the caller holds it as chained_command.
func (e *Engine) scopedChain(ctx context.Context, c *Call, d *described) (Decision, bool) {
	parts := d.shell.Parts
	grants, project, fail := e.grantsOf(ctx, c, d)
	if fail != nil {
		return *fail, true
	}
	rules := make([]scope.Rule, len(parts))
	var used []string
	var granted []*token.Grant
	var first *cover
	for i := range parts {
		p := &parts[i]
		cv := e.coverOne(ctx, c, grants, project, p, p.Cwd, func(rule scope.Rule) error {
			if !c.Rewrite && !p.Plain {
				return errNoRewrite
			}
			return nil
		})
		if cv.fail != nil {
			return *cv.fail, true
		}
		what := "the part `" + present.EscapeText(partText(p)) + "` of this chain"
		if cv.g == nil {
			if dec, ok := e.notCovered(ctx, c, d, cv, what); ok {
				return dec, true
			}
			if d.leaves != "" {
				return e.pending(ctx, c, d, ReasonLeavesJail, leavesMessage(d.leaves)), true
			}
			miss := ""
			if cv.miss != "" {
				miss = " (" + present.EscapeText(cv.miss) + ")"
			}
			return e.pending(ctx, c, d, ReasonChained, what+" is covered by no grant"+miss+". A chain runs without an approval only when a grant covers each of its parts; "+
				"run the covered commands one at a time, or ask the user to approve exactly this command"), true
		}
		rules[i] = cv.rule
		if first == nil {
			cv := cv
			first = &cv
		}
		used = append(used, cv.g.ID())
		granted = append(granted, cv.g)
	}
	if dec, held := e.dangerHeld(ctx, c, d, "every part of this chain", granted); held {
		return dec, true
	}
	updated, err := e.rewriteChain(c, d, rules)
	if err != nil {
		return e.pending(ctx, c, d, ReasonNotCanonical, present.EscapeText(err.Error())), true
	}
	widest, caps, confined := policy.Capability{}, map[string]bool{}, ""
	if (updated != nil || c.Wrapped) && e.Env.Launcher != "" {
		for i, r := range rules {
			if parts[i].Builtin {
				continue
			}
			caps[r.Capability().String()] = true
			widest = widest.Widen(r.Capability())
		}
		if len(caps) > 0 {
			confined = widest.String()
		}
	}
	if c.Wrapped && !c.Rewrite && len(caps) > 1 {
		// The wrapper runs the chain whole under one capability: the
		// widest would give one part another's rights (a test runner
		// another part's network).
		return e.pending(ctx, c, d, ReasonChained, "the parts of this chain are granted different capabilities ("+strings.Join(sortedKeys(caps), ", ")+
			"), and this agent runs a chain whole, under one. Run the parts one at a time, or ask the user to approve exactly this command"), true
	}
	dec := e.allowedAs(c, d, ReasonScopedGrant, first.g, fmt.Sprintf("granted by %s: every part of the chain is covered (grants %s)", first.g.Principal, strings.Join(dedupe(used), ", ")), updated, confined)
	if len(caps) > 0 {
		dec.Capability = strings.Join(sortedKeys(caps), ",")
		dec.Context = e.jailContext(c, widest, true)
	}
	return dec, true
}

// rewriteChain is the input that runs the chain as analysed, or nil for a
// host that runs the model's own (plain) text.
func (e *Engine) rewriteChain(c *Call, d *described, rules []scope.Rule) (map[string]any, error) {
	if testknobs.On(testknobs.NoRewrite) || !c.Rewrite {
		return nil, nil
	}
	index := map[*shellparse.Result]int{}
	for i := range d.shell.Parts {
		index[&d.shell.Parts[i]] = i
	}
	cmd, err := d.shell.CanonicalChain(func(p *shellparse.Result) (string, error) {
		return e.launchCommand(c, p, rules[index[p]])
	})
	if err != nil {
		return nil, err
	}
	return withCommand(c.ToolInput, cmd), nil
}

// partText is one part of a chain as words, for messages.
func partText(p *shellparse.Result) string {
	var w []string
	for _, a := range p.Argv {
		w = append(w, a.Value)
	}
	return strings.Join(w, " ")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
