package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Behaviors of a decision.
const (
	Allow   = "allow"
	Deny    = "deny"
	Ask     = "ask"
	Abstain = "abstain"
	Alarm   = "alarm"
)

// Reason codes: stable strings users can grep for.
const (
	ReasonExactGrant    = "exact_grant"
	ReasonScopedGrant   = "scoped_grant"
	ReasonNoGrant       = "no_grant"
	ReasonCallChanged   = "approved_call_changed"
	ReasonTargetDrift   = "target_state_drift"
	ReasonExpired       = "approval_expired"
	ReasonConsumed      = "approval_consumed"
	ReasonGrantInvalid  = "grant_invalid"
	ReasonChained       = "chained_command"
	ReasonIndirect      = "indirect_command"
	ReasonShadowed      = "path_shadowed"
	ReasonUnparseable   = "unparseable_command"
	ReasonProtected     = "protected_resource"
	ReasonMalformed     = "malformed_input"
	ReasonKeyring       = "keyring_unavailable"
	ReasonInternal      = "internal_error"
	ReasonDeadline      = "deadline"
	ReasonDeniedByHuman = "denied_by_human"
	ReasonInputChanged  = "executed_input_changed"
	ReasonRan           = "ran_as_approved"
	ReasonNotGuarded    = "not_guarded"
	ReasonUnknownEvent  = "unknown_event"
	ReasonExecConfig    = "executable_config"
	ReasonReadOnly      = "read_only_tool"
	ReasonSubagent      = "subagent_launch"
	ReasonPendingFull   = "pending_full"
	// ReasonInteractive: the command reads commands from its standard
	// input (a shell, a REPL, a database client, an editor): no scope
	// covers it, since what is typed into it later is not the call.
	ReasonInteractive = "interactive_command"
	// ReasonAbandoned: the agent's client stopped waiting for a call the
	// hook held (Esc in Claude Code, the session ended): the hook got a
	// signal (Engine.Abandoned), the call did not run, and nobody reads
	// the answer; it is recorded all the same.
	ReasonAbandoned = "held_abandoned"
	// ReasonContentChanged: a grant's rule pins an executable's content
	// (it lies where the user can write) and the file there is another.
	ReasonContentChanged = scope.ReasonContentChanged
	// ReasonRepositoryNotCovered: a git grant would cover the call, but git
	// would use a repository inside the project other than its own.
	ReasonRepositoryNotCovered = scope.ReasonRepositoryNotCovered
)

// Reasons lists every reason code the engine answers with, once each: the
// one list the manual (docs/reasons.md) and the audit test are checked
// against (internal/layout's TestReasonListsComplete: no Reason constant is
// missing from it).
func Reasons() []string {
	return []string{
		ReasonExactGrant, ReasonScopedGrant, ReasonJailed, ReasonReadOnly, ReasonRan, ReasonLeavesJail,
		ReasonNoGrant, ReasonCallChanged, ReasonTargetDrift, ReasonExpired, ReasonConsumed, ReasonGrantInvalid, ReasonDeniedByHuman,
		ReasonChained, ReasonIndirect, ReasonShadowed, ReasonUnparseable, ReasonInteractive, ReasonProtected, ReasonExecConfig,
		ReasonSubagent, ReasonContentChanged, ReasonRepositoryNotCovered, ReasonNotCanonical, ReasonSandboxEscape,
		ReasonPendingFull, ReasonAbandoned, ReasonInputChanged, ReasonNotGuarded, ReasonUnknownEvent,
		ReasonMalformed, ReasonKeyring, ReasonStateLost, ReasonInternal, ReasonDeadline,
	}
}

// Modes.
const (
	ModeEnforce = "enforce"
	ModeAsk     = "ask"
	ModeAudit   = "audit"
)

