package hookmain

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/loopguard/loopguard/confine"
)

// GuardLaunches is the guard of the project's launches, which runs in the
// project's watcher (undo.WatchMain): outside the agent's sandbox, a
// process of the user's that the hook starts with the first confined call
// that can write the project, and which no agent's exit, crash or kill
// ends. A launcher killed before its sweep (its client killed with it, a
// terminal closed, a Ctrl-C the client answers with SIGKILL, Claude Code's
// "Exit and stop tasks") leaves what its call made in the project (a git
// directory under an ordinary name, a new .envrc) for the user's git or
// editor; the hooks after a call, at SessionEnd, and the next launch sweep
// for it only where they run. The guard looks every guardPoll for a launch
// of the project whose launcher is gone before its sweep, whatever the
// agent and however it ended, runs the launcher's recovery for it (the
// binary running the guard: the watcher is loopguard-exec), and records
// what the recovery said in the audit log (killed_call_swept, event
// guardEvent). It ends when the project is gone, or after guardIdle
// without a live launch of the project.
func GuardLaunches(stateDir, project string) {
	self, err := selfPath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopguard: the guard of %s: %v\n", project, err)
		return
	}
	guard(stateDir, project, self, guardTimes{idle: guardIdle, poll: guardPoll, recoverWait: guardRecoverWait})
}

// guardTimes are the guard's idle time, how often it looks, and how long
// it waits for one recovery (a variable for tests).
type guardTimes struct{ idle, poll, recoverWait time.Duration }

// guardIdle: the guard ends after this long without a live launch of its
// project (the watcher's own idle time).
const guardIdle = 30 * time.Minute

// guardPoll is how often the guard looks.
const guardPoll = 500 * time.Millisecond

// guardEvent is the audit log's event of what the guard recorded.
const guardEvent = "guard"

func guard(stateDir, project, launcher string, tm guardTimes) {
	idle, poll := tm.idle, tm.poll
	uid := os.Getuid()
	roots := confine.ScratchRoots(os.Getenv("TMPDIR"), uid)
	last, wait := time.Now(), poll
	for {
		if _, err := os.Lstat(project); err != nil {
			return
		}
		if confine.LiveLaunch(roots, uid, project) {
			last = time.Now()
		} else if time.Since(last) > idle {
			return
		}
		// A recovery is never killed (recoverProject): one still running
		// after guardRecoverWait goes on in a session of its own, holding
		// its record, and the guard looks on for the others.
		ctx, cancel := context.WithTimeout(context.Background(), tm.recoverWait)
		said, ran := recoverProject(ctx, launcher, project, 0)
		cancel()
		if said != "" {
			if err := recordSwept(stateDir, guardEvent, "", "swept for a call in "+project+" whose launcher was gone before its sweep", said); err != nil {
				fmt.Fprintf(os.Stderr, "loopguard: the guard of %s: recording the sweep in the audit log: %v\n", project, err)
			}
		}
		// A recovery that leaves a killed launch to recover (one that
		// cannot be started, or cannot end the record, or passes over it
		// without a word: the seventy-ninth attack run's record of 64 MB
		// with a second Project had recoveries take 23% of a core) is not
		// run twice a second for as long as the guard runs: each time it
		// is found again, the guard waits twice as long, up to
		// guardMaxWait.
		if ran && confine.KilledLaunch(roots, uid, project, 0) {
			wait = min(2*wait, guardMaxWait)
		} else {
			wait = poll
		}
		time.Sleep(wait)
	}
}

// guardMaxWait bounds the guard's wait after recoveries that leave a
// killed launch to recover.
const guardMaxWait = time.Minute

// guardRecoverWait is how long the guard waits for one recovery.
const guardRecoverWait = time.Minute
