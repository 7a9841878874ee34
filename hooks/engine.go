package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
	"github.com/loopguard/loopguard/undo"
)

// Engine decides. Its zero value is not usable: set Store, Audit, LoadKey.
type Engine struct {
	Store   *state.Store
	Audit   *audit.Log
	LoadKey func(context.Context) ([]byte, error)
	Now     func() time.Time
	Env     Env
	Mode    string
	// Wait holds a call without a grant until a human decides, at most this
	// long (and never past the context's deadline).
	Wait time.Duration
	// PollInterval is how often a waiting hook looks for a decision.
	PollInterval time.Duration
	// OnHeld, when set, is told each time the hook starts holding a call for
	// a human (wait mode), to notify them. It must return at once: it runs
	// on the hook's path; its work belongs in the background.
	OnHeld func(p *state.Pending)
	// Abandoned, when set, is closed or sent to when the agent's client
	// stops waiting for the hook (it signals the hook process): a held
	// call is then let go at once, and recorded as held_abandoned.
	Abandoned <-chan os.Signal
	// Custody, when set, keeps the key elsewhere (Vault): it verifies grants
	// in place of LoadKey's key, and claims single-use grants across
	// machines.
	Custody Custody
	// Progress, when set, is shared with the run's deadline (progress.go).
	Progress *Progress
	// Registration names the hook registration this process runs for (its
	// agent, event and mode as registered). Another registration asked
	// about a call this one answered answers the same (answer.go); ""
	// turns that off.
	Registration string

	keyOnce sync.Once
	// keyDone is set once keyOnce's read has ended: only then may a path
	// that does not wait for the key (an audit entry) look at sealKey.
	keyDone atomic.Bool
	keys    *token.Keys
	sealKey []byte
	errKey  error
}

// Custody is a key that is not on this machine (backend/vault). Its
// failures to answer carry a reason code (an error with a Reason() string
// method); the engine denies with it.
type Custody interface {
	Verify(ctx context.Context, g *token.Grant, call token.Call, now time.Time) error
	// Claim marks the single-use grant g used; an error that is
	// state.ErrClaimed when a hook anywhere already did.
	Claim(ctx context.Context, g *token.Grant) error
	// Publish shows a pending call to approvers on other machines.
	Publish(ctx context.Context, p *state.Pending) error
	// Fetch returns an approver's answer for pending id: a grant token, or
	// who refused the call; both "" when there is none yet. shown is the
	// Seen of the published record the approver was shown (zero: not
	// said).
	Fetch(ctx context.Context, id string) (tok, deniedBy string, shown time.Time, err error)
	// ScopedGrants returns the live scoped grants bound to any of
	// sessions or to every session. With a custody they come from it
	// only, never from this machine's disk: a grant revoked there is gone
	// everywhere, whatever copies exist.
	ScopedGrants(ctx context.Context, sessions ...string) ([]state.GrantFile, error)
}

// verifier returns what checks grants: the custody, or the keyring's key.
func (e *Engine) verifier(ctx context.Context) (func(*token.Grant, token.Call, time.Time) error, error) {
	if e.Custody != nil {
		return func(g *token.Grant, call token.Call, now time.Time) error {
			return e.Custody.Verify(ctx, g, call, now)
		}, nil
	}
	keys, err := e.loadKeys(ctx)
	if err != nil {
		return nil, err
	}
	return keys.Verify, nil
}