// Decision is the engine's answer for one call.
type Decision struct {
	Behavior string
	Reason   string
	// Message is for the model on deny, for the user on allow and ask.
	Message   string
	Grant     string
	Principal string
	Pending   string
	Digest    string
	// SystemMessage is shown to the user (PostToolUse alarms).
	SystemMessage string
	// UpdatedInput, on an allow, is the tool input the host must run in
	// place of the model's: the canonical, confined form of a Bash call a
	// scoped grant covers (rewrite.go). nil: run the input as it is.
	UpdatedInput map[string]any
	// Capability is what the program of a rewritten Bash call may do
	// ("" when it runs unconfined).
	Capability string
	// Context is for the model, beside the call's result (Claude Code's
	// additionalContext): at PreToolUse, what the jail withholds, once per
	// session; after the call, the right a refusal by the jail most likely
	// lacked (jailnote.go).
	Context string

	rendering string // the full call, for ask mode
	why       string // the reason line alone, for ask mode
	forAgent  string // an ask's message without the rendering (ForAgent)
	summary   string // the call in one line, for the audit log
	// ranDigest is the call digest of UpdatedInput, when there is one.
	ranDigest string
	// replayed: the answer another registration gave this call (answer.go).
	replayed bool
}

// ForAgent is the message an agent may see. An ask's Message is for the
// human (Claude Code shows it to the user only) and renders the call with
// an edit's diff against the file as it is, lines the agent may have no
// right to read (an Edit of a file outside the project); an agent whose
// hook contract shows an ask's reason to the model, or that turns an ask
// into a deny, gets the reason without the rendering.
func (d Decision) ForAgent() string {
	if d.Behavior == Ask && d.forAgent != "" {
		return d.forAgent
	}
	return d.Message
}

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
	// who refused the call; both "" when there is none yet.
	Fetch(ctx context.Context, id string) (tok, deniedBy string, err error)
	// ScopedGrants returns the live scoped grants bound to any of
	// sessions or to every session. With a custody they come from it
	// only, never from this machine's disk: a grant revoked there is gone
	// everywhere, whatever copies exist.
	ScopedGrants(ctx context.Context, sessions ...string) ([]state.GrantFile, error)
}

// fetchApproval brings an approval made on another machine into the store:
// the grant file ExactGrant then finds, or the refusal pending() reports.
// Only a token for this very call is taken, and not the one this machine
// used already (an approver may approve the call again once it ran: the
// new approval is a new grant); anything else is as if absent.
func (e *Engine) fetchApproval(ctx context.Context, c *Call, d *described) (state.GrantFile, error) {
	session, agent, tool := c.SessionID, c.Agent(), c.ToolName
	id := state.PendingID(session, agent, tool, d.digest)
	tok, deniedBy, err := e.Custody.Fetch(ctx, id)
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
	if _, err := e.Store.PutGrant(g, state.GrantRecord{Pending: id, CallDigest: d.callDigest, AgentType: c.AgentType, Created: e.now().UTC(),
		Resembles: retryKeys(d.canonical)}); err != nil {
		return state.GrantFile{}, err
	}
	return e.Store.ExactGrant(session, agent, tool, d.digest)
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
	// seal makes the log durable (up to the head it writes), so the entry
	// is not synced twice.
	durable, sealing := d.Behavior == Allow || d.Behavior == Alarm, e.sealKey != nil
	write := e.Audit.AppendNoSync
	if durable && !sealing {
		write = e.Audit.Append
	}
	err := write(entry)
	if err == nil && sealing {
		if serr := e.Audit.Seal(e.sealKey); serr != nil && durable {
			// No seal, so nothing was synced: sync the entry itself.
			err = e.Audit.Sync()
		}
	}
	if err != nil && d.Behavior == Allow {
		// An allow that cannot be recorded does not happen.
		return e.fail(ReasonInternal, fmt.Errorf("failed to write the audit log: %w", err))
	}
	return d
}

