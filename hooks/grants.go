package hooks

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// fetchApproval brings an approval made on another machine into the store:
// the grant file ExactGrant then finds, or the refusal pending() reports.
// Only a token for this very call is taken, and not the one this machine
// used already (an approver may approve the call again once it ran: the
// new approval is a new grant); anything else is as if absent.
func (e *Engine) fetchApproval(ctx context.Context, c *Call, d *described) (state.GrantFile, error) {
	session, agent, tool := c.SessionID, c.Agent(), c.ToolName
	id := state.PendingID(session, agent, tool, d.digest)
	tok, deniedBy, at, err := e.Custody.Fetch(ctx, id)
	if err != nil {
		return state.GrantFile{}, err
	}
	if deniedBy != "" {
		if p, err := e.Store.GetPending(id); err == nil && p.Status != state.StatusDenied {
			_ = e.Store.Decide(id, state.StatusDenied, deniedBy, "", e.now())
		}
		return state.GrantFile{}, state.ErrNotFound
	}
	g, err := token.Parse(tok)
	if tok == "" || err != nil || !g.Exact() || g.Session != session || g.Agent != agent || g.Tool != tool || g.ArgHash != d.digest {
		return state.GrantFile{}, state.ErrNotFound
	}
	if used, _, err := e.Store.ConsumedGrant(session, agent, tool, d.digest); err == nil && used.Grant != nil && used.Grant.ID() == g.ID() {
		return state.GrantFile{}, state.ErrNotFound
	}
	// What the approver was shown of the project is the record as it was
	// published (its warning computed when the call was held): the version
	// the approval says it saw (at), never later than the record held here
	// now. A repeat publishes the record again with a later Seen, with the
	// same words when the change was to a file they named already (the
	// ninety-fourth attack run): an approval that does not say which
	// version it saw is dated at the first (Created). With no record here,
	// nothing of the project was shown: any change the stores keep holds
	// the call again (ChangedAfter).
	shown := time.Unix(0, 0).UTC()
	if p, err := e.Store.GetPending(id); err == nil && !p.Seen.IsZero() {
		shown = p.Seen
		if at.IsZero() && !p.Created.IsZero() && p.Created.Before(shown) {
			shown = p.Created
		}
	}
	if !at.IsZero() && at.Before(shown) {
		shown = at.UTC()
	}
	if _, err := e.Store.PutGrant(g, state.GrantRecord{Pending: id, CallDigest: d.callDigest, AgentType: c.AgentType, Created: e.now().UTC(),
		Shown: shown, Resembles: retryKeys(d.canonical)}); err != nil {
		return state.GrantFile{}, err
	}
	return e.Store.ExactGrant(session, agent, tool, d.digest)
}

// approvedCall is the pending record of the call an exact grant approved,
// or nil when it is gone or does not hold what the grant covers.
func (e *Engine) approvedCall(o state.GrantFile) *state.Pending {
	if o.Record.Pending == "" {
		return nil
	}
	p, err := e.Store.GetPending(o.Record.Pending)
	if err != nil || p.Digest != o.Grant.ArgHash {
		return nil
	}
	return p
}

// approvedRecord is approvedCall's id, "" when there is none.
func (e *Engine) approvedRecord(o state.GrantFile) string {
	if p := e.approvedCall(o); p != nil {
		return p.ID
	}
	return ""
}

