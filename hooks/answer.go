package hooks

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/state"
)

// AnswerWindow is how long the answer to a call is given again to another
// registration of loopguard that the host runs for the same call.
const AnswerWindow = time.Minute

// One decision per call, however many registrations. A host may run more
// than one of loopguard's hooks for one call (Copilot CLI runs every hook
// file it finds and a repository's .claude/settings.json hooks too, one
// after the other, each with the input the one before left). Deciding
// twice would consume the single-use approval in the first and deny the
// call as approval_consumed in the second. So where the host gives every
// hook of a call the same identity (Call.CallKey), the first registration
// to decide records its answer, and another registration asked about the
// same call (the same identity, and the input as it was decided or as it
// was rewritten) within AnswerWindow answers the same. Only allows are
// recorded: a refusal decided again is a refusal again. A registration
// asked again about that identity decides again: two calls that share an
// identity (two identical calls in one millisecond) are never answered by
// one decision more than once per registration, so one approval still
// runs one call.

// onceRecord is a Decision as the answer record keeps it.
type onceRecord struct {
	Behavior     string         `json:"behavior"`
	Reason       string         `json:"reason"`
	Message      string         `json:"message,omitempty"`
	Grant        string         `json:"grant,omitempty"`
	Principal    string         `json:"principal,omitempty"`
	Pending      string         `json:"pending,omitempty"`
	Digest       string         `json:"digest,omitempty"`
	UpdatedInput map[string]any `json:"updated_input,omitempty"`
	Capability   string         `json:"capability,omitempty"`
	Context      string         `json:"context,omitempty"`
	ForAgent     string         `json:"for_agent,omitempty"`
	Summary      string         `json:"summary,omitempty"`
	Rendering    string         `json:"rendering,omitempty"`
	Why          string         `json:"why,omitempty"`
}

func recordOf(d Decision) onceRecord {
	return onceRecord{Behavior: d.Behavior, Reason: d.Reason, Message: d.Message, Grant: d.Grant, Principal: d.Principal,
		Pending: d.Pending, Digest: d.Digest, UpdatedInput: d.UpdatedInput, Capability: d.Capability, Context: d.Context,
		ForAgent: d.forAgent, Summary: d.summary, Rendering: d.rendering, Why: d.why}
}

func (r onceRecord) decision() Decision {
	return Decision{Behavior: r.Behavior, Reason: r.Reason, Message: r.Message, Grant: r.Grant, Principal: r.Principal,
		Pending: r.Pending, Digest: r.Digest, UpdatedInput: r.UpdatedInput, Capability: r.Capability, Context: r.Context,
		forAgent: r.ForAgent, summary: r.Summary, rendering: r.Rendering, why: r.Why}
}

// RegistrationName is the name Engine.Registration gives the registration
// a hook command line runs for: its agent, event and mode, and the file
// init wrote it into (scope: user, project) where the command names it.
// Two registrations of one agent that share a name cannot be told apart:
// the second decides the call again.
func RegistrationName(agent, event, mode, scope string) string {
	name := agent + "|" + event + "|" + mode
	if scope != "" {
		name += "|" + scope
	}
	return name
}

// scoped reports whether the registration names its file: its host runs
// the same agent's other registrations for the same call.
func scoped(registration string) bool { return strings.Count(registration, "|") >= 3 }

// answerKey is the key the answer to c is kept under: the call's identity
// where the host gives one (Call.CallKey). Where it gives none, a
// registration that names its file (scoped) keys the answer by the decided
// call itself, its agent, tool and input digest, for AnswerWindow. Such a
// record is also found by an identical call in that window, a genuine
// repeat; every registration already in the record (the one that decided
// first of all) decides that call afresh, so it never runs twice on one
// approval. A host that hands the next registration a rewritten input
// without an identity gets it decided afresh too (at worst a refusal).
// "": nothing is recorded, every registration decides.
func (e *Engine) answerKey(c *Call, d *described) string {
	switch {
	case c.CallKey != "":
		return c.CallKey
	case scoped(e.Registration):
		return "d:" + c.Agent() + "\x00" + c.ToolName + "\x00" + d.digest
	}
	return ""
}

// once decides c with decide, unless another registration of loopguard
// already answered this very call: then it answers the same. Each
// registration answers one record at most once: the one that decided is in
// it from the start, so a second call that finds the record (two calls
// sharing an identity, or an identical call within AnswerWindow where the
// host gives none) is decided again by the first registration it reaches,
// which finds the approval used; one approval never runs two calls.
func (e *Engine) once(c *Call, d *described, decide func() Decision) Decision {
	key := e.answerKey(c, d)
	if key == "" || e.Registration == "" {
		return decide()
	}
	unlock, err := e.Store.LockAnswer(c.SessionID, key)
	if err != nil {
		return e.fail(ReasonInternal, err)
	}
	defer unlock()
	now := e.now()
	a, err := e.Store.GetAnswer(c.SessionID, key)
	if err == nil && now.Sub(a.Time) >= 0 && now.Sub(a.Time) < AnswerWindow &&
		!slices.Contains(a.Regs, e.Registration) && slices.Contains(a.Digests, d.digest) {
		var r onceRecord
		dec := json.NewDecoder(bytes.NewReader(a.Decision))
		dec.UseNumber()
		if dec.Decode(&r) == nil {
			a.Regs = append(a.Regs, e.Registration)
			if err := e.Store.PutAnswer(c.SessionID, key, a); err != nil {
				return e.fail(ReasonInternal, err)
			}
			out := r.decision()
			out.replayed = true
			return out
		}
	}
	out := decide()
	if out.Behavior != Allow {
		// Another registration deciding a refused call afresh refuses it
		// too: only an allow (a consumed approval, a rewrite the next hook
		// sees) must be given again rather than decided again.
		return out
	}
	rec, err := json.Marshal(recordOf(out))
	if err != nil {
		return out
	}
	digests := []string{d.digest}
	if out.ranDigest != "" && out.ranDigest != d.digest {
		digests = append(digests, out.ranDigest)
	}
	a = &state.Answer{Time: now.UTC(), Regs: []string{e.Registration}, Digests: digests, Decision: rec}
	// Without the record, the next registration would decide again: at
	// worst a deny, never a second allow of one approval.
	_ = e.Store.PutAnswer(c.SessionID, key, a)
	return out
}
