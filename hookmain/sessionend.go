package hookmain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/undo"
)

// sessionEnd is the hook at Claude Code's SessionEnd. When the user ends a
// session with a background call still running ("Exit and stop tasks"),
// Claude Code (2.1.332) stops that call and then runs the SessionEnd hooks;
// under its sandbox the launcher dies outright, with bubblewrap's
// namespace, before its own sweep, and no PostToolUse follows. What such a
// call left in the project (a git directory under an ordinary name, a new
// .envrc) would stay there for the user's git or editor after the session,
// until the next launch in the project. So the hook waits for a launch of
// the session's project to exit (killedWait; not at /clear or a resume,
// after which a background call may run on), runs the launcher's recovery
// for that project's records (recoverProject), and records what it said in
// the audit log (killed_call_swept): the client is exiting, and shows no
// hook's output. It decides nothing: Claude Code takes no answer from a
// SessionEnd hook, so every path exits 0, with what went wrong on stderr
// (the client's debug log).
//
// deadline is the registration's (agents.DefaultDeadline when it names
// none), within the timeout init registers beside it.
func sessionEnd(stdin io.Reader, stderr io.Writer, deadline time.Duration) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "loopguard: SessionEnd: internal error: %v\n", r)
			code = agents.ExitOK
		}
	}()
	if deadline <= 0 {
		deadline = agents.DefaultDeadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var p struct {
		Event   string `json:"hook_event_name"`
		Session string `json:"session_id"`
		Cwd     string `json:"cwd"`
		Reason  string `json:"reason"`
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxSessionEndPayload+1))
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "loopguard: SessionEnd: reading the payload: %v\n", err)
		return agents.ExitOK
	case len(b) > maxSessionEndPayload:
		fmt.Fprintf(stderr, "loopguard: SessionEnd: the payload is over %d bytes\n", maxSessionEndPayload)
		return agents.ExitOK
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Event != hooks.SessionEnd {
		fmt.Fprintf(stderr, "loopguard: SessionEnd: not a SessionEnd payload (hook_event_name %q, %v)\n", p.Event, err)
		return agents.ExitOK
	}
	// The project Claude Code names, as the engine's (ProjectOf); the
	// payload's cwd only where it names none.
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if !filepath.IsAbs(project) {
		project = p.Cwd
	}
	if !filepath.IsAbs(project) {
		fmt.Fprintf(stderr, "loopguard: SessionEnd: no project (CLAUDE_PROJECT_DIR and cwd are not absolute paths)\n")
		return agents.ExitOK
	}
	l := sessionEndLauncher()
	if l == "" {
		return agents.ExitOK // no launch could have run
	}
	// The client stops the session's background calls when it exits; at
	// /clear and at a resume they may run on, and a wait for them would
	// hold the user's next prompt.
	wait := killedWait
	if p.Reason == "clear" || p.Reason == "resume" {
		wait = 0
	}
	dir, err := state.DefaultDir()
	if err != nil {
		dir = ""
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		dir = ""
	}
	// Where the guard of the project's launches runs (GuardLaunches), it
	// sweeps for a stopped call whose launcher is still exiting, within a
	// second of its exit, and a call that runs on (moved to the
	// background, another session's) is not waited for: the exit is not
	// held.
	if dir != "" && undo.Guarded(dir, filepath.Clean(project)) {
		wait = 0
	}
	said, _ := recoverProject(ctx, l, filepath.Clean(project), wait)
	if said == "" {
		return agents.ExitOK
	}
	fmt.Fprintln(stderr, said)
	if dir == "" {
		return agents.ExitOK
	}
	if err := recordSwept(dir, hooks.SessionEnd, p.Session, "swept for a call the session's end stopped before its launcher's sweep, in "+filepath.Clean(project), said); err != nil {
		fmt.Fprintf(stderr, "loopguard: SessionEnd: recording the sweep in the audit log: %v\n", err)
	}
	return agents.ExitOK
}

// recordSwept appends to the audit log of the state directory dir that a
// sweep for a killed call was made (killed_call_swept), and what it said.
// Without the log's lock (AppendLate): a call of another session may hold
// it, and the client bounds the hook's time.
func recordSwept(dir, event, session, detail, said string) error {
	e := audit.Entry{Event: event, Session: session, Decision: hooks.Abstain, Reason: hooks.ReasonKilledSwept, Detail: detail, Told: said}
	return audit.Open(filepath.Join(dir, "audit")).AppendLate(e)
}

// selfPath is this binary, its links resolved.
func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(self)
}

// sessionEndLauncher is the launcher beside this binary whose recovery
// sweeps ("" where no launch could have run); a variable for tests.
var sessionEndLauncher = func() string {
	self, err := selfPath()
	if err != nil {
		return ""
	}
	return launcher(self)
}

// maxSessionEndPayload bounds the SessionEnd payload the hook reads.
const maxSessionEndPayload = 1 << 20
