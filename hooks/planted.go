package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/undo"
)

// What the jail planted (issue 36, item 4). A held Bash call, once
// approved, runs outside the jail: a build, an install, a commit or a push
// then runs or ships what jailed calls wrote. The human deciding it is
// shown, beside the command, the files jailed calls changed in the project
// since the human's last decision (from the undo records the launcher
// keeps), so that a Makefile edited by a jailed call is seen before `make`
// runs unjailed.

// maxPlanted bounds the paths named; the rest are counted.
const maxPlanted = 12

// plantedScan bounds how far back the audit log is read for the human's
// last decision.
const plantedScan = 500

// plantedWarning is the warning a held Bash call carries, "" when jailed
// calls changed nothing since the human's last decision (or nothing is
// recorded: no undo records, another tool).
func (e *Engine) plantedWarning(c *Call) string {
	if c.ToolName != "Bash" || e.Env.StateDir == "" || e.namedProject(c) == "" {
		return ""
	}
	project := filepath.Clean(e.projectDir(c))
	st, err := undo.Open(e.Env.StateDir, project)
	if err != nil {
		return ""
	}
	// The audit log is read only when a jailed call left a record: a
	// held call where the jail never ran (every deny of a set-up without
	// it) reads one directory, not the log's last plantedScan entries.
	// The records are those of calls that ran at or after the human's
	// last decision, one started before it and still running among them.
	if recorded, err := st.Recorded(); err == nil && !recorded {
		return ""
	}
	since := e.lastHumanDecision()
	uid := os.Getuid()
	live := confine.LiveLaunch(confine.ScratchRoots(os.Getenv("TMPDIR"), uid), uid, project)
	ch, err := st.ChangedSince(since, maxPlanted, live)
	if err != nil {
		return "jailed calls may have changed the project since your last decision, but their undo records cannot be read (" + present.EscapeText(err.Error()) + "): look before approving"
	}
	paths, more, unfinished := ch.Paths, ch.More, ch.Unfinished
	if len(paths) == 0 && unfinished == 0 && ch.Unreadable == 0 && len(ch.Left) == 0 {
		return ""
	}
	when := "since your last decision"
	if since.IsZero() {
		when = "so far"
	}
	var b strings.Builder
	onlyLeft := len(paths) == 0 && unfinished == 0 && ch.Unreadable == 0
	switch {
	case onlyLeft:
		fmt.Fprintf(&b, "jailed calls ran %s", when)
	case len(paths) == 0:
		fmt.Fprintf(&b, "jailed calls may have changed files in the project %s, which an approved call, run outside the jail, may run or send", when)
	default:
		fmt.Fprintf(&b, "jailed calls changed these files in the project %s; an approved call runs outside the jail and may run or send them: ", when)
	}
	for i, p := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(present.EscapeText(p))
	}
	if more {
		b.WriteString(", and more")
	}
	if unfinished > 0 {
		fmt.Fprintf(&b, " (%d call(s) still running, or ended before their changes were recorded)", unfinished)
	}
	if ch.Unreadable > 0 {
		fmt.Fprintf(&b, " (the undo records of %d call(s) cannot be read: what they changed is not known)", ch.Unreadable)
	}
	if len(ch.Left) > 0 {
		// Their records leave these out (regenerable): a jailed call
		// that edited node_modules/x/index.js is named nowhere above,
		// and npm test, approved, runs it.
		if onlyLeft {
			b.WriteString(" that could write, unrecorded, in ")
		} else {
			b.WriteString("; and they could write, unrecorded, in ")
		}
		for i, l := range ch.Left {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(present.EscapeText(l) + "/")
		}
		if ch.LeftMore {
			b.WriteString(" and more")
		}
		b.WriteString(", which an approved call may run (reinstall them to be sure)")
	}
	b.WriteString(" (loopguard undo --list)")
	return b.String()
}

// lastHumanDecision is the time of the human's last decision in the audit
// log (an approval, a denial, a grant, an undo), the zero time when none
// is among its last entries.
func (e *Engine) lastHumanDecision() time.Time {
	var last time.Time
	if e.Audit == nil {
		return last
	}
	_, _ = e.Audit.Last(plantedScan, func(_ []byte, en audit.Entry) error {
		switch en.Event {
		case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
			return nil
		}
		switch en.Decision {
		case "approve", "deny", "grant", "undo":
			if en.Time.After(last) {
				last = en.Time
			}
		}
		return nil
	})
	return last
}