// elsewhere says when a live scoped grant's rule covers the call but the
// grant is bound to the project's previous session (a grant minted with
// --session before Claude Code restarted, say); "" when there is none. It
// reads only that one session's grants, on the way to a deny, so a deny
// costs the same with 100,000 grants as with none: a hint, never a decision.
func (e *Engine) elsewhere(c *Call, d *described) string {
	last, err := e.Store.LastSession(e.projectDir(c))
	if err != nil || last.Session == c.SessionID {
		return ""
	}
	all, err := e.Store.BoundGrants(last.Session)
	if err != nil {
		return ""
	}
	sc := scope.Call{Tool: c.ToolName, Input: c.ToolInput, Cwd: c.Cwd, ProjectDir: e.projectDir(c), ProjectNamed: e.namedProject(c) != "", Home: e.Env.Home, Shell: d.shell}
	for _, gf := range all {
		g := gf.Grant
		if gf.Err != nil || g == nil || g.Exact() || !e.now().Before(g.Expiry) || g.Session == token.Any || g.Session == c.SessionID {
			continue
		}
		if g.Agent != c.Agent() && g.Agent != token.Any && (c.AgentType == "" || g.Agent != "type:"+c.AgentType) {
			continue
		}
		rule, err := scope.Parse(g.Scope)
		if err != nil || !rule.CoversTool(c.ToolName) || scope.Match(rule, sc) != nil {
			continue
		}
		where := "session " + g.Session
		if dir, ok := token.ProjectOf(g.Session); ok {
			if named := e.namedProject(c); named != "" && token.ProjectSession(named) == g.Session {
				continue // this project's: it did not cover the call for another reason
			}
			where = "the project " + dir
		}
		return "; grant " + g.ID() + " (" + present.EscapeText(g.Scope) + ") would cover it but is bound to " + present.EscapeText(where) +
			", not this session (" + present.EscapeText(c.SessionID) + "); the user can grant it again here (loopguard grant binds to the project by default)"
	}
	return ""
}

// exact looks for an exact grant for d; found is false when there is none.
func (e *Engine) exact(ctx context.Context, c *Call, d *described) (Decision, bool) {
	session, agent, tool := c.SessionID, c.Agent(), c.ToolName
	gf, err := e.Store.ExactGrant(session, agent, tool, d.digest)
	if errors.Is(err, state.ErrNotFound) && e.Custody != nil {
		// Approved on another machine?
		gf, err = e.fetchApproval(ctx, c, d)
		if f := e.custodyFailure(err); f != nil {
			return *f, true
		}
	}
	if errors.Is(err, state.ErrNotFound) {
		return Decision{}, false
	}
	if err != nil {
		return e.fail(ReasonInternal, err), true
	}
	if gf.Err != nil {
		return denied(ReasonGrantInvalid, "the grant file for this call is corrupt; the user should revoke it and approve again"), true
	}
	verify, err := e.verifier(ctx)
	if err != nil {
		return e.fail(ReasonKeyring, err), true
	}
	err = verify(gf.Grant, token.Call{Session: session, Agent: agent, Tool: tool, Digest: d.digest}, e.now())
	if f := e.custodyFailure(err); f != nil {
		return *f, true
	}
	switch {
	case errors.Is(err, token.ErrExpired):
		return e.pending(ctx, c, d, ReasonExpired, "the approval for this call expired at "+present.FormatTime(gf.Grant.Expiry)), true
	case err != nil:
		return denied(ReasonGrantInvalid, "the grant for this call does not verify ("+err.Error()+"); it was tampered with or minted under another key"), true
	}
	// The approval covers the call on the project as its approver was
	// shown it: what calls with no decision (jailed, the file tools)
	// changed there since holds it again, for the approver to see.
	// The approval is withdrawn, and the call needs a new decision: spent
	// in Vault (its approvers may then decide the call, published again,
	// anew) and on this machine (the same approval, fetched again, is not
	// taken again).
	if w := e.changedAfterApproval(c, d, gf.Record); w != "" {
		if e.Custody != nil {
			if err := e.Custody.Claim(ctx, gf.Grant); err != nil && !errors.Is(err, state.ErrClaimed) {
				if f := e.custodyFailure(err); f != nil {
					return *f, true
				}
				return e.fail(ReasonInternal, err), true
			}
		}
		if err := e.Store.WithdrawExact(session, agent, tool, d.digest); err != nil && !errors.Is(err, state.ErrClaimed) {
			return e.fail(ReasonInternal, err), true
		}
		return e.pending(ctx, c, d, ReasonChangedAfterApproval, w), true
	}
	if e.Custody != nil {
		// Single use across every machine first; then this machine's record.
		switch err := e.Custody.Claim(ctx, gf.Grant); {
		case errors.Is(err, state.ErrClaimed):
			return e.pending(ctx, c, d, ReasonConsumed, "the approval for this exact call was already used, on this machine or another (approvals are single-use)"), true
		case err != nil:
			if f := e.custodyFailure(err); f != nil {
				return *f, true
			}
			return e.fail(ReasonInternal, err), true
		}
	}
	switch err := e.Store.ClaimExact(session, agent, tool, d.digest); {
	case errors.Is(err, state.ErrClaimed):
		return e.pending(ctx, c, d, ReasonConsumed, "the approval for this exact call was already used (approvals are single-use)"), true
	case err != nil:
		return e.fail(ReasonInternal, err), true
	}
	what := "approved by " + gf.Grant.Principal + " for this exact call"
	if updated, cp, ok := e.typedIntoJailed(c, d); ok {
		dec := e.allowedAs(c, d, ReasonExactGrant, gf.Grant, what+"; what is typed into it later reaches no hook, so it runs in the jail", updated, cp.String())
		dec.Capability = cp.String()
		dec.Context = e.jailContext(c, cp, true)
		return dec, true
	}
	return e.exactAllowed(ctx, c, d, gf.Grant), true
}

