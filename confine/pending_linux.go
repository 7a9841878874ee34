//go:build linux

package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/undo"
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

// pending is what a sweep needs of its plan, and the call's cgroup. Every
// path is bytes (base64 in JSON): a name need not be UTF-8, and JSON's
// strings would carry U+FFFD for it, a path no sweep finds (the
// fourteenth attack run's src/\xff was so never looked at). The plan's
// directories are a tree, each a name in its parent, so that the record
// grows with the names, not with their depth (a deep tree of long names
// made a record of 280 MB, over what a later launch reads).
type pending struct {
	Project, Scratch, RunDir, Cgroup []byte
	// ProjectID is the project's device and inode (Plan.RootID).
	ProjectID [2]uint64
	Started   int64
	Dirs      []pendingDir
	// Links are each a name in a directory of Dirs, as Dirs are.
	Links                      []pendingDir
	Held, Kept, Hooks, Imports [][]byte
	HeldDirs                   []pendingHeld
	// UndoState and UndoRecord name the launch's undo record (package
	// undo), "" when it takes none: a recovery marks it killed, so that
	// a held call's warning knows when the call ended (the seventy-ninth
	// attack run's call, killed after it wrote the Makefile across the
	// human's decision, was named by none).
	UndoState, UndoRecord []byte `json:",omitempty"`
	// Venvs are the project's Python environments the plan saw
	// (Plan.venvs).
	Venvs [][]byte `json:",omitempty"`
	// VersionFiles are the version files the plan saw
	// (Plan.versionFiles).
	VersionFiles [][]byte `json:",omitempty"`
	// PyDirs are the Python environments' directories the plan saw, by
	// device and inode (Plan.pyDirs).
	PyDirs []pendingHeld `json:",omitempty"`
	// HeldIn is the launch's state directory, whose held/RUN its own
	// sweep moves what it finds to (holder): a recovery closes that
	// folder where the launcher was killed before it could
	// (closeHeldBefore).
	HeldIn []byte `json:",omitempty"`
}

// pendingDir is a directory of the plan: Name in the directory Parent
// (an index before it in Dirs), or the whole path where Parent is -1.
type pendingDir struct {
	Parent int
	Name   []byte
	Ctime  int64
}

// pendingHeld is a held directory, by device and inode.
type pendingHeld struct {
	Path []byte
	ID   [2]uint64
}

func pathsBytes(ps []string) [][]byte {
	out := make([][]byte, len(ps))
	for i, p := range ps {
		out[i] = []byte(p)
	}
	return out
}

func pathsString(ps [][]byte) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// dirTree is dirs as pendingDirs, parents first, and links (paths) each
// as a name in one of them.
func dirTree(dirs map[string]int64, links []string) (tree, named []pendingDir) {
	paths := slices.Sorted(maps.Keys(dirs))
	index := make(map[string]int, len(paths))
	in := func(p string, before int) pendingDir {
		if j, ok := index[filepath.Dir(p)]; ok && j < before {
			return pendingDir{Parent: j, Name: []byte(filepath.Base(p))}
		}
		return pendingDir{Parent: -1, Name: []byte(p)}
	}
	tree = make([]pendingDir, 0, len(paths))
	for i, p := range paths {
		d := in(p, i)
		d.Ctime = dirs[p]
		tree = append(tree, d)
		index[p] = i
	}
	for _, l := range links {
		named = append(named, in(l, len(paths)))
	}
	return tree, named
}

// dirMap is what dirTree made, again (false: not such a tree).
func dirMap(tree, named []pendingDir) (map[string]int64, []string, bool) {
	paths := make([]string, len(tree))
	out := make(map[string]int64, len(tree))
	path := func(d pendingDir, before int) (string, bool) {
		switch {
		case d.Parent == -1:
			return string(d.Name), true
		case d.Parent >= 0 && d.Parent < before:
			return paths[d.Parent] + "/" + string(d.Name), true
		}
		return "", false
	}
	for i, d := range tree {
		p, ok := path(d, i)
		if !ok {
			return nil, nil, false
		}
		paths[i] = p
		out[p] = d.Ctime
	}
	links := make([]string, 0, len(named))
	for _, d := range named {
		p, ok := path(d, len(tree))
		if !ok {
			return nil, nil, false
		}
		links = append(links, p)
	}
	return out, links, true
}