// Told is what the model is told of d: a deny's or an ask's reason (never
// an ask's rendering, which is for the human), or the context beside an
// allowed call's result.
func Told(d Decision) string {
	switch d.Behavior {
	case Deny, Ask:
		return d.ForAgent()
	case Allow, Abstain:
		// An abstention's context: a refusal by the jail, after the call.
		return d.Context
	}
	return ""
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

// askable reasons can be put to the human in ask mode; the others (protected
// resources, malformed input, tampering, failures) stay denied.
func askable(reason string) bool {
	switch reason {
	case ReasonNoGrant, ReasonCallChanged, ReasonTargetDrift, ReasonExpired, ReasonConsumed,
		ReasonChained, ReasonIndirect, ReasonShadowed, ReasonUnparseable, ReasonSandboxEscape,
		ReasonExecConfig, ReasonContentChanged, ReasonRepositoryNotCovered, ReasonNotCanonical, ReasonInteractive:
		return true
	}
	return false
}

func (e *Engine) fail(reason string, err error) Decision {
	if errors.Is(err, audit.ErrStateLost) {
		// The key was read, and with it the keyring's anchor of the state
		// directory, which this one is not (LoadKey's check).
		reason = ReasonStateLost
	}
	msg := fmt.Sprintf("loopguard: %s: %v", reason, err)
	switch reason {
	case ReasonStateLost:
		msg += stateLostAdvice
	case ReasonKeyring:
		msg += ". The call is blocked until the key can be read; the user should run `loopguard doctor` in their terminal."
	case ReasonInternal:
		msg += ". The call is blocked; the user should run `loopguard doctor`."
	default:
		if strings.HasPrefix(reason, "vault_") {
			msg += ". The call is blocked until Vault answers; the user should run `loopguard doctor`."
		}
	}
	return Decision{Behavior: Deny, Reason: reason, Message: msg}
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
	d, err := e.describe(c)
	if err != nil {
		return Decision{Behavior: Deny, Reason: ReasonMalformed, Message: "loopguard: malformed_input: " + err.Error()}
	}
	return e.once(c, d, func() Decision {
		dec := e.decideDescribed(ctx, c, d)
		dec.Digest = d.digest
		// From the decoded input the canonical bytes were encoded from: decoding
		// them again cost a 1 MiB Write about 2 ms.
		in, _ := d.desc.Input.(map[string]any)
		dec.summary = present.SummaryOfInput(c.ToolName, in)
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
		return Decision{Behavior: Deny, Reason: ReasonProtected, Message: "loopguard: protected_resource: " + f.why +
			". Agents may not touch what the guard stands on (loopguard, its key or state, the keyring, Claude Code's settings and state); the user does that in their own terminal"}
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
	if c.Event == PermissionRequest {
		if dec, ok := e.justConsumed(ctx, c, d); ok {
			return dec
		}
		if dec, ok := e.justRewritten(c, d); ok {
			return dec
		}
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
		return e.pending(ctx, c, d, ReasonExecConfig, "loopguard: executable_config: "+d.execConfig+
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
		return e.pending(ctx, c, d, reason, fmt.Sprintf("loopguard: %s: %s. No scoped grant can cover it; "+
			"run the commands one at a time, or ask the user to approve exactly this command", reason, what))
	}
	if d.shell == nil && c.ToolName == "PowerShell" {
		return e.pending(ctx, c, d, ReasonUnparseable, "loopguard: unparseable_command: PowerShell commands are not analysed; only an exact approval covers them")
	}

	// A call that leaves or widens Claude Code's sandbox (hooks/sandbox.go).
	if why := sandboxEscape(c); why != "" {
		return e.pending(ctx, c, d, ReasonSandboxEscape, "loopguard: "+ReasonSandboxEscape+": "+why+
			". No scoped grant can cover it; run it without, or ask the user to approve exactly this call")
	}
	// 6. A scoped grant whose rule covers the call.
	if dec, ok := e.scoped(ctx, c, d); ok {
		return dec
	}

	// 7. Nothing covers it: say precisely why, and record it for review.
	reason, msg := ReasonNoGrant, "loopguard: no_grant: no approval covers this call"
	if e.Store.Consumed(session, agent, tool, d.digest) {
		reason, msg = ReasonConsumed, "loopguard: approval_consumed: the approval for this exact call was already used (approvals are single-use)"
	}
	// Only a call no approval ever covered is compared with the approvals
	// that exist: a used approval's retry is approval_consumed, nothing else.
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
			reason, msg = ReasonTargetDrift, "loopguard: target_state_drift: this call was approved, but "+present.EscapeText(d.target)+" has changed since; the approval covered the file as it was"
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
		msg = "loopguard: approved_call_changed: the user approved a different " + tool + " call in this session" + what +
			", which this call resembles but is not; that approval covers only that exact call"
		if p != nil {
			msg += present.CallDiff(p.Descriptor, d.canonical)
		}
		break
	}
	d.approved = approved
	if reason == ReasonNoGrant && d.leaves != "" {
		reason, msg = ReasonLeavesJail, leavesMessage(d.leaves)
	} else if reason == ReasonNoGrant {
		msg += e.elsewhere(c, d)
		if d.miss != "" {
			msg += "; " + present.EscapeText(d.miss)
		}
	}
	return e.pending(ctx, c, d, reason, msg)
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
		return Decision{Behavior: Deny, Reason: ReasonGrantInvalid, Message: "loopguard: grant_invalid: the grant file for this call is corrupt; the user should revoke it and approve again"}, true
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
		return e.pending(ctx, c, d, ReasonExpired, "loopguard: approval_expired: the approval for this call expired at "+present.FormatTime(gf.Grant.Expiry)), true
	case err != nil:
		return Decision{Behavior: Deny, Reason: ReasonGrantInvalid, Message: "loopguard: grant_invalid: the grant for this call does not verify (" + err.Error() + "); it was tampered with or minted under another key"}, true
	}
	if e.Custody != nil {
		// Single use across every machine first; then this machine's record.
		switch err := e.Custody.Claim(ctx, gf.Grant); {
		case errors.Is(err, state.ErrClaimed):
			return e.pending(ctx, c, d, ReasonConsumed, "loopguard: approval_consumed: the approval for this exact call was already used, on this machine or another (approvals are single-use)"), true
		case err != nil:
			if f := e.custodyFailure(err); f != nil {
				return *f, true
			}
			return e.fail(ReasonInternal, err), true
		}
	}
	switch err := e.Store.ClaimExact(session, agent, tool, d.digest); {
	case errors.Is(err, state.ErrClaimed):
		return e.pending(ctx, c, d, ReasonConsumed, "loopguard: approval_consumed: the approval for this exact call was already used (approvals are single-use)"), true
	case err != nil:
		return e.fail(ReasonInternal, err), true
	}
	return e.allowed(c, d, ReasonExactGrant, gf.Grant, "approved by "+gf.Grant.Principal+" for this exact call"), true
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
	grants, project, fail := e.scopedGrants(ctx, c)
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
		confined := ""
		if updated != nil {
			confined = e.capabilityOf(c, d, cv.rule)
		}
		dec := e.allowedAs(c, d, ReasonScopedGrant, cv.g, "granted by "+cv.g.Principal+" as "+cv.g.Scope, updated, confined)
		if updated != nil {
			dec.Capability = confined
			dec.Context = e.jailContext(c, cv.rule.Capability(), confined != "")
		}
		return dec, true
	}
	d.miss = cv.miss
	return e.notCovered(ctx, c, d, cv, "")
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
		return Decision{Behavior: Deny, Reason: ReasonGrantInvalid, Message: "loopguard: grant_invalid: grant " + cv.refused.ID() + " would cover " + this + " but its rule is refused by the current policy (" + cv.refusedWhy.Error() + ")"}, true
	case cv.invalid != nil:
		return Decision{Behavior: Deny, Reason: ReasonGrantInvalid, Message: "loopguard: grant_invalid: grant " + cv.invalid.ID() + " would cover " + this + " but does not verify; it was tampered with or minted under another key"}, true
	case cv.expired != nil:
		return e.pending(ctx, c, d, ReasonExpired, "loopguard: approval_expired: grant "+cv.expired.Scope+" covered "+this+" but expired at "+present.FormatTime(cv.expired.Expiry)), true
	case cv.near != nil:
		return e.pending(ctx, c, d, cv.nearWhy.Code, "loopguard: "+cv.nearWhy.Code+": grant "+cv.near.ID()+" ("+present.EscapeText(cv.near.Scope)+") would cover "+this+", but "+present.EscapeText(cv.nearWhy.Detail)), true
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
	callDigest := d.callDigest
	ran := ""
	if updated != nil {
		rc := *c
		rc.ToolInput = updated
		if rd, err := e.describe(&rc); err == nil {
			callDigest, ran = rd.callDigest, rd.digest
		}
		if reason == ReasonJailed {
			what += "; it runs whole, as written, confined by the kernel"
		} else {
			what += "; it runs as analysed"
			if e.Env.Launcher != "" && !d.shell.Builtin {
				what += ", confined"
			}
		}
	}
	_ = e.Store.NoteAllowed(state.Allowed{
		Session: c.SessionID, Agent: c.Agent(), Tool: c.ToolName, ToolUseID: c.ToolUseID,
		Digest: d.digest, CallDigest: callDigest, Grant: g.ID(), Principal: g.Principal, Time: e.now().UTC(), Cwd: c.Cwd,
		Capability: confined,
	}, updated != nil)
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

func shellReason(v shellparse.Verdict) string {
	switch v {
	case shellparse.Chained:
		return ReasonChained
	case shellparse.Indirect:
		return ReasonIndirect
	case shellparse.PathShadowed:
		return ReasonShadowed
	}
	return ReasonUnparseable
}

// pending records the call for review and denies it, telling the model what
// the human must run. In wait mode it holds the call until the human decides.
func (e *Engine) pending(ctx context.Context, c *Call, d *described, reason, msg string) Decision {
	now := e.now().UTC()
	id := state.PendingID(c.SessionID, c.Agent(), c.ToolName, d.digest)
	p := &state.Pending{
		ID: id, Created: now, Seen: now, Event: c.Event, Session: c.SessionID, Agent: c.Agent(),
		AgentType: c.AgentType, Tool: c.ToolName, Cwd: c.Cwd, ProjectDir: e.projectDir(c),
		Digest: d.digest, CallDigest: d.callDigest, Descriptor: d.canonical, Reason: reason,
		Warnings: d.warnings(), Approved: d.approved, Shown: d.shown,
	}
	if d.shell != nil && d.shell.Verdict != shellparse.Simple {
		p.Detail = d.shell.Reason
	}
	if w := e.plantedWarning(c); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	if c.TypesLater {
		// The host lets the model type into the command once it runs: the
		// human and the model are told plainly what an approval covers.
		if cmd, ok := c.ToolInput["command"].(string); ok {
			for _, w := range present.StdinDanger(cmd, d.sketch()) {
				p.Warnings = append(p.Warnings, w)
				msg += ". " + w
			}
		}
	}
	wait := e.holdFor(ctx)
	if wait > 0 {
		// review labels the call held, with the time left, while this
		// process lives.
		p.HeldUntil, p.HolderPID = now.Add(wait), os.Getpid()
	}
	if err := e.Store.PutPending(p); err != nil {
		return e.fail(ReasonInternal, fmt.Errorf("failed to record the pending call: %w", err))
	}
	if told := e.Progress.notePending(id); told != nil {
		// The run's deadline answered first: the record says so.
		_ = e.Store.Retell(id, told.Reason, "decided "+reason+" after the hook's deadline; the model was told "+told.Reason)
	}
	if p.Created.Equal(now) {
		// A new record: keep the session's queue within its bounds. Calls
		// a hook holds or a human has open stay; when nothing can go, this
		// one is not queued, and is denied saying so.
		dropped, err := e.Store.CapPending(c.SessionID, id, now)
		for _, o := range dropped {
			_ = e.Audit.AppendNoSync(audit.Entry{Time: now, Event: "pending-dropped", Session: o.Session, Agent: o.Agent,
				Tool: o.Tool, Digest: o.Digest, Pending: o.ID, Decision: "drop", Reason: "pending_cap",
				Detail: fmt.Sprintf("the session has more than %d pending calls or %d bytes of them; the oldest was dropped", state.MaxPendingPerSession, state.MaxPendingBytesPerSession)})
		}
		if errors.Is(err, state.ErrPendingFull) {
			return Decision{Behavior: Deny, Reason: ReasonPendingFull, Message: fmt.Sprintf(
				"loopguard: pending_full: this call was not queued for review: %v. Wait for the human to decide the calls already waiting (loopguard review), then retry.\n%s", err, whyLine(reason, msg)), why: err.Error()}
		}
	}
	_ = e.Store.NoteSession(e.projectDir(c), c.SessionID, now)
	if e.Custody != nil && p.Status != state.StatusDenied {
		// Approvers on other machines see it through Vault.
		if err := e.Custody.Publish(ctx, p); err != nil {
			if f := e.custodyFailure(err); f != nil {
				return *f
			}
			return e.fail(ReasonInternal, fmt.Errorf("failed to publish the pending call: %w", err))
		}
	}
	if p.Status == state.StatusDenied {
		return deniedByHuman(p)
	}
	if wait > 0 {
		if e.OnHeld != nil {
			e.OnHeld(p)
		}
		dec, ok := e.wait(ctx, c, d, id, wait)
		if ok {
			return dec
		}
		if ctx.Err() == nil {
			// The wait ran its course: the agent is told the call did not
			// run, and review keeps it for the agent's retry.
			_ = e.Store.EndWait(p)
		}
		return Decision{Behavior: Deny, Reason: reason, Pending: id, Message: waitEndedLine(reason, id, wait, e.Custody != nil) + "\n" + whyLine(reason, msg), why: msg}
	}
	return Decision{Behavior: Deny, Reason: reason, Pending: id, Message: heldLine(reason, id, e.Custody != nil) + "\n" + whyLine(reason, msg) + "\n" + approveHint(id, e.Custody != nil), why: msg}
}

// askBudget bounds each long part of ask mode's reason (the diff, the
// call): Claude Code's dialog shows the reason above its own rendering of
// the call, so it is kept to a few screens, not its 10,000-byte cap.
const askBudget = 2000

// askRendering is the reason ask mode gives Claude Code's dialog after its
// first line: the danger lines, the warnings, the digest, the edit as a
// diff, then the call itself, each long part cut to askBudget; the full
// call is in loopguard show.
func askRendering(d *described, danger []string) string {
	var b strings.Builder
	for _, w := range danger {
		b.WriteString("!!! DANGER: " + present.EscapeText(w) + "\n")
	}
	for _, w := range d.warnings() {
		b.WriteString("WARNING: " + w + "\n")
	}
	b.WriteString("digest: " + d.digest + "\n")
	if ch := present.Changes(d.canonical, false); ch != "" {
		if len(ch) > askBudget {
			cut := strings.LastIndexByte(ch[:askBudget], '\n') + 1
			ch = ch[:cut] + "... (diff cut here; all of it: loopguard show --full)\n"
		}
		b.WriteString("\n" + ch)
	}
	b.WriteString("\nThe exact call:\n" + present.RenderLimit(d.canonical, askBudget))
	return b.String()
}

// holdFor is how long a call may be held: the wait, cut to leave the hook
// its own time to answer before its deadline.
func (e *Engine) holdFor(ctx context.Context) time.Duration {
	w := e.Wait
	if dl, ok := ctx.Deadline(); ok && w > 0 {
		if left := time.Until(dl) - time.Second; left < w {
			w = left
		}
	}
	return max(w, 0)
}

// heldLine is the first line of the model's message for a call that needs
// a human: Claude Code shows the first line and hides the rest.
// It starts with the reason code, as every deny does, then what is true
// of that reason: a call no approval covered is held for one; a call
// whose approval was used, expired or covered another call waits for a
// new one. team is the Vault backend, where an approver decides from
// their own machine.
func heldLine(reason, id string, team bool) string {
	what := "held for a human's approval"
	if f := reasonFact(reason); f != "" {
		what = f + "; it waits for a new approval"
	}
	return "loopguard: " + reason + ": " + what + " (pending " + id + "): ask the user to run " + approverCommand(id, team) +
		" in their own terminal, then retry the identical call."
}

// approverCommand is the command that approves call id: on this machine,
// or with the Vault backend on an approver's machine through Vault.
func approverCommand(id string, team bool) string {
	if team {
		return "`loopguard review --backend vault` (or `loopguard team approve " + id + "`)"
	}
	return "`loopguard review` (or `loopguard approve " + id + "`)"
}

// waitEndedLine is the first line when a held call's wait ran out.
func waitEndedLine(reason, id string, wait time.Duration, team bool) string {
	what := "held for a human's approval"
	if f := reasonFact(reason); f != "" {
		what = f + "; it was held for a new approval"
	}
	return "loopguard: " + reason + ": " + what + " for " + wait.Round(time.Second).String() + ", but nobody decided, so it did not run (pending " + id +
		"). Do not retry it at once: tell the user it still waits in " + approverCommand(id, team) + ", and once they approve it there, retry the identical call: it then runs (only its description may differ; any other change needs a new approval)."
}

// reasonFact is what a deny reason means, in a few words true of every
// call denied with it; "" for a call that simply has no approval yet. The
// detail follows on the Why line.
func reasonFact(reason string) string {
	switch reason {
	case ReasonConsumed:
		return "the approval of this exact call was already used (approvals are single-use), so running it again needs a new one"
	case ReasonExpired:
		return "the approval that covered this call has expired"
	case ReasonCallChanged:
		return "this is not the exact call the user approved, so that approval does not cover it"
	case ReasonTargetDrift:
		return "the file this call changes was modified after the user approved the call, so the approval no longer covers it"
	}
	return ""
}

// whyLine is the reason's explanation, after the first line.
func whyLine(reason, msg string) string {
	return "Why: " + strings.TrimPrefix(msg, "loopguard: "+reason+": ") + "."
}

// MaxNote bounds the human's refusal note shown to the model.
const MaxNote = 500

func deniedByHuman(p *state.Pending) Decision {
	msg := "loopguard: denied_by_human: " + p.DecidedBy + " refused this exact call (" + p.ID + ")"
	if p.Note != "" {
		note := p.Note
		if len(note) > MaxNote {
			note = note[:MaxNote]
		}
		msg += ", saying: \"" + present.EscapeText(note) + "\""
	}
	return Decision{Behavior: Deny, Reason: ReasonDeniedByHuman, Pending: p.ID, Message: msg + ". Do not retry it."}
}

func approveHint(id string, team bool) string {
	if team {
		return "To run it, an approver must review and approve it from their own machine through Vault (" + approverCommand(id, true) +
			"). Then retry the identical call; any change needs a new approval."
	}
	return "To run it, the user must review and approve it in their own terminal (`loopguard review`, or `loopguard show " + id +
		"` then `loopguard approve " + id + "`). Then retry the identical call; any change needs a new approval."
}

// wait polls the pending record until the human approves or denies it, or
// the wait (or the hook's deadline) ends.
func (e *Engine) wait(ctx context.Context, c *Call, d *described, id string, wait time.Duration) (Decision, bool) {
	interval := e.PollInterval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return Decision{}, false
		case <-e.Abandoned:
			return Decision{Behavior: Deny, Reason: ReasonAbandoned, Pending: id, Message: "loopguard: " + ReasonAbandoned +
				": the agent stopped waiting for this held call (Esc, or its session ended), so it did not run (pending " + id + ")"}, true
		case <-t.C:
		}
		if e.Custody != nil {
			// An approval made on another machine arrives through Vault.
			if dec, found := e.exact(ctx, c, d); found {
				return dec, true
			}
		}
		p, err := e.Store.GetPending(id)
		if err != nil {
			continue
		}
		switch p.Status {
		case state.StatusDenied:
			return deniedByHuman(p), true
		case state.StatusApproved:
			if dec, found := e.exact(ctx, c, d); found {
				return dec, true
			}
			return Decision{}, false
		}
	}
}