// changedAfterApproval is ChangedAfter of c's project (and the places it
// reaches: relatedPlaces, as of now) since the approval rec records, ""
// where the call names no project (the planted warning's condition:
// nothing was shown either).
func (e *Engine) changedAfterApproval(c *Call, d *described, rec state.GrantRecord) string {
	if e.Env.StateDir == "" || e.namedProject(c) == "" {
		return ""
	}
	project := filepath.Clean(e.projectDir(c))
	return ChangedAfter(e.Env.StateDir, project, rec.ApprovedAt(), e.relatedPlaces(c, d, project))
}

// typedIntoJailed is an exactly approved call rewritten to run in the jail
// when its host lets the model type into a running command with no hook
// seeing what it types (Codex's write_stdin) and a program in the command
// reads commands from its standard input (the warning the human was shown,
// present.StdinWarning, through wrappers and in any part of a chain): the
// human approved the program, not what is typed into it later, so that
// runs confined. ok is false where the jail does not apply; then the call
// runs as approved, and the warning the human saw said so.
func (e *Engine) typedIntoJailed(c *Call, d *described) (map[string]any, policy.Capability, bool) {
	if !c.TypesLater || d.shell == nil {
		return nil, policy.Capability{}, false
	}
	stdin, reads := present.StdinWarning(""), false
	for _, l := range d.danger(filepath.Clean(e.projectDir(c))) {
		reads = reads || strings.HasSuffix(l, stdin)
	}
	if !reads {
		return nil, policy.Capability{}, false
	}
	updated, cp, why := e.jailLaunch(c)
	return updated, cp, why == ""
}

// afterOwnAllow answers a PermissionRequest that follows loopguard's own
// allow of this call (justConsumed, justRewritten); ok is false for every
// other call.
func (e *Engine) afterOwnAllow(ctx context.Context, c *Call, d *described) (Decision, bool) {
	if c.Event != PermissionRequest {
		return Decision{}, false
	}
	if dec, ok := e.justConsumed(ctx, c, d); ok {
		return dec, true
	}
	return e.justRewritten(c, d)
}

// justConsumed allows a PermissionRequest for a call whose exact grant the
// PreToolUse hook consumed in the last two minutes; the consumed token is
// verified again, so only a real grant for this call counts.
func (e *Engine) justConsumed(ctx context.Context, c *Call, d *described) (Decision, bool) {
	gf, at, err := e.Store.ConsumedGrant(c.SessionID, c.Agent(), c.ToolName, d.digest)
	if err != nil || e.now().Sub(at) > 2*time.Minute {
		return Decision{}, false
	}
	verify, err := e.verifier(ctx)
	if err != nil {
		return e.fail(ReasonKeyring, err), true
	}
	// The grant may have expired since it was consumed; check it as of then.
	if err := verify(gf.Grant, token.Call{Session: c.SessionID, Agent: c.Agent(), Tool: c.ToolName, Digest: d.digest}, at); err != nil {
		if f := e.custodyFailure(err); f != nil {
			return *f, true
		}
		return Decision{}, false
	}
	return Decision{Behavior: Allow, Reason: ReasonExactGrant, Grant: gf.Grant.ID(), Principal: gf.Grant.Principal,
		Message: "loopguard: approved by " + gf.Grant.Principal + " for this exact call (grant " + gf.Grant.ID() + ")"}, true
}