// writePending records what p's sweep needs (cg: the call's cgroup, ""
// for none; heldIn: the launch's state directory) in its launch's directory, whole or not at all (a temp file
// renamed; no fsync: the record matters only while the machine runs on
// after the launcher was killed).
func writePending(p Plan, cg string, rec undoRecord, heldIn string) error {
	r := pending{Project: []byte(p.Project), ProjectID: p.RootID, Scratch: []byte(p.Scratch), RunDir: []byte(p.RunDir), Cgroup: []byte(cg),
		Started: p.started.UnixNano(), Held: pathsBytes(p.Held), Kept: pathsBytes(p.Kept), Hooks: pathsBytes(p.hooksPaths), Imports: pathsBytes(p.imports)}
	if len(p.venvs) > 0 {
		r.Venvs = pathsBytes(p.venvs)
	}
	if len(p.versionFiles) > 0 {
		r.VersionFiles = pathsBytes(p.versionFiles)
	}
	if rec.r != nil {
		r.UndoState, r.UndoRecord = []byte(rec.state), []byte(rec.r.ID())
	}
	if heldIn != "" {
		r.HeldIn = []byte(heldIn)
	}
	r.Dirs, r.Links = dirTree(p.Dirs, p.links)
	for _, h := range slices.Sorted(maps.Keys(p.heldDirs)) {
		r.HeldDirs = append(r.HeldDirs, pendingHeld{Path: []byte(h), ID: p.heldDirs[h]})
	}
	for _, d := range slices.Sorted(maps.Keys(p.pyDirs)) {
		r.PyDirs = append(r.PyDirs, pendingHeld{Path: []byte(d), ID: p.pyDirs[d]})
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) > maxPending {
		// Not reached by a plan's walk (its entries are bounded, each a
		// name here): a record no later launch would read is a sweep
		// that would not happen, so the program does not run.
		return fmt.Errorf("the record of what the sweep needs is %d bytes, over %d", len(b), maxPending)
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
func (r pending) plan() (Plan, bool) {
	dirs, links, ok := dirMap(r.Dirs, r.Links)
	if !ok {
		return Plan{}, false
	}
	p := Plan{Project: string(r.Project), RootID: r.ProjectID, Scratch: string(r.Scratch), RunDir: string(r.RunDir), started: time.Unix(0, r.Started),
		Dirs: dirs, Held: pathsString(r.Held), Kept: pathsString(r.Kept), links: links, hooksPaths: pathsString(r.Hooks), imports: pathsString(r.Imports),
		venvs: pathsString(r.Venvs), versionFiles: pathsString(r.VersionFiles), heldDirs: map[string][2]uint64{}}
	for _, h := range r.HeldDirs {
		p.heldDirs[string(h.Path)] = h.ID
	}
	if len(r.PyDirs) > 0 {
		p.pyDirs = map[string][2]uint64{}
		for _, d := range r.PyDirs {
			p.pyDirs[string(d.Path)] = d.ID
		}
	}
	return p, true
}

// movedFor is how long a killed call's record stays while its project's
// path leads to another directory, or while its sweep could not look
// everywhere or move everything (recoverKilled).
const movedFor = time.Hour

// undoLocking is how a recovery takes the project's undo lock, the lock a
// launch of the project holds from before its program starts until its
// own sweep has run (recordUndo): while the recovery holds it no call of
// the project runs beside its sweep. The eighty-fifth attack run's call B
// started while A lived, waited for A's lock, and ran once A's launcher
// was killed, beside the guard's recovery of A: B took the owner's bits
// of the directory holding A's git directory in a loop, the recovery
// could not look in it, and the git directory stayed (B's own plan had
// counted it as the user's).
type undoLocking int

const (
	// lockWait waits for the lock: the hook's and the guard's recovery.
	lockWait undoLocking = iota
	// lockTry takes it when it is free, and otherwise leaves the record
	// for later: a launch's look, before its plan, at every launch's
	// directory, of whatever project (a launch of its own project takes
	// the lock next, and recovers what is left then: recoverOwn).
	lockTry
	// lockHeld: the caller holds it (recoverOwn).
	lockHeld
)

// recoverKilled sweeps for the launch whose directory is run (in
// scratch's runs; locked: its launcher is gone and this launch holds its
// lock) when it left a record, and says so on w; it removes the record
// once read, but where it keeps it for a later try (the project's path
// leads elsewhere; the sweep could not look everywhere or move
// everything; the project's undo lock was busy with how lockTry), and
// reports whether it kept it. The call's processes are killed first; the
// sweep runs with the project's undo lock taken as how says. With project
// set (the hook's recovery, Recover), a record of another project's call
// is left as it is, for that project's next launch.
func recoverKilled(run, project string, e Env, w io.Writer, how undoLocking) (kept bool) {
	path := filepath.Join(run, pendingName)
	b, err := fsx.ReadRegular(path, maxPending, unix.O_NOFOLLOW)
	if os.IsNotExist(err) {
		return false
	}
	var r pending
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	var p Plan
	ok := false
	if err == nil {
		p, ok = r.plan()
	}
	if project != "" && (err != nil || !ok || p.Project != project) {
		return true
	}
	cgDir := string(r.Cgroup)
	switch {
	case err != nil:
	case !ok:
		err = errors.New("its directories are not a tree")
	case p.RunDir != run:
		err = fmt.Errorf("it names %q", p.RunDir)
	case cgDir != "" && !ownCgroupDir(cgDir):
		err = fmt.Errorf("its cgroup %q is not a launch's", cgDir)
	}
	if err != nil {
		fmt.Fprintf(w, "loopguard: a call was killed before its sweep, and its record %s cannot be used (%v): look in its project for what it made\n", path, err)
		_ = os.Remove(path)
		return false
	}
	if cgDir != "" {
		cg := &callCgroup{dir: cgDir, fd: -1}
		if err := cg.kill(); err != nil && !os.IsNotExist(err) {
			fmt.Fprintf(w, "loopguard: killing what a killed call left in its cgroup: %v\n", err)
		}
		cg.remove()
	}
	if how != lockHeld {
		unlock, busy := lockProjectUndo(r, p, e, how == lockWait, w)
		if busy {
			return true
		}
		defer unlock()
	}
	root, err := openProject(p.Project, p.RootID)
	switch {
	case errors.Is(err, errMoved) && time.Since(p.started) < movedFor:
		// Another directory, or a link, where the project was (a call of
		// an enclosing project's): the record stays, and a later launch
		// tries again.
		fmt.Fprintf(w, "loopguard: a call in %q, started %s, was killed before its sweep, and %v: not swept; a later launch tries again\n",
			p.Project, p.started.Format(time.RFC3339), err)
		return true
	case errors.Is(err, errMoved):
		// A project made again under its name (removed and cloned anew)
		// would keep the record, and its line, for good.
		fmt.Fprintf(w, "loopguard: a call in %q, started %s, was killed before its sweep, and %v: not swept, and not tried again\n",
			p.Project, p.started.Format(time.RFC3339), err)
		_ = os.Remove(path)
		return false
	case errors.Is(err, os.ErrNotExist):
		// The project is gone, and what the call made with it: nothing
		// to sweep, nor to tell.
		_ = os.Remove(path)
		return false
	case err != nil:
		fmt.Fprintf(w, "loopguard: a call in %q, started %s, was killed before its sweep, and its project cannot be opened (%v): nothing swept\n",
			p.Project, p.started.Format(time.RFC3339), err)
		_ = os.Remove(path)
		return false
	}
	p.Kept = keptOf(p.Project, p.Kept)
	held := &holder{p: p, e: e}
	lines := sweep(p, e, held, root)
	// What a +git call left in git's state for the user's --continue
	// (holdGitState), as its own launcher would have held it back.
	lines = append(lines, holdGitState(p.Project, root, p.Kept, p.started, held)...)
	_ = unix.Close(root)
	held.close()
	if line, ok := closeHeldBefore(r, p, e); ok {
		lines = append(lines, line)
	}
	// A sweep that could not look in a directory, or move what it found,
	// leaves what the call made there: the record stays, for the guard or
	// a later launch to sweep again (for movedFor: a directory that can
	// never be looked in would otherwise be said on every launch).
	again := unfinished(lines) && time.Since(p.started) < movedFor
	said := "nothing held back"
	switch {
	case again:
		said = "not wholly: the record stays, and the guard or a later launch sweeps again; its sweep says"
	case unfinished(lines):
		said = "not wholly, and not tried again; its sweep says"
	case len(lines) > 0:
		said = "its sweep says"
	}
	fmt.Fprintf(w, "loopguard: a call in %q, started %s, was killed before its sweep: swept now, %s\n",
		p.Project, p.started.Format(time.RFC3339), said)
	for _, l := range lines {
		fmt.Fprintln(w, oneLine(l))
	}
	if again {
		return true
	}
	if len(r.UndoRecord) > 0 && undoStateOf(string(r.UndoState), e) {
		why := "its launcher was killed before the call ended; swept " + time.Now().UTC().Format(time.RFC3339)
		if err := undo.MarkKilled(string(r.UndoState), p.Project, string(r.UndoRecord), why); err != nil {
			fmt.Fprintf(w, "loopguard: marking the killed call's undo record: %v\n", err)
		}
	}
	_ = os.Remove(path)
	return false
}

// lockProjectUndo takes the undo lock of the killed call's project, in the
// state directory its record names (the recovery's own where that names
// none), waiting for it (wait, said on w) or not (busy: another call of
// the project holds it). Where there is no lock to take (no state
// directory, no store: no call of the project takes one there; a
// read-only one, inside Claude Code's sandbox, where no launch records)
// the sweep runs without it.
func lockProjectUndo(r pending, p Plan, e Env, wait bool, w io.Writer) (unlock func(), busy bool) {
	state := e.Places.StateDir
	if len(r.UndoState) > 0 && undoStateOf(string(r.UndoState), e) {
		state = string(r.UndoState)
	}
	if state == "" {
		return func() {}, false
	}
	waiting := func() {
		fmt.Fprintf(w, "loopguard: a call in %q was killed before its sweep, and another confined call runs there now: its sweep waits for that call to end\n", p.Project)
	}
	f, err := undo.LockProject(state, p.Project, wait, waiting)
	if errors.Is(err, undo.ErrBusy) {
		return nil, true
	}
	if err != nil {
		return func() {}, false
	}
	return func() { _ = f.Close() }, false
}

// unfinished: a sweep's lines say it could not look in a directory of the
// project (unlooked) or could not move what it found out of it (hold).
func unfinished(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "loopguard: could not look in ") || strings.HasPrefix(l, "loopguard: could not move ") {
			return true
		}
	}
	return false
}

