//go:build linux

package confine

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// A launcher killed outright (SIGKILL: Claude Code's Bash timeout kills
// the command's tree so) ends before its sweep: what the call made in
// the project, a git directory under an ordinary name included, would
// stay for the user's next git. So before the program starts, a launch
// that writes the project leaves in its own directory what its sweep
// needs (pendingName), and holds a lock on that directory for as long as
// it lives (launchDir); a later launch of the user's that finds such a
// directory unlocked (its launcher gone) kills what is left in the dead
// call's cgroup and sweeps for it (recoverKilled), before its own
// program runs. Between the kill and that later launch the project is as
// the call left it: docs/confinement.md says so.

// pendingName is the sweep's record in a launch's own directory: the
// program writes only the directory's tmp, never beside it.
const pendingName = "pending.json"

// maxPending bounds what a later launch reads of a record.
const maxPending = 256 << 20

// pending is what a sweep needs of its plan, and the call's cgroup.
type pending struct {
	Project, Scratch, RunDir string
	Started                  int64
	Dirs                     map[string]int64
	Held, Kept, Links, Hooks []string
	HeldDirs                 map[string][2]uint64
	Cgroup                   string
}

// writePending records what p's sweep needs (cg: the call's cgroup, ""
// for none) in its launch's directory, whole or not at all (a temp file
// renamed; no fsync: the record matters only while the machine runs on
// after the launcher was killed).
func writePending(p Plan, cg string) error {
	b, err := json.Marshal(pending{Project: p.Project, Scratch: p.Scratch, RunDir: p.RunDir, Started: p.started.UnixNano(),
		Dirs: p.Dirs, Held: p.Held, Kept: p.Kept, Links: p.links, Hooks: p.hooksPaths, HeldDirs: p.heldDirs, Cgroup: cg})
	if err != nil {
		return err
	}
	tmp := filepath.Join(p.RunDir, pendingName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("failed to record what the sweep needs: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(p.RunDir, pendingName)); err != nil {
		return fmt.Errorf("failed to record what the sweep needs: %w", err)
	}
	return nil
}

// plan is the plan the record was written for, as the sweep reads it.
func (r pending) plan() Plan {
	return Plan{Project: r.Project, Scratch: r.Scratch, RunDir: r.RunDir, started: time.Unix(0, r.Started),
		Dirs: r.Dirs, Held: r.Held, Kept: r.Kept, links: r.Links, hooksPaths: r.Hooks, heldDirs: r.HeldDirs}
}

// recoverKilled sweeps for the launch whose directory is run (in
// scratch's runs; locked: its launcher is gone and this launch holds its
// lock) when it left a record, and says so on w; it removes the record
// either way once read.
func recoverKilled(run string, e Env, w io.Writer) {
	path := filepath.Join(run, pendingName)
	b, err := fsx.ReadRegular(path, maxPending, unix.O_NOFOLLOW)
	if os.IsNotExist(err) {
		return
	}
	var r pending
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	switch {
	case err != nil:
	case r.RunDir != run:
		err = fmt.Errorf("it names %s", r.RunDir)
	case r.Cgroup != "" && !ownCgroupDir(r.Cgroup):
		err = fmt.Errorf("its cgroup %s is not a launch's", r.Cgroup)
	}
	if err != nil {
		fmt.Fprintf(w, "loopguard: a call was killed before its sweep, and its record %s cannot be used (%v): look in its project for what it made\n", path, err)
		_ = os.Remove(path)
		return
	}
	if r.Cgroup != "" {
		cg := &callCgroup{dir: r.Cgroup, fd: -1}
		if err := cg.kill(); err != nil && !os.IsNotExist(err) {
			fmt.Fprintf(w, "loopguard: killing what a killed call left in its cgroup: %v\n", err)
		}
		cg.remove()
	}
	p := r.plan()
	held := &holder{p: p, e: e}
	lines := sweep(p, e, held)
	held.close()
	said := "nothing held back"
	if len(lines) > 0 {
		said = "its sweep says"
	}
	fmt.Fprintf(w, "loopguard: a call in %s, started %s, was killed before its sweep: swept now, %s\n",
		r.Project, time.Unix(0, r.Started).Format(time.RFC3339), said)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	_ = os.Remove(path)
}

// ownCgroupDir: dir is a launch's cgroup (cgroupPrefix) in the unified
// hierarchy, as newCallCgroup makes one.
func ownCgroupDir(dir string) bool {
	mnt := cgroup2Mount()
	return mnt != "" && filepath.IsAbs(dir) && filepath.Clean(dir) == dir && fsx.Within(dir, mnt) && dir != mnt &&
		strings.HasPrefix(filepath.Base(dir), cgroupPrefix)
}

// lockRun locks the launch directory dir for as long as the returned
// descriptor is open (close-on-exec: this process alone holds it): block
// false fails at once (EWOULDBLOCK) where another holds it.
func lockRun(dir string, block bool) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	how := unix.LOCK_EX
	if !block {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(fd, how); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// unlockRun lets go of a lock lockRun took.
func unlockRun(fd int) { _ = unix.Close(fd) }
