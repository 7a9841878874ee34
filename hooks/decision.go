package hooks

import (
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
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
	// ReasonChangedAfterApproval: calls that ran with no decision (jailed
	// calls, the agent's file tools under its permissions) changed the
	// project after the exact approval of the call (ChangedAfter), which
	// the approver was not shown: the call is held again.
	ReasonChangedAfterApproval = "project_changed_after_approval"
	// ReasonApprovedRunning: a file tool's write that no exact approval
	// covers, while a call the user approved to run outside the jail runs
	// in the project (undo.ApprovedRunning): what it writes, that call
	// could run, and the approver was not shown it. Held for a decision.
	ReasonApprovedRunning = "approved_call_running"
	// ReasonKilledSwept: (SessionEnd) the session's end stopped a call
	// whose launcher died before its sweep, and the hook swept for it;
	// or (the guard in the project's watcher) a launcher died before its
	// sweep with no hook after it. The audit entry's told says what was
	// held back.
	ReasonKilledSwept = "killed_call_swept"
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
		ReasonNoGrant, ReasonCallChanged, ReasonTargetDrift, ReasonExpired, ReasonConsumed, ReasonChangedAfterApproval, ReasonApprovedRunning, ReasonGrantInvalid, ReasonDeniedByHuman,
		ReasonChained, ReasonIndirect, ReasonShadowed, ReasonUnparseable, ReasonInteractive, ReasonProtected, ReasonExecConfig,
		ReasonSubagent, ReasonContentChanged, ReasonRepositoryNotCovered, ReasonNotCanonical, ReasonSandboxEscape, ReasonDangerNotCovered,
		ReasonPendingFull, ReasonAbandoned, ReasonInputChanged, ReasonNotGuarded, ReasonUnknownEvent, ReasonKilledSwept,
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
	// wrote is the file a file tool's call writes (its descriptor's
	// target, where it lands), "" for any other call: noted for the
	// planted warning when the call is let through (noteWrite).
	wrote string
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

// askable reasons can be put to the human in ask mode; the others (protected
// resources, malformed input, tampering, failures) stay denied.
func askable(reason string) bool {
	switch reason {
	case ReasonNoGrant, ReasonCallChanged, ReasonTargetDrift, ReasonExpired, ReasonConsumed, ReasonChangedAfterApproval, ReasonApprovedRunning,
		ReasonChained, ReasonIndirect, ReasonShadowed, ReasonUnparseable, ReasonSandboxEscape,
		ReasonExecConfig, ReasonContentChanged, ReasonRepositoryNotCovered, ReasonNotCanonical, ReasonInteractive, ReasonDangerNotCovered:
		return true
	}
	return false
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
