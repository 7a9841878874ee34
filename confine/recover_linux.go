//go:build linux

package confine

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// KilledLaunch reports whether a scratch directory of the user uid under
// one of roots holds the record of a launch of project whose launcher is
// gone before its sweep: its directory not locked, its record there. It reads
// directories and takes a lock it lets go at once, so that a hook can ask
// after every call and start the recovery (RecoverArgs) only when there
// is one. With wait, a launch of project whose directory is still locked
// is waited for that long: a launcher killed a moment ago (the client's
// TaskStop answered before the kernel ended it) holds its lock until it
// has exited.
func KilledLaunch(roots []string, uid int, project string, wait time.Duration) bool {
	end := time.Now().Add(wait)
	for d := range pendingRuns(roots, uid) {
		// Another project's record waits for that project's next
		// launch: the hook would start a recovery that leaves it, after
		// every call, until then (the sixty-ninth attack run). The
		// record is read once, and only where it matters: a live
		// launch's is not read unless the hook waits.
		lock, err := lockRun(d, false)
		read := false
		if err != nil && time.Now().Before(end) {
			if !recordOf(d, project) {
				continue
			}
			read = true
			for err != nil && time.Now().Before(end) {
				time.Sleep(killedPoll)
				lock, err = lockRun(d, false)
			}
		}
		if err != nil {
			continue // its launcher lives
		}
		mine := read || recordOf(d, project)
		unlockRun(lock)
		if mine {
			return true
		}
	}
	return false
}

// LiveLaunch reports whether a scratch directory of the user uid under
// one of roots holds the record of a launch of project whose launcher
// lives: its directory locked. The guard of the project's launches
// (package hookmain) runs while there is one.
func LiveLaunch(roots []string, uid int, project string) bool {
	for d := range pendingRuns(roots, uid) {
		lock, err := lockRun(d, false)
		if err == nil {
			unlockRun(lock)
			continue // its launcher is gone, or it ended
		}
		if recordOf(d, project) {
			return true
		}
	}
	return false
}

// pendingRuns are the launch directories holding a record (pendingName)
// in the scratch directories of the user uid under roots, those the user's
// launches made alone (launchesOf).
func pendingRuns(roots []string, uid int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, r := range roots {
			scratch := ScratchDirIn(r, uid)
			if !launchesOf(scratch, uid) {
				continue
			}
			runs := filepath.Join(scratch, launchesDir)
			ents, err := os.ReadDir(runs)
			if err != nil {
				continue
			}
			for _, ent := range ents {
				if !ent.IsDir() || !strings.HasPrefix(ent.Name(), "run-") {
					continue
				}
				d := filepath.Join(runs, ent.Name())
				if _, err := os.Lstat(filepath.Join(d, pendingName)); err != nil {
					continue
				}
				if !yield(d) {
					return
				}
			}
		}
	}
}

// killedPoll is how often KilledLaunch looks again at a locked launch.
const killedPoll = 20 * time.Millisecond

// launchesOf: the scratch directory is one the launches of the user uid
// made (theirs, private), whose records they and the hook may read; one
// that is not (another user's, in a shared temp directory) is not read:
// its records could name any project, at any size (the seventy-first
// attack run's 64 MB record, of another user's, held the hook after every
// call to its deadline).
func launchesOf(scratch string, uid int) bool {
	fi, err := os.Lstat(scratch)
	return err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 == 0 && ownedBy(fi, uid)
}

// recordOf: the launch directory run holds a record of a launch of
// project. Only the record's first field is read (pending's Project, which
// a launch writes first), and no further than project's own would reach:
// the hook asks after every call, and a record may be up to maxPending
// bytes of other fields.
func recordOf(run, project string) bool {
	f, err := os.OpenFile(filepath.Join(run, pendingName), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// {"Project":"BASE64", and room for the spaces of another encoder.
	bound := int64(base64.StdEncoding.EncodedLen(len(project))) + 64
	dec := json.NewDecoder(io.LimitReader(f, bound))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	if t, err := dec.Token(); err != nil || t != "Project" {
		return false
	}
	var p []byte
	return dec.Decode(&p) == nil && string(p) == project
}

// recoverProject recovers, in the launches' directory runs, each launch
// of project whose launcher is gone before its sweep (recoverKilled);
// others' records, and the directories of launches that ended, are left
// for the launches that find them (pruneLaunchDirs).
func recoverProject(runs, project string, e Env, w io.Writer) {
	if !launchesOf(filepath.Dir(runs), e.UID) {
		return // not made by this user's launches: not read
	}
	for d := range unlockedRuns(runs) {
		recoverKilled(d, project, e, w, lockWait)
	}
}

// recoverOwn recovers, in the launch's own scratch directory, each launch
// of the plan's project whose launcher is gone before its sweep, with the
// project's undo lock held by the caller (undo.Options.Locked): before
// the before-state of its record, and before its program starts. A
// launch waits for an earlier one's undo lock after its plan; one killed
// meanwhile left what its call made for this launch's plan to count as
// the user's, and for this launch's program to run beside a recovery
// (the eighty-fifth attack run): recovered here, it is swept before. A
// launch of the project whose directory stays locked (its launcher lives
// but takes no undo record, or a recovery waits for this launch's lock)
// is looked at again for recoverOwnWait at most, and then left, to its
// launcher or to the recovery once this launch has ended.
func recoverOwn(p Plan, e Env, w io.Writer) {
	if p.Project == "" || p.Scratch == "" {
		return
	}
	runs := filepath.Join(p.Scratch, launchesDir)
	end := time.Now().Add(recoverOwnWait)
	for {
		locked := false
		ents, err := os.ReadDir(runs)
		if err != nil {
			return
		}
		for _, ent := range ents {
			d := filepath.Join(runs, ent.Name())
			if !ent.IsDir() || !strings.HasPrefix(ent.Name(), "run-") || d == p.RunDir || !recordOf(d, p.Project) {
				continue
			}
			lock, err := lockRun(d, false)
			if err != nil {
				locked = true
				continue
			}
			recoverKilled(d, p.Project, e, w, lockHeld)
			unlockRun(lock)
		}
		if !locked || time.Now().After(end) {
			return
		}
		time.Sleep(killedPoll)
	}
}

// recoverOwnWait bounds how long recoverOwn looks again at a launch of
// the project whose directory is locked: a hook that asked whether it
// was killed holds that lock a moment (KilledLaunch).
const recoverOwnWait = 100 * time.Millisecond

// closeInherited closes the descriptors this process was given beyond
// the standard three (fsx.CloseInherited).
func closeInherited() { _, _ = fsx.CloseInherited() }
