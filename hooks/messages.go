package hooks

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// said is the one spelling of what a deny tells: "loopguard: ", the
// reason code, then the detail. Every message that names its reason is
// built here (the Why line, ask mode and tests read the code back from
// the start of a message).
func said(reason, detail string) string {
	return "loopguard: " + reason + ": " + detail
}

// denied is the deny with reason, telling detail.
func denied(reason, detail string) Decision {
	return Decision{Behavior: Deny, Reason: reason, Message: said(reason, detail)}
}

// fail is the deny of a call the engine could not decide (the keyring, the
// state, the custody, an internal error), with what the user should do.
func (e *Engine) fail(reason string, err error) Decision {
	if errors.Is(err, audit.ErrStateLost) {
		// The key was read, and with it the keyring's anchor of the state
		// directory, which this one is not (LoadKey's check).
		reason = ReasonStateLost
	}
	msg := fmt.Sprint(err)
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
	return denied(reason, msg)
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
	if ch := present.Changes(d.canonical, false, present.Client{}, nil); ch != "" {
		if len(ch) > askBudget {
			cut := strings.LastIndexByte(ch[:askBudget], '\n') + 1
			ch = ch[:cut] + "... (diff cut here; all of it: loopguard show --full)\n"
		}
		b.WriteString("\n" + ch)
	}
	b.WriteString("\nThe exact call:\n" + present.RenderLimit(d.canonical, askBudget))
	return b.String()
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
	return said(reason, what+" (pending "+id+"): ask the user to run "+approverCommand(id, team)+
		" in their own terminal, then retry the identical call.")
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
	return said(reason, what+" for "+wait.Round(time.Second).String()+", but nobody decided, so it did not run (pending "+id+
		"). Do not retry it at once: tell the user it still waits in "+approverCommand(id, team)+", and once they approve it there, retry the identical call: it then runs (only its description may differ; any other change needs a new approval).")
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
	case ReasonChangedAfterApproval:
		return "calls that ran with no decision (jailed, or the file tools) changed the project after the user approved this call, which they were not shown, so the approval no longer covers it"
	case ReasonApprovedRunning:
		return "a call the user approved to run outside the jail is still running in this project, and it could run what this write changes, which they were not shown"
	}
	return ""
}

// whyLine is the reason's explanation, after the first line: its detail.
func whyLine(detail string) string {
	return "Why: " + detail + "."
}

// MaxNote bounds the human's refusal note shown to the model.
const MaxNote = 500

func deniedByHuman(p *state.Pending) Decision {
	msg := p.DecidedBy + " refused this exact call (" + p.ID + ")"
	if p.Note != "" {
		note := p.Note
		if len(note) > MaxNote {
			note = note[:MaxNote]
		}
		msg += ", saying: \"" + present.EscapeText(note) + "\""
	}
	d := denied(ReasonDeniedByHuman, msg+". Do not retry it.")
	d.Pending = p.ID
	return d
}

func approveHint(id string, team bool) string {
	if team {
		return "To run it, an approver must review and approve it from their own machine through Vault (" + approverCommand(id, true) +
			"). Then retry the identical call; any change needs a new approval."
	}
	return "To run it, the user must review and approve it in their own terminal (`loopguard review`, or `loopguard show " + id +
		"` then `loopguard approve " + id + "`). Then retry the identical call; any change needs a new approval."
}
