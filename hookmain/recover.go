package hookmain

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
)

// recoverAfter is the hook after a call (PostToolUse, PostToolUseFailure):
// when a launch of the user's was killed before its sweep (the client
// stopped a background call with SIGKILL: TaskStop, its time limit), the
// launcher's recovery sweeps for it now, in the call's project, instead of
// the project staying as the killed call left it (a git directory under an
// ordinary name, a new .envrc) until the next launch there, for an
// editor's or the user's git in between. What the recovery says goes to
// the model beside the call's result and to the user, as the next
// launch's would on its stderr. launcher is the binary whose `exec`
// recovers ("" when the kernel cannot confine: no launch ran).
func recoverAfter(ctx context.Context, launcher string, call *hooks.Call, project string, d hooks.Decision) hooks.Decision {
	if launcher == "" || project == "" {
		return d
	}
	// After a call that stopped a task, or a Bash call that failed (the
	// user's Esc, a kill), the launch it ended may not have exited yet.
	var wait time.Duration
	if policy.ToolOf(call.ToolName).StopsTask || call.Event == hooks.PostToolUseFailure && call.ToolName == "Bash" {
		wait = killedWait
	}
	said, _ := recoverProject(ctx, launcher, project, wait)
	if said == "" {
		return d
	}
	d.Context = joinLines(d.Context, said)
	d.SystemMessage = joinLines(d.SystemMessage, said)
	return d
}

// recoverProject runs the launcher's recovery for project when a launch of
// the user's there was killed before its sweep, waiting up to wait for a
// live one to exit first, and returns what the recovery said ("" when
// there was none to recover or it said nothing) and whether there was one
// (found). It waits for the
// recovery until recoverMargin before ctx's deadline, and no longer: a
// recovery still running then is left to finish, in a session of its own,
// and the answer says so. It is never killed: the call's own code chose
// what the sweep has to do, and the seventy-third attack run made it take
// longer than the hook's deadline (mode-0 directories a thousand deep),
// so that a recovery killed at the deadline left its git directory in the
// project after the session.
func recoverProject(ctx context.Context, launcher, project string, wait time.Duration) (said string, found bool) {
	uid := os.Getuid()
	roots := confine.ScratchRoots(os.Getenv("TMPDIR"), uid)
	if !confine.KilledLaunch(roots, uid, project, wait) {
		return "", false
	}
	if dl, ok := ctx.Deadline(); ok {
		// Room for the answer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-recoverMargin))
		defer cancel()
	}
	// What it says goes to a file of its own, unlinked, not to a pipe of
	// the hook's: a pipe whose reader is gone when the hook has answered
	// would end a recovery still running with SIGPIPE.
	notStarted := func(err error) string {
		return "loopguard: a call in " + project + " was killed before its sweep, and its sweep could not be started (" + err.Error() + "): the next launch there sweeps for it"
	}
	out, err := os.CreateTemp("", "loopguard-recover-")
	if err != nil {
		return notStarted(err), true
	}
	defer out.Close()
	_ = os.Remove(out.Name())
	cmd := exec.Command(launcher, confine.RecoverArgs(project, roots)...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = ownSession()
	if err := cmd.Start(); err != nil {
		return notStarted(err), true
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	running := false
	select {
	case <-done:
	case <-ctx.Done():
		running = true
	}
	b, _ := io.ReadAll(io.NewSectionReader(out, 0, maxRecoverSaid+1))
	said = strings.TrimSpace(string(b))
	if len(said) > maxRecoverSaid {
		said = said[:maxRecoverSaid] + "\n[...]"
	}
	if running {
		said = joinLines(said, fmt.Sprintf("loopguard: the sweep for a call in %s killed before its own sweep is still running (pid %d), outside the agent's sandbox: it holds back what the call left as it goes (loopguard undo --list, and the state directory's held/)", project, cmd.Process.Pid))
	}
	return said, true
}

// killedWait bounds how long the hook after such a call waits for a
// launch of its project to exit.
const killedWait = 2 * time.Second

// recoverMargin is what recoverAfter leaves of the hook's deadline.
const recoverMargin = time.Second

// maxRecoverSaid bounds what the recovery's lines add to the answer.
const maxRecoverSaid = 8 << 10

func joinLines(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}