// custodyFailure is the deny for a custody that gave no answer, or nil
// when err is about the grant itself.
func (e *Engine) custodyFailure(err error) *Decision {
	var r interface{ Reason() string }
	if errors.As(err, &r) && r.Reason() != "" {
		d := e.fail(r.Reason(), err)
		return &d
	}
	return nil
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// loadKeys reads the master key once, only when a grant must be verified.
func (e *Engine) loadKeys(ctx context.Context) (*token.Keys, error) {
	e.keyOnce.Do(func() {
		defer e.keyDone.Store(true)
		master, err := e.LoadKey(ctx)
		if err != nil {
			e.errKey = err
			return
		}
		e.keys, e.sealKey, e.errKey = token.DeriveKeys(master)
		clear(master)
	})
	return e.keys, e.errKey
}

// keyAhead starts reading the key in the background for a call that may
// need it: a Bash call the host lets loopguard rewrite, with a launcher and
// a scoped grant on disk that could cover it (mayCover: the jail grant, or
// a rule whose program the command names), which the jail or a scoped
// grant allows after a MAC check. The read (a D-Bus round trip to the
// keyring) then overlaps the call's analysis instead of following it. A
// call that ends denied does not wait for it, and its answer does not
// depend on it: the key is used only where the path without the read-ahead
// would read it (loadKeys, once per process), and a keyring failure denies
// only there. With a custody (Vault) there is no key to read.
//
// The grants it reads to decide are the call's (scopedGrants: the
// session's, every session's and the project's, where init binds the jail
// grant), kept for the jail, a chain and the scope (grantsOf), which would
// read them anyway: a call no grant can cover does not pay for a key read
// it cannot use (about 1 ms of CPU in a hook process that exits before the
// read ends).
func (e *Engine) keyAhead(ctx context.Context, c *Call) *grantsAhead {
	if !readKeyAhead || e.Custody != nil || e.LoadKey == nil || c.ToolName != "Bash" || !c.Rewrite || e.Env.Launcher == "" || e.Store == nil {
		return nil
	}
	g := &grantsAhead{}
	g.grants, g.project, g.fail = e.scopedGrants(ctx, c)
	if g.fail != nil || len(g.grants) == 0 || !mayCover(g.grants, c) {
		return g
	}
	keyAheadStarted()
	go func() { _, _ = e.loadKeys(ctx) }()
	return g
}

// grantsAhead are the scoped grants keyAhead read, for grantsOf.
type grantsAhead struct {
	grants  []state.GrantFile
	project string
	fail    *Decision
}

// keep gives d the grants read ahead (nil: none were).
func (g *grantsAhead) keep(d *described) {
	if g == nil || d == nil {
		return
	}
	d.grants, d.grantsProject, d.grantsFail, d.grantsRead = g.grants, g.project, g.fail, true
}

// mayCover reports whether one of grants could cover the Bash call c, from
// what is cheap: the jail grant covers any command; a Bash rule only one
// whose program's name is in the command's text, its quotes and
// backslashes taken out (g'o' is go); a rule whose program is not a plain
// word, any. It only chooses whether the key is read ahead: a call it
// misses reads the key where it is needed, as without a read ahead.
func mayCover(grants []state.GrantFile, c *Call) bool {
	cmd, _ := c.ToolInput["command"].(string)
	var text string
	for _, gf := range grants {
		if gf.Err != nil || gf.Grant == nil {
			continue
		}
		rule, err := scope.Parse(gf.Grant.Scope)
		if err != nil || !rule.CoversTool("Bash") {
			continue
		}
		prog := rule.Program()
		if rule.IsJail() || prog == "" {
			return true
		}
		if text == "" {
			text = strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(cmd)
		}
		if strings.Contains(text, path.Base(prog)) {
			return true
		}
	}
	return false
}

// keyAheadStarted is told each time keyAhead starts a read (a test's
// witness; nothing otherwise).
var keyAheadStarted = func() {}

// readKeyAhead turns keyAhead on (a test compares the decisions without it).
var readKeyAhead = true

// Decide answers one call and appends the decision to the audit log.
func (e *Engine) Decide(ctx context.Context, c *Call) Decision {
	var d Decision
	switch c.Event {
	case PreToolUse, PermissionRequest:
		d = e.decideCall(ctx, c)
	case PostToolUse, PostToolUseFailure:
		d = e.post(c)
	default:
		d = Decision{Behavior: Abstain, Reason: ReasonUnknownEvent}
	}
	mode := e.Mode
	if mode == "" {
		mode = ModeEnforce
	}
	enforced := d
	switch {
	case mode == ModeAudit && !after(c.Event):
		d = Decision{Behavior: Abstain, Reason: d.Reason, Digest: d.Digest, Pending: d.Pending}
	case mode == ModeAsk && d.Behavior == Deny && askable(d.Reason):
		d.Behavior = Ask
		why := d.why
		if why == "" {
			why = d.Message
		}
		d.forAgent = "loopguard (ask mode): " + strings.TrimPrefix(why, "loopguard: ")
		d.Message = d.forAgent + "\n\n" + d.rendering
	}
	entry := audit.Entry{
		Time: e.now().UTC(), Event: c.Event, Session: c.SessionID, Agent: c.Agent(),
		AgentType: c.AgentType, Tool: c.ToolName, Digest: d.Digest, Decision: enforced.Behavior,
		Reason: d.Reason, Grant: d.Grant, Pending: d.Pending, Principal: d.Principal, Mode: mode,
		Summary: enforced.summary, Told: Told(d),
	}
	if mode == ModeAudit && enforced.Behavior != d.Behavior {
		entry.Detail = "audit mode: abstained"
	}
	if enforced.replayed {
		entry.Detail = "the answer loopguard gave this very call through another of its registrations (one decision per call)"
	}
	if d.Reason == ReasonReadOnly {
		// The read-only fast path writes nothing: it is on almost every
		// step of an agent, and lets through only what Claude Code's own
		// permissions decide.
		return d
	}
	if e.Progress.answeredBy() != nil {
		// The run's deadline answered, and recorded its answer: this
		// decision reached nobody.
		return d
	}
	// Allows and alarms are on disk before the answer; a lost deny or
	// abstention costs a retry, never a bypass. When the key is at hand the
	// entry is appended and sealed in one hold of the log's lock, synced
	// once (audit.Log.AppendSealed; an entry it could not seal is synced
	// all the same).
	if enforced.wrote != "" && !enforced.replayed && (d.Behavior == Allow || d.Behavior == Abstain) {
		if err := e.noteWrite(c, enforced.wrote); err != nil && d.Behavior == Allow {
			// A write the planted warning could not name does not happen.
			return e.fail(ReasonInternal, fmt.Errorf("failed to note the file tool's write for the held calls' warning: %w", err))
		}
	}
	durable, sealing := d.Behavior == Allow || d.Behavior == Alarm, e.keyDone.Load() && e.sealKey != nil
	var err error
	switch {
	case sealing:
		_, err = e.Audit.AppendSealed(entry, e.sealKey)
	case durable:
		err = e.Audit.Append(entry)
	default:
		err = e.Audit.AppendNoSync(entry)
	}
	if err != nil && d.Behavior == Allow {
		// An allow that cannot be recorded does not happen.
		return e.fail(ReasonInternal, fmt.Errorf("failed to write the audit log: %w", err))
	}
	return d
}

// noteWrite notes that the file tool's call c, let through, writes path
// (undo.Store.NoteWrite), in the trace of the project the host names: a
// later held call's warning names it (PlantedWarning). The eighty-sixth
// attack run's Write of the Makefile under Edit(**), then a held make,
// warned of README only. A call let through to the host (abstained: its
// own permissions decide) is noted too; a project the host does not name
// keeps no trace, as it has no warning.
func (e *Engine) noteWrite(c *Call, path string) error {
	if e.Env.StateDir == "" || e.namedProject(c) == "" {
		return nil
	}
	st, err := undo.Open(e.Env.StateDir, filepath.Clean(e.projectDir(c)))
	if err != nil {
		return nil
	}
	// The wall clock, as the undo records' and the human's decisions' times.
	err = st.NoteWrite(c.ToolName, path, time.Now())
	if errors.Is(err, undo.ErrStateReadOnly) {
		return nil
	}
	return err
}

// RecordUndecodable appends the deny of a payload that never became a Call.
func (e *Engine) RecordUndecodable(event string, d Decision) {
	if event == "" {
		event = "unknown"
	}
	detail := d.Message
	if len(detail) > 1024 {
		detail = detail[:1024]
	}
	_ = e.Audit.AppendNoSync(audit.Entry{Time: e.now().UTC(), Event: event, Decision: d.Behavior, Reason: d.Reason, Mode: e.Mode, Detail: detail, Told: Told(d)})
}

func (e *Engine) decideCall(ctx context.Context, c *Call) Decision {
	if policy.ClassOf(c.ToolName) == policy.ReadOnly {
		// The fast path: a read-only tool is judged by what it names, with
		// no descriptor, no digest, no state and no keyring. Only a call
		// near a protected resource goes the whole way (and is denied).
		if e.protected(c, &described{}).Tier != policy.GuardCritical {
			return Decision{Behavior: Abstain, Reason: ReasonReadOnly, Message: "loopguard: read-only tool"}
		}
	}
	ahead := e.keyAhead(ctx, c)
	d, err := e.describe(c)
	if err != nil {
		return denied(ReasonMalformed, err.Error())
	}
	ahead.keep(d)
	return e.once(c, d, func() Decision {
		// A shell the host finds on its PATH that no decision vouches for
		// (hostshell.go): denied before any grant is looked at or used,
		// or the human asked, since none binds the shell.
		var dec Decision
		if why := e.hostShellShadowed(c); why != "" {
			dec = denied(ReasonShadowed, why)
		} else {
			dec = e.decideDescribed(ctx, c, d)
		}
		dec.Digest = d.digest
		// From the decoded input the canonical bytes were encoded from: decoding
		// them again cost a 1 MiB Write about 2 ms.
		in, _ := d.desc.Input.(map[string]any)
		dec.summary = present.SummaryOfInput(c.ToolName, in)
		if t := d.desc.Target; t != nil {
			dec.wrote = t.Path
			if t.Resolved != "" {
				dec.wrote = t.Resolved
			}
		}
		if e.Mode == ModeAsk && dec.Behavior == Deny {
			dec.rendering = askRendering(d, d.danger(e.projectDir(c)))
		}
		return dec
	})
}

func (e *Engine) decideDescribed(ctx context.Context, c *Call, d *described) Decision {
	// 2. Protected resources, whatever grants exist.
	f := e.protected(c, d)
	if f.Tier == policy.GuardCritical {
		return denied(ReasonProtected, f.why+
			". Agents may not touch what the guard stands on (loopguard, its key or state, the keyring, Claude Code's settings and state); the user does that in their own terminal")
	}
	switch policy.ClassOf(c.ToolName) {
	case policy.ReadOnly:
		return Decision{Behavior: Abstain, Reason: ReasonReadOnly, Message: "loopguard: read-only tool"}
	case policy.SubagentLaunch:
		return Decision{Behavior: Abstain, Reason: ReasonSubagent, Message: "loopguard: subagent launch; its calls are guarded one by one"}
	}
	if f.Tier == policy.ExecConfig {
		d.execConfig = f.why
	}
	session, agent, tool := c.SessionID, c.Agent(), c.ToolName

	// 4. An exact grant for this very call.
	if dec, found := e.exact(ctx, c, d); found {
		return dec
	}
	// A PermissionRequest that follows our own allow of this call: the
	// PreToolUse hook consumed the grant moments ago.
	if dec, ok := e.afterOwnAllow(ctx, c, d); ok {
		return dec
	}

	// A file tool's write while an approved call runs outside the jail
	// in the project (approvedrun.go).
	if dec, ok := e.whileApprovedRuns(ctx, c, d); ok {
		return dec
	}

	// The jail grant: a call no narrower grant covers runs whole in the
	// jail, unless it needs what the jail does not give (jail.go); one
	// that only reads executable configuration too, since the jail cannot
	// write it.
	if dec, ok := e.jailed(ctx, c, d); ok {
		return dec
	}

	// Executable configuration: no scope covers it, only an exact approval.
	if d.execConfig != "" {
		also := ""
		if d.shell != nil && d.shell.Verdict != shellparse.Simple {
			also = "; besides, the command is " + string(d.shell.Verdict) + " (" + present.EscapeText(d.shell.Reason) + ")"
		}
		return e.pending(ctx, c, d, ReasonExecConfig, d.execConfig+
			". This is executable configuration (it makes an agent, your shell, git or another tool run code later): no scoped grant covers it; only an exact approval of this call, shown to the user with a warning"+also)
	}

	// 5. Bash that a scope could be stretched over: only a chain of
	// simple commands, each covered on its own, runs without an exact
	// approval (chain.go).
	if d.shell != nil && d.shell.Verdict != shellparse.Simple {
		if len(d.shell.Parts) > 0 && sandboxEscape(c) == "" {
			if dec, ok := e.scopedChain(ctx, c, d); ok {
				return dec
			}
		}
		reason := shellReason(d.shell.Verdict)
		what := present.EscapeText(d.shell.Reason)
		if d.shell.Pos != "" {
			what += " (at " + d.shell.Pos + ")"
		}
		if d.leaves != "" {
			return e.pending(ctx, c, d, ReasonLeavesJail, leavesMessage(d.leaves))
		}
		return e.pending(ctx, c, d, reason, what+". No scoped grant can cover it; "+
			"run the commands one at a time, or ask the user to approve exactly this command")
	}
	if d.shell == nil && c.ToolName == "PowerShell" {
		return e.pending(ctx, c, d, ReasonUnparseable, "PowerShell commands are not analysed; only an exact approval covers them")
	}

	// A call that leaves or widens Claude Code's sandbox (hooks/sandbox.go).
	if why := sandboxEscape(c); why != "" {
		return e.pending(ctx, c, d, ReasonSandboxEscape, why+
			". No scoped grant can cover it; run it without, or ask the user to approve exactly this call")
	}
	// 6. A scoped grant whose rule covers the call.
	if dec, ok := e.scoped(ctx, c, d); ok {
		return dec
	}

	// 7. Nothing covers it: say precisely why, and record it for review.
	reason, detail := ReasonNoGrant, "no approval covers this call"
	switch {
	case e.Store.Withdrawn(session, agent, tool, d.digest):
		reason, detail = ReasonChangedAfterApproval, "the approval for this exact call was withdrawn: calls that ran with no decision changed the project after it"
	case e.Store.Consumed(session, agent, tool, d.digest):
		reason, detail = ReasonConsumed, "the approval for this exact call was already used (approvals are single-use)"
	}
	// Only a call no approval ever covered is compared with the approvals
	// that exist: a used approval's retry is approval_consumed (or
	// project_changed_after_approval, withdrawn), nothing else.
	var others []state.GrantFile
	if reason == ReasonNoGrant {
		others, _ = e.Store.OtherExact(session, agent, tool)
	}
	approved := ""
	for _, o := range others {
		if o.Err != nil || o.Grant == nil || !e.now().Before(o.Grant.Expiry) {
			continue
		}
		if o.Record.CallDigest == d.callDigest && d.desc.Target != nil {
			reason, detail = ReasonTargetDrift, "this call was approved, but "+present.EscapeText(d.target)+" has changed since; the approval covered the file as it was"
			approved = e.approvedRecord(o)
			break
		}
		// Only a call that plausibly retries the approved one is told it
		// changed; an unrelated call keeps the ordinary reason. What it
		// resembles was kept with the approval; an older grant without it
		// is judged from its pending record, when that still holds it.
		p := e.approvedCall(o)
		keys := o.Record.Resembles
		if keys == nil && p != nil {
			keys = retryKeys(p.Descriptor)
		}
		if !plausibleRetry(keys, d) {
			continue
		}
		reason = ReasonCallChanged
		what := ""
		if p != nil {
			approved, what = p.ID, " ("+present.Summary(p)+", pending "+p.ID+")"
		}
		detail = "the user approved a different " + tool + " call in this session" + what +
			", which this call resembles but is not; that approval covers only that exact call"
		if p != nil {
			detail += present.CallDiff(p.Descriptor, d.canonical)
		}
		break
	}
	d.approved = approved
	if reason == ReasonNoGrant && d.leaves != "" {
		reason, detail = ReasonLeavesJail, leavesMessage(d.leaves)
	} else if reason == ReasonNoGrant {
		detail += e.elsewhere(c, d)
		if d.miss != "" {
			detail += "; " + present.EscapeText(d.miss)
		}
	}
	return e.pending(ctx, c, d, reason, detail)
}