// post compares what ran with what was allowed. With a call id it finds
// the allowed call by the id and compares; a host that sends none (Copilot,
// Gemini) is told apart only by what ran: a call allowed to run as exactly
// this input ran as approved, anything else is not known to loopguard.
func (e *Engine) post(c *Call) Decision {
	var a state.Allowed
	var d *described
	var err error
	if c.ToolUseID != "" {
		// The note first: most calls have none, and need no descriptor.
		if a, err = e.Store.TakeAllowed(c.SessionID, c.ToolUseID); err != nil {
			return Decision{Behavior: Abstain, Reason: ReasonNotGuarded}
		}
		if a.CallDigest != a.Digest {
			_, _ = e.Store.TakeRan(c.SessionID, a.CallDigest)
		}
		d, err = e.describe(c)
	} else {
		if d, err = e.describe(c); err != nil {
			return Decision{Behavior: Abstain, Reason: ReasonNotGuarded}
		}
		if a, err = e.Store.TakeRan(c.SessionID, d.callDigest); err != nil {
			return Decision{Behavior: Abstain, Reason: ReasonNotGuarded}
		}
	}
	if err != nil {
		return Decision{Behavior: Alarm, Reason: ReasonInputChanged, Grant: a.Grant, Principal: a.Principal,
			SystemMessage: "loopguard: ALARM: the input of the call that ran cannot be read back (" + err.Error() + ")"}
	}
	if d.callDigest != a.CallDigest && a.Cwd != "" && a.Cwd != c.Cwd {
		// A cd in the command moved the shell: PostToolUse reports where
		// it ended. What ran is judged in the cwd it was allowed in.
		rc := *c
		rc.Cwd = a.Cwd
		if rd, err := e.describe(&rc); err == nil {
			d = rd
		}
	}
	if d.callDigest != a.CallDigest || c.Agent() != a.Agent || c.ToolName != a.Tool {
		return Decision{Behavior: Alarm, Reason: ReasonInputChanged, Digest: d.digest, Grant: a.Grant, Principal: a.Principal,
			SystemMessage: fmt.Sprintf("loopguard: ALARM: the %s call that ran (digest %.12s) is not the call loopguard allowed (digest %.12s, grant %s). Another hook rewrote its input (updatedInput).",
				c.ToolName, d.callDigest, a.CallDigest, a.Grant)}
	}
	return Decision{Behavior: Abstain, Reason: ReasonRan, Digest: d.digest, Grant: a.Grant, Principal: a.Principal,
		Context: e.refusalContext(c, a)}
}

// CallSummary is the call in one line, as the audit log has it.
func CallSummary(c *Call) string { return present.SummaryOfInput(c.ToolName, c.ToolInput) }
