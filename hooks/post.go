package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// post compares what ran with what was allowed. With a call id it finds
// the allowed call by the id and compares; a host that sends none (Copilot,
// Gemini) is told apart only by what ran: a call allowed to run as exactly
// this input ran as approved, anything else is not known to loopguard.
func (e *Engine) post(c *Call) Decision {
	if policy.ClassOf(c.ToolName) == policy.ReadOnly {
		// The read-only fast path allows nothing (it abstains or denies):
		// there is no allowed call to compare with, and, as before the
		// call, nothing is read or written. Every agent's registration
		// reaches every tool, so this is on almost every step too.
		return Decision{Behavior: Abstain, Reason: ReasonReadOnly, Message: "loopguard: read-only tool"}
	}
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
	if a.Package != nil {
		if msg := putBackPackage(a.Package, c.ToolName); msg != "" {
			return Decision{Behavior: Alarm, Reason: ReasonExecConfig, Digest: d.digest, Grant: a.Grant, Principal: a.Principal,
				SystemMessage: msg, Context: msg}
		}
	}
	return Decision{Behavior: Abstain, Reason: ReasonRan, Digest: d.digest, Grant: a.Grant, Principal: a.Principal,
		Context: e.refusalContext(c, a)}
}

// putBackPackage checks a package.json a file tool's call was allowed to
// change on loopguard's model of the client's edit, which said the call
// changes none of the entries the project's git hooks run: where one
// changed all the same (the client applies an edit its own way: the
// seventy-ninth attack run's deletion joined two lines into a second
// scripts.test), the file is put back as it was before the call, and what
// was done is said ("" when the entries are as they were).
func putBackPackage(pin *state.PackagePin, tool string) string {
	if pin.Unreadable != "" {
		return fmt.Sprintf("loopguard: ALARM: the copy of %s kept before the %s call cannot be read back (%s) to check the entries the project's git hooks run (%s): look at it before your next commit", present.EscapeText(pin.Path), tool, present.EscapeText(pin.Unreadable), strings.Join(pin.Keys, ", "))
	}
	now, err := fsx.ReadRegular(pin.Path, policy.MaxPackageJSON, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("loopguard: ALARM: %s after the %s call cannot be read back (%v) to check the entries the project's git hooks run (%s): look at it before your next commit", present.EscapeText(pin.Path), tool, err, strings.Join(pin.Keys, ", "))
	}
	changed := changedEntries(pin.Before, now, pin.Keys)
	if len(changed) == 0 {
		return ""
	}
	what := fmt.Sprintf("the %s call changed %s of %s, which the project's git hooks run, where loopguard judged it would not (the agent's client applies an edit its own way)", tool, strings.Join(changed, ", "), present.EscapeText(pin.Path))
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(pin.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	put := func() error { return fsx.WriteFile(pin.Path, pin.Before, mode, true) }
	if pin.Absent {
		put = func() error { return os.Remove(pin.Path) } // there was none
	}
	if err := put(); err != nil {
		return "loopguard: ALARM: " + what + ", and putting the file back failed (" + present.EscapeText(err.Error()) + "): look at it before your next commit"
	}
	return "loopguard: ALARM: " + what + ": the file is put back as it was before the call. Only an exact approval of the call changes those entries."
}

// CallSummary is the call in one line, as the audit log has it.
func CallSummary(c *Call) string { return present.SummaryOfInput(c.ToolName, c.ToolInput) }