// closeHeldBefore takes every bit of the mode of the killed launch's own
// held/RUN folder, in the state directory its record names, when the
// launch moved something there before it was killed (holder.close, which
// does so, never ran), and says so: the eighty-fifth attack run killed a
// launcher between the two, and a whole git directory stayed in a folder
// of mode 0700 while the recovery said "nothing held back".
func closeHeldBefore(r pending, p Plan, e Env) (string, bool) {
	state := string(r.HeldIn)
	if state == "" || !undoStateOf(state, e) || !strings.HasPrefix(filepath.Base(p.RunDir), "run-") {
		return "", false
	}
	dir := filepath.Join(state, "held", filepath.Base(p.RunDir))
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false // none, or closed already (mode 0)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != e.UID || st.Mode&0o7777 == 0 {
		return "", false
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(dup), dir)
	names, _ := f.Readdirnames(-1)
	f.Close()
	if len(names) == 0 {
		return "", false
	}
	if unix.Fchmod(fd, 0) != nil {
		return fmt.Sprintf("loopguard: could not move %s out of reach: what the killed call's own sweep held back there before it was killed (%d entries) stays in a folder of mode %04o", dir, len(names), st.Mode&0o7777), true
	}
	return fmt.Sprintf("loopguard: held back before its launcher was killed, by its own sweep: %d entries in %s, a directory of mode 0 now: chmod u+rwx it to look, and run no git there", len(names), dir), true
}

// undoStateOf: dir, a record's undo state directory, is the recovery's
// own where it knows one (its environment's), and in any case the user's
// own and private: a record names it, and the mark is a write there (the
// eightieth attack run had a record forged where the user's own processes
// may write name another state directory's record of a live call).
func undoStateOf(dir string, e Env) bool {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return false
	}
	if e.Places.StateDir != "" && filepath.Clean(e.Places.StateDir) != dir {
		return false
	}
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 == 0 && ownedBy(fi, e.UID)
}

// keptOf is what of kept (a record's git directories, whose state
// holdGitState holds back by their paths) a +git launch of project names
// (NewPlan: the project's .git and the git directories its .git file
// names, read again now): a record that names another directory (the
// sixty-sixth attack run's, forged where a call could write the records,
// named another repository's .git outside the project) gets nothing of it
// moved.
func keptOf(project string, kept []string) []string {
	ok := append(linkedGitDirs(project), filepath.Join(project, ".git"))
	return slices.DeleteFunc(slices.Clone(kept), func(k string) bool { return !slices.Contains(ok, k) })
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