// justRewritten allows a PermissionRequest for the very command loopguard
// rewrote an allowed call into moments ago (Codex asks its permission
// about the input the PreToolUse hook's updatedInput gave it): the
// rewrite is loopguard's own output, never the model's, and it was
// allowed already. A model that sends that text itself is refused at
// PreToolUse (the launcher is the guard's binary), which a
// PermissionRequest allow cannot override.
func (e *Engine) justRewritten(c *Call, d *described) (Decision, bool) {
	a, err := e.Store.RanAllowed(c.SessionID, d.callDigest)
	if err != nil || a.Agent != c.Agent() || a.Tool != c.ToolName || a.CallDigest == a.Digest || e.now().Sub(a.Time) > 2*time.Minute {
		return Decision{}, false
	}
	return Decision{Behavior: Allow, Reason: ReasonScopedGrant, Grant: a.Grant, Principal: a.Principal,
		Message: "loopguard: the command loopguard rewrote this call into, allowed by grant " + a.Grant + " (" + a.Principal + ")"}, true
}

// scoped looks for a scoped grant covering the call.
func (e *Engine) scoped(ctx context.Context, c *Call, d *described) (Decision, bool) {
	grants, project, fail := e.grantsOf(ctx, c, d)
	if fail != nil {
		return *fail, true
	}
	var updated map[string]any
	var rewriteErr error
	cv := e.coverOne(ctx, c, grants, project, d.shell, c.Cwd, func(rule scope.Rule) error {
		if c.ToolName != "Bash" {
			return nil
		}
		updated, rewriteErr = e.rewrite(c, d, rule)
		return rewriteErr
	})
	if cv.fail != nil {
		return *cv.fail, true
	}
	if cv.g != nil {
		if dec, held := e.dangerHeld(ctx, c, d, "this call", []*token.Grant{cv.g}); held {
			return dec, true
		}
		confined := ""
		if updated != nil || c.Wrapped {
			confined = e.capabilityOf(c, d, cv.rule)
		}
		what := "granted by " + cv.g.Principal + " as " + cv.g.Scope
		switch {
		case c.ToolName != "Bash" || c.Rewrite:
		case c.Wrapped && confined != "":
			what += "; it runs as written through loopguard's wrapper, confined by the kernel (" + confined + ")"
		default:
			// issue 37: the grant screen names such agents too.
			what += "; it runs as written, unconfined: this agent runs the model's own command text, not loopguard's confined rewrite"
		}
		dec := e.allowedAs(c, d, ReasonScopedGrant, cv.g, what, updated, confined)
		if updated != nil || confined != "" {
			dec.Capability = confined
			dec.Context = e.jailContext(c, cv.rule.Capability(), confined != "")
		}
		return dec, true
	}
	d.miss = cv.miss
	return e.notCovered(ctx, c, d, cv, "")
}

// grantsOf is scopedGrants read once per call and kept in d: the jail, a
// chain and the scope each ask for them, and each asking read and decoded
// every grant file of the session again (hookbench's state of 10,000
// grants: the jail's read alone was 7% of a no-grant deny's CPU samples).
func (e *Engine) grantsOf(ctx context.Context, c *Call, d *described) ([]state.GrantFile, string, *Decision) {
	if !d.grantsRead {
		d.grants, d.grantsProject, d.grantsFail = e.scopedGrants(ctx, c)
		d.grantsRead = true
	}
	return d.grants, d.grantsProject, d.grantsFail
}

// scopedGrants loads the live scoped grants that may cover the call: the
// session's and the project's, or the custody's. Grants bound to the
// project (every session started there) count only where the agent's host
// names the project (CLAUDE_PROJECT_DIR), never the payload's cwd, which
// follows the agent's cd.
func (e *Engine) scopedGrants(ctx context.Context, c *Call) ([]state.GrantFile, string, *Decision) {
	project := ""
	if named := e.namedProject(c); named != "" {
		project = token.ProjectSession(named)
	}
	var grants []state.GrantFile
	var err error
	if e.Custody != nil {
		grants, err = e.Custody.ScopedGrants(ctx, c.SessionID, project)
		if f := e.custodyFailure(err); f != nil {
			return nil, "", f
		}
		if err != nil {
			d := e.fail(ReasonInternal, err)
			return nil, "", &d
		}
		return grants, project, nil
	}
	if grants, err = e.Store.ScopedGrants(c.SessionID); err != nil {
		d := e.fail(ReasonInternal, err)
		return nil, "", &d
	}
	if project != "" {
		pg, err := e.Store.BoundGrants(project)
		if err != nil {
			d := e.fail(ReasonInternal, err)
			return nil, "", &d
		}
		grants = append(grants, pg...)
	}
	return grants, project, nil
}

