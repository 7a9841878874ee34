package hooks

import (
	"context"
	"path/filepath"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/undo"
)

// whileApprovedRuns holds a file tool's write (one no exact approval
// covers: exact came first) while a call the user approved to run outside
// the jail runs in the call's project (undo.ApprovedRunning; the launcher
// holds the project for it, confine.runUnconfined): what the write
// changes, that call could run, and its approver was not shown it (the
// ninety-fourth attack run's Write of deploy.sh while the approved make
// ran). Jailed calls wait for it in the launcher instead. A lock that
// cannot be asked after holds the write too. ok is false for every other
// call, and where no such call runs.
func (e *Engine) whileApprovedRuns(ctx context.Context, c *Call, d *described) (Decision, bool) {
	if d.desc.Target == nil || e.Env.StateDir == "" || e.namedProject(c) == "" {
		return Decision{}, false
	}
	// The project's, and those that hold it or lie in it; and where the
	// file is, when that is outside them (another session's project).
	project := filepath.Clean(e.projectDir(c))
	running, err := undo.ApprovedRunning(e.Env.StateDir, project)
	for _, p := range []string{d.desc.Target.Path, d.desc.Target.Resolved} {
		if err == nil && !running && filepath.IsAbs(p) && !fsx.Within(p, project) {
			running, err = undo.ApprovedRunning(e.Env.StateDir, filepath.Clean(p))
		}
	}
	switch {
	case err != nil:
		return e.pending(ctx, c, d, ReasonApprovedRunning, "whether a call the user approved to run outside the jail runs in this project could not be asked ("+err.Error()+"), and such a call could run what this write changes"), true
	case running:
		which := ""
		if what := undo.ApprovedCall(e.Env.StateDir, project); what != "" {
			which = " (" + present.EscapeText(what) + ")"
		}
		return e.pending(ctx, c, d, ReasonApprovedRunning, "a call the user approved to run outside the jail is still running in this project"+which+", and it could run what this write changes, which its approver was not shown: wait for it to end, then write again, or ask the user to approve exactly this write"), true
	}
	return Decision{}, false
}
