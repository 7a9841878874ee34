package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
)

// pending records the call for review and denies it for reason, telling
// the model detail and what the human must run. In wait mode it holds the
// call until the human decides.
func (e *Engine) pending(ctx context.Context, c *Call, d *described, reason, detail string) Decision {
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
	if e.Env.StateDir != "" && e.namedProject(c) != "" {
		p.Related = e.relatedPlaces(c, d, filepath.Clean(e.projectDir(c)))
	}
	p.SetPlanted(e.plantedWarning(c, p.Related))
	if c.TypesLater {
		// The host lets the model type into the command once it runs: the
		// human and the model are told plainly what an approval covers.
		if cmd, ok := c.ToolInput["command"].(string); ok {
			for _, w := range present.StdinDanger(cmd, d.sketch()) {
				p.Warnings = append(p.Warnings, w)
				detail += ". " + w
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
		// The file the call changes, as the call recorded it: what the
		// human is shown the edit against should the file change before
		// they decide (present.Changes), the only file an approval lets
		// the call run on. Display only; a larger file keeps none.
		if t := d.desc.Target; t != nil {
			lands := t.Path
			if t.Resolved != "" {
				lands = t.Resolved
			}
			if snap := present.SnapshotAt(lands, t.SHA256, state.MaxSnapshot); snap != nil {
				_ = e.Store.PutSnapshot(id, snap)
			}
		}
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
			return Decision{Behavior: Deny, Reason: ReasonPendingFull, Message: said(ReasonPendingFull, fmt.Sprintf(
				"this call was not queued for review: %v. Wait for the human to decide the calls already waiting (loopguard review), then retry.\n%s", err, whyLine(detail))), why: err.Error()}
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
		return Decision{Behavior: Deny, Reason: reason, Pending: id, Message: waitEndedLine(reason, id, wait, e.Custody != nil) + "\n" + whyLine(detail), why: said(reason, detail)}
	}
	return Decision{Behavior: Deny, Reason: reason, Pending: id, Message: heldLine(reason, id, e.Custody != nil) + "\n" + whyLine(detail) + "\n" + approveHint(id, e.Custody != nil), why: said(reason, detail)}
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
			dec := denied(ReasonAbandoned, "the agent stopped waiting for this held call (Esc, or its session ended), so it did not run (pending "+id+")")
			dec.Pending = id
			return dec, true
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