// cover is what the search for a grant covering one command found: the
// grant and its rule, or why none does.
type cover struct {
	g    *token.Grant
	rule scope.Rule
	// fail is a failure to decide (the keyring, the custody).
	fail *Decision
	// A grant that would cover the call but is refused by today's policy,
	// does not verify, has expired, or would cover it but for what is on
	// disk now (a replaced executable, another repository) or for how the
	// host runs it (not_canonical).
	refused, invalid, expired, near *token.Grant
	refusedWhy                      error
	nearWhy                         *scope.MatchError
	// miss says which word of the call the nearest rule (the one naming
	// the most words, all matched) does not cover, and why
	// (scope.NearMiss); missNear is how many words that rule names.
	miss     string
	missNear int
}

// coverOne looks for a grant that covers the call as shell (a Bash
// command, or one part of a chain, judged in cwd) describes it, and that
// verifies; runnable, when set, says whether the covered command can run
// under the rule (the canonical rewrite).
func (e *Engine) coverOne(ctx context.Context, c *Call, grants []state.GrantFile, project string, shell *shellparse.Result, cwd string, runnable func(scope.Rule) error) cover {
	if c.Rewrite {
		shell = literalGlobs(shell)
	}
	sc := scope.Call{Tool: c.ToolName, Input: c.ToolInput, Cwd: cwd, ProjectDir: e.projectDir(c), ProjectNamed: e.namedProject(c) != "", Home: e.Env.Home, Shell: shell,
		ExeDigest: e.Store.ExeDigest, Confined: c.ToolName == "Bash" && c.Rewrite && e.Env.Launcher != "" && shell != nil && !shell.Builtin}
	var cv cover
	for _, gf := range grants {
		g := gf.Grant
		if gf.Err != nil {
			continue
		}
		agent := c.Agent()
		switch {
		case g.Agent == agent, g.Agent == token.Any:
		case c.AgentType != "" && g.Agent == "type:"+c.AgentType:
			// Bound to subagents of one type; the MAC covers "type:NAME".
			agent = g.Agent
		default:
			continue
		}
		rule, err := scope.Parse(g.Scope)
		if err != nil || !rule.CoversTool(c.ToolName) {
			continue
		}
		if err := e.match(rule, sc); err != nil {
			var me *scope.MatchError
			if !errors.As(err, &me) {
				continue
			}
			if cv.near == nil && (me.Code == scope.ReasonContentChanged || me.Code == scope.ReasonRepositoryNotCovered) {
				cv.near, cv.nearWhy = g, me
			}
			if me.Word != "" && me.Near > cv.missNear {
				cv.miss, cv.missNear = scope.NearMiss(rule, me), me.Near
			}
			continue
		}
		// Re-checked against today's policy, whoever minted it.
		if err := scope.Dangerous(rule, e.Env.Home); err != nil {
			cv.refused, cv.refusedWhy = g, err
			continue
		}
		// A program that reads commands from its standard input: a scope
		// covers the program's start, never what is typed into it.
		if why := readsCommands(shell); why != "" {
			if cv.near == nil {
				cv.near, cv.nearWhy = g, &scope.MatchError{Code: ReasonInteractive, Detail: why +
					"; no scope covers a program that runs commands, only an exact approval, shown to the user with a warning"}
			}
			continue
		}
		if runnable != nil {
			if err := runnable(rule); err != nil {
				if cv.near == nil {
					cv.near, cv.nearWhy = g, &scope.MatchError{Code: ReasonNotCanonical, Detail: err.Error()}
				}
				continue
			}
		}
		verify, err := e.verifier(ctx)
		if err != nil {
			d := e.fail(ReasonKeyring, err)
			cv.fail = &d
			return cv
		}
		session := c.SessionID
		if project != "" && g.Session == project {
			session = project
		}
		err = verify(g, token.Call{Session: session, Agent: agent, Tool: g.Tool}, e.now())
		if f := e.custodyFailure(err); f != nil {
			cv.fail = f
			return cv
		}
		switch {
		case err == nil:
			cv.g, cv.rule = g, rule
			return cv
		case errors.Is(err, token.ErrExpired):
			cv.expired = g
		default:
			cv.invalid = g
		}
	}
	return cv
}

