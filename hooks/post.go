package hooks

import (
	"fmt"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

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
