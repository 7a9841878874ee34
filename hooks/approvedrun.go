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
	if d.desc.Target == nil || e.Env.StateDir == "" {
		return Decision{}, false
	}
	// The project's, and those that hold it or lie in it; and where the
	// file is, when that is outside them (another session's project, or
	// a host that names no project).
	var places []string
	project := ""
	if e.namedProject(c) != "" {
		project = filepath.Clean(e.projectDir(c))
		places = append(places, project)
	}
	for _, p := range []string{d.desc.Target.Path, d.desc.Target.Resolved} {
		if filepath.IsAbs(p) && (project == "" || !fsx.Within(p, project)) {
			places = append(places, filepath.Clean(p))
		}
	}
	for _, at := range places {
		switch what, running, err := undo.RunningApproved(e.Env.StateDir, at); {
		case err != nil:
			return e.pending(ctx, c, d, ReasonApprovedRunning, "whether a call the user approved to run outside the jail runs where this write lands could not be asked ("+err.Error()+"), and such a call could run what it changes"), true
		case running:
			which := ""
			if what != "" {
				which = " (" + present.EscapeText(what) + ")"
			}
			return e.pending(ctx, c, d, ReasonApprovedRunning, "a call the user approved to run outside the jail is still running in this project or where this write lands"+which+", and it could run what this write changes, which its approver was not shown: wait for it to end, then write again, or ask the user to approve exactly this write"), true
		}
	}
	return Decision{}, false
}