// notCovered decides a call no grant covered, from why not; what names
// the part of a chain it is about ("" for the whole call). found is false
// when nothing came close: the caller goes on.
func (e *Engine) notCovered(ctx context.Context, c *Call, d *described, cv cover, what string) (Decision, bool) {
	this := "this call"
	if what != "" {
		this = what
	}
	switch {
	case cv.refused != nil:
		return denied(ReasonGrantInvalid, "grant "+cv.refused.ID()+" would cover "+this+" but its rule is refused by the current policy ("+cv.refusedWhy.Error()+")"), true
	case cv.invalid != nil:
		return denied(ReasonGrantInvalid, "grant "+cv.invalid.ID()+" would cover "+this+" but does not verify; it was tampered with or minted under another key"), true
	case cv.expired != nil:
		return e.pending(ctx, c, d, ReasonExpired, "grant "+cv.expired.Scope+" covered "+this+" but expired at "+present.FormatTime(cv.expired.Expiry)), true
	case cv.near != nil:
		return e.pending(ctx, c, d, cv.nearWhy.Code, "grant "+cv.near.ID()+" ("+present.EscapeText(cv.near.Scope)+") would cover "+this+", but "+present.EscapeText(cv.nearWhy.Detail)), true
	}
	return Decision{}, false
}

func (e *Engine) allowed(c *Call, d *described, reason string, g *token.Grant, what string) Decision {
	return e.allowedAs(c, d, reason, g, what, nil, "")
}

// allowedAs allows the call, to run as updated when that is not nil: the
// record PostToolUse checks is then the digest of what will run, and
// confined the capability it runs confined to ("" unconfined; a chain's
// widest), against which PostToolUse reads a refusal in its result.
func (e *Engine) allowedAs(c *Call, d *described, reason string, g *token.Grant, what string, updated map[string]any, confined string) Decision {
	rewritten := updated != nil
	updated, err := pinnedBash(c, updated)
	if err != nil {
		return denied(ReasonInternal, err.Error())
	}
	callDigest := d.callDigest
	ran := ""
	if updated != nil {
		rc := *c
		rc.ToolInput = updated
		if rd, err := e.describe(&rc); err == nil {
			callDigest, ran = rd.callDigest, rd.digest
		}
	}
	what += e.howItRuns(c, d, reason, rewritten, confined)
	err = e.Store.NoteAllowed(state.Allowed{
		Session: c.SessionID, Agent: c.Agent(), Tool: c.ToolName, ToolUseID: c.ToolUseID,
		Digest: d.digest, CallDigest: callDigest, Grant: g.ID(), Principal: g.Principal, Time: e.now().UTC(), Cwd: c.Cwd,
		Capability: confined, Package: d.pkgPin,
	}, updated != nil)
	if err != nil && d.pkgPin != nil {
		// The check after the call is what holds the package.json's
		// hook-run entries (post): without its note the call does not
		// run (the eighty-first attack run).
		return denied(ReasonExecConfig, "it would change "+present.EscapeText(d.pkgPin.Path)+", whose entries the project's git hooks run, and loopguard cannot keep what its check after the call needs ("+
			present.EscapeText(err.Error())+"): not run; retry once the state directory can be written")
	}
	return Decision{Behavior: Allow, Reason: reason, Grant: g.ID(), Principal: g.Principal,
		Message: "loopguard: " + what + " (grant " + g.ID() + ")", UpdatedInput: updated, ranDigest: ran}
}

// readsCommands says when a simple command's program runs commands no
// analysis of its words sees (policy.RunsCommands: it reads them from its
// standard input, or its own commands have a shell escape), "" when not or
// for anything but a simple command, judged by the name written and the
// program it resolves to.
func readsCommands(res *shellparse.Result) string {
	if res == nil || res.Verdict != shellparse.Simple || len(res.Argv) == 0 {
		return ""
	}
	argv := make([]string, len(res.Argv))
	for i, w := range res.Argv {
		argv[i] = w.Value
	}
	if why := policy.RunsCommands(argv); why != "" {
		return why
	}
	if res.Executable != "" {
		argv[0] = res.Executable
		return policy.RunsCommands(argv)
	}
	return ""
}
