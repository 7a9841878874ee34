//go:build linux

package confine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"golang.org/x/sys/unix"
)

// Landlock cannot refuse a name: a right to create in a directory covers
// every name in it, so a program the capability lets write src/ can
// create src/.git (with core.fsmonitor set, run by the next git status
// an editor runs there), src/CLAUDE.md or src/.envrc. sweep runs after
// the launch's last process has exited: every executable configuration
// or instruction file that appeared in the project is moved out of it,
// into the state directory's held/ folder where that can be written (not
// under Claude Code's sandbox), else beside itself under a name nothing
// loads (NAME.loopguard-held-RANDOM), and each is said on stderr.
//
// In both modes the first stage refuses such a name when it is made
// (broker_linux.go, maker_linux.go), so the sweep is the second layer: it
// finds what the first stage cannot refuse, a git directory under
// ordinary names and a socket under a protected one, which exist in the
// project while the call runs (an unconfined process that reads them
// then, an editor's git integration polling the tree, is not stopped),
// and what a launch without a first stage made. docs/confinement.md says
// so.
//
// root is the project, opened by the caller as the directory the plan saw
// (openProject): the launcher when its call began, a later launch's
// recovery while the project's path leads there again.
func sweep(p Plan, e Env, held *holder, root int) []string {
	e.Places.HooksPaths, e.Places.Imports = p.hooksPaths, p.imports
	return newSweeper(p, e, held, root).run()
}

// run is the sweep: every directory of the plan that changed is looked
// in, then the old links are judged.
func (w *sweeper) run() []string {
	p := w.p
	// The directories of the plan found to be no directory now (a link or
	// a file in their place, or gone): nothing below one is looked up
	// (a parent sorts before what it holds), so that no stat goes through
	// a link the call put where a directory was: to a mount that hangs,
	// it would keep the sweep, and what the call made, waiting.
	notDir := map[string]bool{}
	for _, dir := range slices.Sorted(maps.Keys(p.Dirs)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(dir, p.Project), "/")
		if belowAny(notDir, rel) {
			continue
		}
		changed, isDir := w.changed(rel, p.Dirs[dir])
		if !isDir {
			notDir[rel] = true
		}
		switch {
		case changed:
			w.look(rel, false)
		case isDir && w.venvBins[rel]:
			w.lookVenvBin(rel)
		case isDir && w.pyDirMoved(dir, rel):
			// Another directory, of the same change time by chance.
			w.look(rel, false)
		}
	}
	w.lookVersionFiles()
	w.judgeOldLinks()
	return w.lines
}

// lookVenvBin looks in rel, the bin of a Python environment the plan saw,
// which did not change (no name made, removed or moved in it): a file
// there rewritten in place changes no directory. The broker refuses that
// rewrite while the environment has its pyvenv.cfg; a call that moved
// that out first rewrote bin/activate past it. What the call changed
// there is held back; the rest is left as it is (its links are judged
// as every old link is, by judgeOldLinks).
func (w *sweeper) lookVenvBin(rel string) {
	f, ents, ok := w.read(rel)
	if !ok {
		return
	}
	defer f.Close()
	fd := int(f.Fd())
	for _, ent := range ents {
		crel := rel + "/" + ent.name
		if !ent.typ.IsRegular() && ent.typ&os.ModeSymlink == 0 || w.kept(w.p.Project+"/"+crel, fd, ent.name) {
			continue
		}
		if since, ok := changedSince(fd, ent.name, w.p.started); !ok || since || w.movedIn(rel) {
			w.hold(fd, rel, ent.name, crel, whyVenvBin)
		}
	}
}

// byPlace: why is a reason to hold a file that a Python environment's
// python runs by where it is (a .pth, sitecustomize or usercustomize in
// site-packages, what is in an environment's bin), which a directory
// moved there brings with its own change time unmoved (movedIn).
func byPlace(why string) bool {
	return why == whyStartup || why == whyCustomize || why == whyVenvBin
}

// movedIn reports whether the directory rel, or one above it in the
// project, is not the directory the plan saw there: its path new to the
// plan (made or moved there by the call, or the plan could not list it),
// or a Python environment's directory whose device and inode the plan
// kept (Plan.pyDirs) another now. What is in such a directory came there
// in this call, whatever its own change time: rename(2) of a directory
// changes the moved directory's change time and its old and new parents'
// modification and change times, nothing below it (the eighty-sixth
// attack run made sp/zz.pth in one call, moved site-packages away and sp
// in its place in the next, and the .pth, of the first call's change
// time, ran in the user's next .venv/bin/python). By identity, not by
// the directory's change time since the call: that moves too when a
// name is made in it (a pip install in the call), and would have every
// .pth of the user's there held.
func (w *sweeper) movedIn(rel string) bool {
	if rel == "" {
		return false
	}
	if v, ok := w.moved[rel]; ok {
		return v
	}
	path := w.p.Project + "/" + rel
	ctime, seen := w.p.Dirs[path]
	v := !seen || ctime == -1 || w.pyDirMoved(path, rel)
	if !v {
		parent := filepath.Dir(rel)
		if parent == "." {
			parent = ""
		}
		v = w.movedIn(parent)
	}
	w.moved[rel] = v
	return v
}

// pyDirMoved: the directory path (rel in the project) is one of the
// plan's pyDirs, and another directory (or none) is there now.
func (w *sweeper) pyDirMoved(path, rel string) bool {
	id, kept := w.p.pyDirs[path]
	if !kept {
		return false
	}
	var st unix.Stat_t
	return w.stat(w.root, rel, &st) != nil || [2]uint64{st.Dev, st.Ino} != id
}

// belowAny reports whether rel is below one of dirs.
func belowAny(dirs map[string]bool, rel string) bool {
	for i := strings.LastIndexByte(rel, '/'); i > 0; i = strings.LastIndexByte(rel[:i], '/') {
		if dirs[rel[:i]] {
			return true
		}
	}
	return false
}

// sweeper is one sweep's state: what it found so far, and what it needs
// to find more.
type sweeper struct {
	p     Plan
	held  *holder
	root  int // the project, O_PATH
	guard entryGuard
	// before are the paths the plan held or kept.
	before map[string]bool
	// judge judges links; real is the project's physical path, which a
	// link's ".." climbs from.
	judge linkJudge
	real  string
	// judged are the links judged in a directory looked at; wayChanged:
	// the call made a link or a directory in the project, or moved one
	// (it is new where it is): what an old link leads to can change only
	// so, on its way (a name made a link, or a directory of another
	// depth).
	judged     map[string]bool
	wayChanged bool
	// venvs are the directories (rel) that are a Python environment's
	// besides those with a pyvenv.cfg now: the plan saw one there
	// (Plan.venvs), or this sweep held back the one there. venvBins
	// are the bin directories of those the plan saw.
	venvs, venvBins map[string]bool
	// moved are the directories (rel) found to be, or not to be, other
	// than the plan saw (movedIn).
	moved map[string]bool
	lines []string
	// stat is statBeneath (a test's own, to see what is looked up).
	stat func(root int, rel string, st *unix.Stat_t) error
}

func newSweeper(p Plan, e Env, held *holder, root int) *sweeper {
	w := &sweeper{p: p, held: held, root: root, guard: newEntryGuard(e.Places.Prepare(), p.Project),
		before: map[string]bool{}, judged: map[string]bool{}, real: p.Project, stat: statBeneath}
	for _, h := range p.Held {
		w.before[h] = true
	}
	for _, s := range p.Kept {
		w.before[s] = true
	}
	w.venvs, w.venvBins, w.moved = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, v := range p.venvs {
		rel, ok := strings.CutPrefix(v, p.Project)
		if ok && (rel == "" || rel[0] == '/') {
			rel = strings.TrimPrefix(rel, "/")
			w.venvs[rel] = true
			w.venvBins[strings.TrimPrefix(rel+"/bin", "/")] = true
		}
	}
	// The launcher's scratch directory, where the call's caches outlast
	// it: the one place outside the project it could leave a git
	// directory for a link in the project to lead to.
	w.judge = linkJudge{outs: outsOf(p.Scratch, e.Places.StateDir), dirs: map[string]bool{}, spent: new(int)}
	if r, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(root)); err == nil {
		w.real = r
	}
	return w
}

// changed reports whether the directory rel the plan saw, with change
// time ctime, is there and changed since, and whether it is a directory
// still (not gone, nor a link or a file in its place); one the sweep
// cannot look at is said. One fstatat from the project, not an open
// beneath it and an fstat (a third of the sweep's system calls in a
// project of 8,000 directories): it does not follow rel's last name, and
// the sweep asks of no directory below one that is a link now
// (belowAny); what a link on the way would lead to (a call beside this
// one swapping a directory for a link between two of these) is judged
// by its change time alone, and a directory found changed is read
// beneath the project through no link. A link put in a directory's
// place changed that directory's parent, which the sweep looks in (a
// link held or judged there, a directory moved there looked at whole,
// as new).
func (w *sweeper) changed(rel string, ctime int64) (changed, dir bool) {
	var st unix.Stat_t
	err := w.stat(w.root, rel, &st)
	if errors.Is(err, unix.EACCES) {
		w.lines = append(w.lines, ownerMayReach(w.root, "", rel)...)
		err = w.stat(w.root, rel, &st)
	}
	if err != nil {
		// Gone, or replaced by a file or a link: its parent changed, and
		// was looked at. Anything else is said.
		if !gone(err) {
			w.lines = append(w.lines, unlooked(rel, err))
			return false, true
		}
		return false, false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false, false
	}
	return st.Ctim.Nano() != ctime, true
}

// statBeneath stats rel, below the directory open as root ("" root
// itself), not following rel's last name if it is a link; a path that
// is not below root by its names (absolute, or with a ..) is refused as
// openBeneath refuses it.
func statBeneath(root int, rel string, st *unix.Stat_t) error {
	if rel == "" {
		return unix.Fstat(root, st)
	}
	if !filepath.IsLocal(rel) {
		return unix.EXDEV
	}
	return unix.Fstatat(root, rel, st, unix.AT_SYMLINK_NOFOLLOW)
}

// kept: path, held or kept by the plan, is still what the plan saw (a
// directory: the same one, name "" for dirfd itself, else name in it),
// and is left as it is.
func (w *sweeper) kept(path string, dirfd int, name string) bool {
	if !w.before[path] {
		return false
	}
	id, dir := w.p.heldDirs[path]
	if !dir {
		return true
	}
	var st unix.Stat_t
	var err error
	if name == "" {
		err = unix.Fstat(dirfd, &st)
	} else {
		err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return err == nil && [2]uint64{st.Dev, st.Ino} == id
}

// newLink: the link name in the directory open as fd was made (or moved,
// or linked to) since the plan: its change time is then (the kernel's
// coarse clock, a tick behind at most: 50 ms of slack). The user's own
// links from before the call are not judged as the call's; one whose time
// cannot be read is.
func (w *sweeper) newLink(fd int, name string) bool {
	since, ok := changedSince(fd, name, w.p.started)
	return since || !ok
}

// unlistedAtPlan: the plan could not list the directory rel (its walk
// recorded it as -1).
func (w *sweeper) unlistedAtPlan(rel string) bool {
	dir := w.p.Project
	if rel != "" {
		dir += "/" + rel
	}
	ctime, seen := w.p.Dirs[dir]
	return seen && ctime == -1
}

// changedSince reports whether the entry name in the directory open as fd
// changed (was made, written, moved, its mode changed) at or after t, by
// its change time (the kernel's coarse clock, a tick behind at most: 50
// ms of slack); ok is false when its times cannot be read.
func changedSince(fd int, name string, t time.Time) (since, ok bool) {
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, false
	}
	return !time.Unix(st.Ctim.Unix()).Before(t.Add(-50 * time.Millisecond)), true
}

// hold moves name, in the directory open as fd (rel in the project), out
// of the project, its owner's bits given back first if the call took
// them, and says so with why.
func (w *sweeper) hold(fd int, rel, name, crel, why string) {
	w.lines = append(w.lines, mayMove(fd, shown(rel), name, crel)...)
	where, beside, err := w.held.move(fd, name, crel)
	if err != nil {
		w.lines = append(w.lines, fmt.Sprintf("loopguard: could not move %s out of the project (%v), and it is still there: remove it before you run git or an agent there. It is %s", crel, err, why))
		return
	}
	w.lines = append(w.lines, fmt.Sprintf("loopguard: held back %s: %s (%s)", crel, why, where))
	if beside == "" {
		return
	}
	// Still in the project, under another name: a directory there is
	// looked at as one the plan saw, its git directories (itself or
	// below) left without HEAD and config. A later call could link to it,
	// and a shell that follows the link finds it.
	nrel := beside
	if rel != "" {
		nrel = rel + "/" + beside
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, beside, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		w.look(nrel, true)
	}
}

// look reads the directory rel (below the project, "" the top) from the
// project without following a link: every process of the call has
// exited, but another call may run, and a link it put where a directory
// was must not make this unconfined process move the home's .bashrc. It
// reports whether rel, new in the project, is a git directory under an
// ordinary name (isGitDir), for its caller to move it out whole; a
// directory the plan saw that the call made one has its HEAD and config
// moved out instead, which leaves git nothing to find there (one that was
// a git directory before the call is held, and left as it is). asSeen
// takes rel as a directory the plan saw.
func (w *sweeper) look(rel string, asSeen bool) bool {
	f, ents, ok := w.read(rel)
	if !ok {
		return false
	}
	defer f.Close()
	fd := int(f.Fd())
	if rel != "" && isGitDir(ents) && !w.kept(w.p.Project+"/"+rel, fd, "") {
		if _, seen := w.p.Dirs[w.p.Project+"/"+rel]; !seen && !asSeen {
			return true
		}
		for _, ent := range ents {
			if (ent.name == "HEAD" || ent.name == "config") && !(w.unlistedAtPlan(rel) && !w.newLink(fd, ent.name)) {
				w.hold(fd, rel, ent.name, rel+"/"+ent.name, whyConfig)
			}
		}
	}
	if rel == "" && isGitDir(ents) {
		// The project's top made a git directory (a HEAD, objects and
		// refs beside a config setting core.pager): git, finding no
		// .git there or a broken one, takes the top for a bare
		// repository, and the user's git log in the project ran its
		// pager (the seventeenth attack run). A HEAD or config the call
		// made or changed is held back; a bare repository's own, from
		// before the call, is left.
		for _, ent := range ents {
			if (ent.name == "HEAD" || ent.name == "config") && w.newLink(fd, ent.name) {
				w.hold(fd, rel, ent.name, ent.name, whyConfig)
			}
		}
	}
	// A directory that holds protected entries of two names or more
	// (.github): each of its names is judged (entryGuard.judge).
	holder := w.guard.holder(w.p.Project, rel)
	for _, ent := range ents {
		w.entry(fd, rel, ent, holder)
	}
	w.extensionsBesideNew(fd, rel, ents)
	return false
}

// extensionsBesideNew holds back, in the directory open as fd (rel in the
// project; ents what it held when read), each extension module
// (NAME.so, NAME.cpython-311-x86_64-linux-gnu.so) beside a module's
// source or package that this call made or changed (NAME.py, or a
// directory NAME, by its own change time), whenever the extension module
// came. shadowsSource judges an extension module the call made beside a
// source; this judges a source the call made beside an extension module
// of before, which shadowed nothing when it came (a module built in
// place, whose source is elsewhere): the eighty-sixth attack run removed
// app/util.py in one call, built app/util.cpython-311-x86_64-linux-gnu.so
// in a second (no source beside it, so not held), and wrote util.py back
// from git in a third. git status was clean, and the user's python
// main.py ran the .so. The extension module is held, not the source: the
// source is what git shows and the project means, and the extension
// module is what the user's python would run in its place. One the user
// built in place beside its source (mypyc's), whose source the call
// replaced (an editor's save, sed -i), is held too: it would run in place
// of the call's edit.
func (w *sweeper) extensionsBesideNew(fd int, rel string, ents []dirEnt) {
	exts := map[string][]string{}
	for _, ent := range ents {
		if (ent.typ.IsRegular() || ent.typ&os.ModeSymlink != 0) && strings.HasSuffix(ent.name, ".so") {
			if stem, _, _ := strings.Cut(ent.name, "."); stem != "" {
				exts[stem] = append(exts[stem], ent.name)
			}
		}
	}
	if len(exts) == 0 {
		return
	}
	for _, ent := range ents {
		stem, ok := ent.name, ent.typ.IsDir()
		if !ok && (ent.typ.IsRegular() || ent.typ&os.ModeSymlink != 0) {
			stem, ok = strings.CutSuffix(ent.name, ".py")
		}
		if !ok || strings.Contains(stem, ".") || len(exts[stem]) == 0 {
			continue
		}
		// Still there (not held above), and made or changed by the call.
		if since, ok := changedSince(fd, ent.name, w.p.started); !ok || !since {
			continue
		}
		for _, name := range exts[stem] {
			crel := name
			if rel != "" {
				crel = rel + "/" + name
			}
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || w.kept(w.p.Project+"/"+crel, fd, name) {
				continue // held above, or the plan's to leave
			}
			w.hold(fd, rel, name, crel, whyExtensionSource)
		}
		delete(exts, stem)
	}
}

// read opens the directory rel and reads its entries; one it cannot is
// said.
func (w *sweeper) read(rel string) (*os.File, []dirEnt, bool) {
	fd, lines, err := reach(w.root, "", rel, unix.O_RDONLY|unix.O_DIRECTORY)
	w.lines = append(w.lines, lines...)
	if err != nil {
		if !gone(err) {
			w.lines = append(w.lines, unlooked(rel, err))
		}
		return nil, nil, false
	}
	f := os.NewFile(uintptr(fd), rel)
	des, err := f.ReadDir(-1)
	if err != nil {
		f.Close()
		w.lines = append(w.lines, unlooked(rel, err))
		return nil, nil, false
	}
	ents := make([]dirEnt, len(des))
	for i, d := range des {
		ents[i] = dirEnt{name: d.Name(), typ: d.Type()}
	}
	return f, ents, true
}

// entry looks at ent, in the directory open as fd (rel in the project).
func (w *sweeper) entry(fd int, rel string, ent dirEnt, inHolder bool) {
	crel := ent.name
	if rel != "" {
		crel = rel + "/" + ent.name
	}
	path := w.p.Project + "/" + crel
	if w.kept(path, fd, ent.name) {
		return
	}
	if ent.typ.IsRegular() || ent.typ&os.ModeSymlink != 0 {
		// Python's bytecode, which the jail's own python writes in its
		// private cache (PYTHONPYCACHEPREFIX), never here: one the call
		// made is what the user's next python runs in place of its
		// source, unseen by git (helper run 32's note). An extension
		// module beside a module's source likewise (python prefers it):
		// the forty-fifth run's util.cpython-311-x86_64-linux-gnu.so,
		// which *.so in .gitignore kept from git status. A link so named
		// too: python follows it (the forty-seventh run's link to a .so
		// the call left in build/). An environment's startup files
		// (startupWhy), and what is in its bin (the eighty-third run's
		// bin/python3 replaced by a script).
		why := startupWhy(rel, ent.name)
		switch {
		case why != "":
		case isBytecode(ent.name):
			why = whyBytecode
		case shadowsSource(fd, ent.name):
			why = whyExtension
		case w.venvBin(fd, rel):
			why = whyVenvBin
		case policy.IsVersionFile(ent.name) && versionFileRuns(fd, ent.name):
			why = whyVersionFile
		}
		if why != "" {
			if since, ok := changedSince(fd, ent.name, w.p.started); !ok || since || byPlace(why) && w.movedIn(rel) {
				if why == whyVenvConfig {
					w.venvs[rel] = true // its bin is an environment's still (venvBin)
				}
				w.hold(fd, rel, ent.name, crel, why)
				return
			}
		}
	}
	if held, _ := w.guard.judge([]byte(path), ent.name, ent.typ, inHolder); held {
		if w.unlistedAtPlan(rel) && !w.newLink(fd, ent.name) {
			// In a directory the plan could not list (a call beside this
			// one took its bits), so not held, and no rule reached: there
			// before this call, and not its (the nineteenth attack run had
			// the user's nested repository moved out as this call's).
			return
		}
		w.hold(fd, rel, ent.name, crel, whyConfig)
		return
	}
	if ent.typ&os.ModeSymlink != 0 {
		w.judged[crel] = true
		made := w.newLink(fd, ent.name)
		w.wayChanged = w.wayChanged || made
		// A link whose text cannot be read is held: where it leads is
		// not known.
		target, err := fsx.ReadlinkAt(fd, ent.name)
		out, why := true, whyLink
		if err == nil {
			out, why = w.judge.judge(filepath.Join(w.real, filepath.Dir(crel)), target, made)
		}
		if out {
			w.hold(fd, rel, ent.name, crel, why)
			return
		}
	}
	if ent.typ.IsDir() {
		_, seen := w.p.Dirs[path]
		w.wayChanged = w.wayChanged || !seen
		if !seen && w.look(crel, false) { // new, or moved here: all of it is new here
			w.hold(fd, rel, ent.name, crel, whyConfig)
		}
	}
}

// judgeOldLinks judges every link the plan saw that no directory looked
// at judged: a later call changes what an old link leads to without
// touching it (an attack run made src/a, and src/l to a/../../tmp/...;
// the next call made src/a a link to /usr/bin, and src/l led into the Go
// cache). One that leads into the scratch or the state directory now is
// held, whoever made it. Only after a call that made or moved a link or a
// directory (wayChanged): 2,000 links cost a call 26 ms of CPU.
func (w *sweeper) judgeOldLinks() {
	if !w.wayChanged {
		return
	}
	fd, open := -1, "\x00" // the directory open, the walk's links being in walk order
	defer func() {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
	}()
	for _, l := range w.p.links {
		crel := strings.TrimPrefix(strings.TrimPrefix(l, w.p.Project), "/")
		if w.judged[crel] {
			continue
		}
		dir, name := filepath.Split(crel)
		dir = strings.TrimSuffix(dir, "/")
		if dir != open {
			if fd >= 0 {
				_ = unix.Close(fd)
			}
			open = dir
			var err error
			if fd, err = openBeneath(w.root, dir, unix.O_PATH|unix.O_DIRECTORY); err != nil {
				fd = -1 // gone, or its directory is: looked at above
			}
		}
		if fd < 0 {
			continue
		}
		if target, err := fsx.ReadlinkAt(fd, name); err == nil {
			if out, why := w.judge.judge(filepath.Join(w.real, dir), target, false); out {
				w.hold(fd, dir, name, crel, why)
			}
		}
	}
}

// The reasons the sweep gives for what it holds back.
const (
	whyConfig = "executable configuration or an instruction file this call created, which reaches the project only with the user's approval"
	// whyBytecode: a .pyc stamped with its source's time and size is
	// what the user's next python runs instead of the source.
	whyBytecode = "Python bytecode this call made, which the user's next python would run in place of its source (git shows none of it); a confined python writes its bytecode in its private cache"
	// whyExtension: an extension module is what python imports before
	// the source beside it.
	whyExtension = "a Python extension module this call made beside a module's source, or named as a module of Python's standard library, which the user's next python would import in place of that source (git shows none of it when *.so is ignored)"
	// whyExtensionSource: the source came after the extension module.
	whyExtensionSource = "a Python extension module beside a module's source or package that this call made or changed, which the user's next python would import in place of that source (git shows none of it when *.so is ignored); the extension module may be older than the call (built where no source was)"
	// whyStartup: a .pth file's import lines run at every start of the
	// environment's python.
	whyStartup = "a Python startup file (.pth) this call made or changed in an environment's site-packages, whose import lines every python of that environment runs when it starts (pip list, an editor's interpreter check)"
	// whyCustomize: site imports sitecustomize and usercustomize at
	// every start, from site-packages where the standard library has
	// none first on the path.
	whyCustomize = "a Python startup module (sitecustomize or usercustomize) this call made or changed in an environment's site-packages, which every python of that environment imports when it starts (pip list, an editor's interpreter check)"
	// whyVenvConfig: pyvenv.cfg's home is where the environment's python
	// takes its standard library from.
	whyVenvConfig = "a Python environment's pyvenv.cfg this call made or changed, whose home names where the environment's python takes its standard library from (one in the project makes every start of that python run the call's code)"
	// whyVenvBin: an environment's bin is what the user starts (its
	// python, pip) and sources (activate) unconfined.
	whyVenvBin = "a file or link this call made or changed in a Python environment's bin, which the user starts (python, pip) or sources (activate) unconfined, as an editor's interpreter check does"
	whyLink    = "a link into the launcher's private caches or loopguard's state (which outlast a call), above them, or through /proc: a git directory a call left there would run its configuration in the git of a shell that follows the link"
	// whyLinkCost: a link whose way costs more to judge than one is given
	// (maxLinkCost, maxSweepLinkCost).
	whyLinkCost = "a link whose way takes more to resolve than loopguard looks at for one (or after this call's links used up what a sweep looks at): where it leads is not known, so it is held rather than followed by the user's shell or git"
)

// linkJudge judges the links the sweep finds (leadsOut): outs are the
// places no link may lead (outsOf); dirs (nil: none kept) are the paths
// found to be directories (not links) on their ways, each looked at once
// (a node_modules/.bin of 2,000 links cost a launch 44 ms of CPU
// without).
type linkJudge struct {
	outs []string
	dirs map[string]bool
	// spent is what this sweep's judgments cost, to maxSweepLinkCost
	// (nil: not counted).
	spent *int
}

// A judgment's cost is the names the kernel looks up for it: each name
// resolved costs the names of the path it resolves to (an lstat of a
// path 800 deep walks 800). maxLinkCost bounds one link's judgment, and
// maxSweepLinkCost one sweep's: past either, the link is held (moved out,
// and said: whyLinkCost) unjudged, whoever made it; an old link left so
// was the seventy-sixth attack run's way in (the call moved the cost of
// its way onto it through a link of its own, and made it lead into the
// Go cache, where it had left a git directory). The seventy-fourth attack run's links to a link of 4 KB of text,
// 800 deep and resolved 40 times over, cost 0.4 s each: 100 of them kept
// a killed call's recovery busy for 15 s, and its git directory in the
// project that long after the session; 100 such links the plan saw made
// every later launch's judgment of old links take 40 s. A real link costs
// tens (node_modules/.bin/x, ../../lib/x at a depth of ten), a pnpm
// install of 100,000 links about ten million.
const (
	maxLinkCost      = 1 << 14
	maxSweepLinkCost = 1 << 25
)

// leadsOut reports whether a link in the directory dir (a physical
// path) whose text is target leads where the call could leave a git
// directory outside the project for a shell that follows the link, and
// git, to find: into one of j.outs (the launcher's scratch directory, whose
// caches outlast the call; the state directory, whose held/ keeps what
// the sweep moved out, whole; /proc and /dev/fd, which name another place
// for each process that follows them), on the way or at its end, or
// above one (a link to /tmp or to the home, below which a longer path
// reaches them). It is resolved
// as the kernel does, a name at a time, each link on the way followed
// (an attack run's src/u to /usr/bin, then src/l to u/../../tmp/...,
// which a lexical clean took for a path in the project). A name that
// does not exist yet ends the walk: what follows is judged as written,
// and held if it climbs with ".." (a directory made there later, in the
// project, would lead it out; a link made there later is judged when it
// is made). A link the call did not make (made false: one the plan saw,
// or an old one in a directory the call changed) is held only where it
// leads now: the user's own link to the home stays.
func (j linkJudge) leadsOut(dir, target string, made bool) bool {
	out, _ := j.judge(dir, target, made)
	return out
}

// judge is leadsOut, and the reason to give for holding the link:
// whyLink, or whyLinkCost where its judgment ran past its bounds.
func (j linkJudge) judge(dir, target string, made bool) (bool, string) {
	out, over := j.walk(dir, target, made)
	if over {
		return true, whyLinkCost
	}
	return out, whyLink
}

// walk is leadsOut's resolution; over: it ran past maxLinkCost or the
// sweep's maxSweepLinkCost, and out is not known.
func (j linkJudge) walk(dir, target string, made bool) (out, over bool) {
	outs := j.outs
	related := func(p string) bool {
		return slices.ContainsFunc(outs, func(o string) bool { return fsx.Within(p, o) || made && fsx.Within(o, p) })
	}
	// in: a step of the way is in one of outs (through a link the call
	// left in a cache: src/l to a cache's s, s a link to /usr, which a
	// read-only call, which has no sweep, then made a git directory).
	in := func(p string) bool {
		return slices.ContainsFunc(outs, func(o string) bool { return fsx.Within(p, o) })
	}
	cur := dir
	queue := strings.Split(target, "/")
	if filepath.IsAbs(target) {
		cur = "/"
	}
	for hops, cost := 0, 0; len(queue) > 0; {
		step := 1 + strings.Count(cur, "/")
		if cost += step; cost > maxLinkCost {
			return false, true
		}
		if j.spent != nil {
			if *j.spent += step; *j.spent > maxSweepLinkCost {
				return false, true
			}
		}
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if in(next) {
			return true, false
		}
		if j.dirs[next] {
			cur = next
			continue
		}
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); errors.Is(err, unix.EACCES) {
			// A directory on the way that cannot be searched now (the
			// call took its bits) can be later: where the link leads then
			// is not known.
			return true, false
		} else if err != nil {
			// Not there (or not to be looked at): the rest as written.
			return made && slices.Contains(queue, "..") || related(filepath.Join(append([]string{next}, queue...)...)), false
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			if j.dirs != nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				j.dirs[next] = true
			}
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return true, false // ELOOP for the kernel; never followed
		}
		t, err := os.Readlink(next)
		if err != nil {
			return true, false
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		queue = append(strings.Split(t, "/"), queue...)
	}
	return related(cur), false
}

// outsOf are the places linkJudge keeps links from: scratch (the
// launcher's scratch directory, "": none), state (the state directory)
// and the undo directory beside it (the undo records, and the listings
// a plan takes its walk from), as written and with their links
// resolved, /proc and /dev/fd.
func outsOf(scratch, state string) []string {
	outs := []string{"/proc", "/dev/fd"}
	for _, d := range []string{scratch, state, policy.UndoDir(state)} {
		if d == "" {
			continue
		}
		outs = append(outs, d)
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			outs = append(outs, real)
		}
	}
	return outs
}

// gone reports whether err says a directory the plan saw is no longer
// one to look in: removed, or replaced by a file or a link.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}

// unlooked is the line for a directory of the project the sweep could not
// look in: whatever the call made there is unchecked, and the user is
// told where.
func unlooked(rel string, err error) string {
	return fmt.Sprintf("loopguard: could not look in %s for executable configuration or instruction files this call created (%v): review it before git, an editor or the agent reads it", shown(rel), err)
}

// shown names the directory rel of the project for the user.
func shown(rel string) string {
	if rel == "" {
		return "the project's top"
	}
	return rel
}

// reach opens the directory rel below root with flags, after a call:
// where the call took its owner's read or search bit from rel, or from a
// directory on the way to it (root included), each is given back first,
// and lines say so. A directory the call made unlistable (chmod 111
// src/d) can still be crossed by name, by git and by the next session,
// and one made unsearchable (chmod 600) hides what is in it (the
// twentieth attack run: a link into the Go cache, unreadable so, was
// taken for harmless): what it holds is looked at all the same. The
// sweep reads the project so; the put-back of git's pins and the holds in
// git's directory read that directory so (the thirty-first attack run's
// chmod 311 .git and .git/rebase-merge hid a planted module directory
// and a rebase's exec line from them). base names root for the user (""
// the project, as shown says).
func reach(root int, base, rel string, flags int) (int, []string, error) {
	fd, err := openBeneath(root, rel, flags)
	var lines []string
	if errors.Is(err, unix.EACCES) {
		lines = ownerMayReach(root, base, rel)
		fd, err = openBeneath(root, rel, flags)
	}
	if errors.Is(err, unix.EACCES) {
		if line, ok := ownerMayList(root, base, rel); ok {
			lines = append(lines, line)
			fd, err = openBeneath(root, rel, flags)
		}
	}
	if err != nil {
		return -1, lines, err
	}
	// Listable but not searchable: its entries cannot be looked at (a
	// link's text, a subdirectory) until its owner's search bit is back,
	// before any of them is judged.
	if line, ok := ownerMaySearch(fd, named(base, rel)); ok {
		lines = append(lines, line)
	}
	return fd, lines, nil
}

// named names rel below base for the user: rel of the project (base "")
// as shown does, else its path.
func named(base, rel string) string {
	if base == "" {
		return shown(rel)
	}
	return filepath.Join(base, rel)
}

// ownerMayReach gives each directory on the way to rel (root, and rel's
// ancestors) that its owner may not search its owner's bits back, and
// says so: the nineteenth attack run's chmod 600 src left the sweep
// unable to reach src/pkg, which it had made a git directory, and the
// user's git status there ran its config.
//
// Each directory is opened from the one before it, and named only when
// it is said: opening each from root again was quadratic in the depth, and
// the seventy-third attack run's 300 mode-0 directories a thousand deep
// held a recovery past the hook's deadline (12 s).
func ownerMayReach(root int, base, rel string) []string {
	var lines []string
	// root first, through its own descriptor: a lookup of "." in it needs
	// its search bit (the eighty-second attack run's chmod 0 of the
	// project's top hid everything in it from the sweep).
	if mode, ok := ownerBack(root, 0o500); ok {
		lines = append(lines, searchBack(named(base, ""), mode))
	}
	if rel == "" {
		return lines // listing it is ownerMayList's
	}
	parts := strings.Split(rel, "/")
	fd, err := openBeneath(root, "", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil
	}
	for i := range parts {
		if i > 0 {
			next, err := openBeneath(fd, parts[i-1], unix.O_PATH|unix.O_DIRECTORY)
			_ = unix.Close(fd)
			if err != nil {
				return lines
			}
			fd = next
		}
		if mode, ok := ownerBack(fd, 0o500); ok {
			lines = append(lines, searchBack(named(base, strings.Join(parts[:i], "/")), mode))
		}
	}
	_ = unix.Close(fd)
	return lines
}

// ownerMaySearch gives the directory open as fd (named as shown) its
// owner's bits back where its owner may not read or search it, and says
// so.
func ownerMaySearch(fd int, name string) (string, bool) {
	mode, ok := ownerBack(fd, 0o500)
	if !ok {
		return "", false
	}
	return searchBack(name, mode), true
}

// searchBack says that the directory name (mode before) has its owner's
// bits back.
func searchBack(name string, mode uint32) string {
	return fmt.Sprintf("loopguard: this call took its owner's read or search bit from %s (mode %04o); its owner's read, write and search bits are back, so that what is in it is looked at", name, mode)
}

// ownerMayList gives the directory rel back its owner's read, write and
// search bits, through a descriptor that follows no link, and says so.
func ownerMayList(root int, base, rel string) (string, bool) {
	fd := root
	if rel != "" {
		var err error
		if fd, err = openBeneath(root, rel, unix.O_PATH|unix.O_DIRECTORY); err != nil {
			return "", false
		}
		defer unix.Close(fd)
	}
	mode, ok := ownerBack(fd, 0)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("loopguard: this call made %s unreadable to its owner (mode %04o); its owner's read, write and search bits are back, so that what the call left in it is looked at", named(base, rel), mode), true
}

// mayMove gives the directory open as parent (shown as named) and name in
// it (shown as cname), when it is a directory, their owner's bits back
// where the call took what moving name out needs, and says so: the
// parent's write and search bits, and a directory's own write bit (its
// .. changes when it moves to another parent: an attack run's git
// directory left at 0555 could not be moved to held/).
func mayMove(parent int, named, name, cname string) []string {
	var lines []string
	if line, ok := ownerMayMove(parent, named, "what the call left in it is"); ok {
		lines = append(lines, line)
	}
	if c, err := unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		if line, ok := ownerMayMove(c, cname, "it is"); ok {
			lines = append(lines, line)
		}
		_ = unix.Close(c)
	}
	return lines
}

// ownerMayMove gives the directory open as fd (named as shown) its
// owner's write and search bits back when the call took them (chmod 555
// src/d after making src/d/.git: nothing could be moved out of it; a
// directory moved to another parent needs its own too), and says so: so
// that what ("it is") is moved out.
func ownerMayMove(fd int, name, what string) (string, bool) {
	mode, ok := ownerBack(fd, 0o300)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("loopguard: this call took its owner's write or search bit from %s (mode %04o); its owner's read, write and search bits are back, so that %s moved out", name, mode, what), true
}

// ownerBack gives the directory open as fd (by O_PATH or not) its owner's
// read, write and search bits, unless it has every bit of need already,
// and returns the mode it had.
func ownerBack(fd int, need uint32) (mode uint32, ok bool) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || need != 0 && st.Mode&need == need {
		return 0, false
	}
	// An O_PATH descriptor takes no fchmod; its /proc entry names the
	// same directory, never a link.
	if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o700); err != nil {
		return 0, false
	}
	return st.Mode & 0o7777, true
}

// openBeneath opens rel ("" the directory itself) below the directory
// root without following any link.
func openBeneath(root int, rel string, flags int) (int, error) {
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
}

// holder moves what the sweep found out of the project: into the state
// directory's held/RUN/, named by a number and its path in the project
// (each / as %2F, cut to fit a name), or, where that cannot be written
// (Claude Code's sandbox, or another mount), beside itself as
// NAME.loopguard-held-RANDOM (loopguard-held-RANDOM where that is too
// long). A name is never reused (RENAME_NOREPLACE, and the next number or
// another random one): attack runs made both moves fail (a path too long
// for one name, two paths with the same %2F form, a NAME.loopguard-held
// and loopguard-held-1 to 400 made beforehand), and the git directory
// stayed for the user's git to run.
type holder struct {
	p    Plan
	e    Env
	dir  int // held/RUN, opened on first use; -1 when it cannot be
	done bool
	n    int // the names taken in held/ so far
}

// move moves name, in the directory parent (rel: its path, said), out of
// the way, and says where it went; beside is its new name when that is
// in parent.
func (h *holder) move(parent int, name, rel string) (where, beside string, err error) {
	if !h.done {
		h.done, h.dir = true, -1
		if h.e.Places.StateDir != "" {
			d := filepath.Join(h.e.Places.StateDir, "held", filepath.Base(h.p.RunDir))
			if err := os.MkdirAll(d, 0o700); err == nil {
				if fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
					h.dir = fd
				}
			}
		}
	}
	flat := strings.ReplaceAll(strings.TrimPrefix(rel, "/"), "/", "%2F")
	if len(flat) > 200 {
		flat = flat[len(flat)-200:]
	}
	for h.dir >= 0 {
		h.n++
		to := strconv.Itoa(h.n) + "-" + flat
		err := unix.Renameat2(parent, name, h.dir, to, unix.RENAME_NOREPLACE)
		if err == nil {
			return "moved to " + filepath.Join(h.e.Places.StateDir, "held", filepath.Base(h.p.RunDir), to) + ", a directory of mode 0: chmod u+rwx it to look, and run no git there", "", nil
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	// A link is removed, its text said: beside itself it would still
	// lead where it led (an attack run's link into the Go cache, renamed
	// in place under Claude Code's sandbox, still did).
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		target, err := fsx.ReadlinkAt(parent, name)
		if err != nil {
			return "", "", err
		}
		if err := unix.Unlinkat(parent, name, 0); err != nil {
			return "", "", err
		}
		return fmt.Sprintf("removed: it was a link to %q", target), "", nil
	}
	// Beside itself, under a name no process of the call could know
	// beforehand: an attack run made NAME.loopguard-held and
	// loopguard-held-1 to 400 first, every move failed, and its git
	// directory stayed (the usual case under Claude Code's sandbox, whose
	// state directory is read-only or on another mount: EXDEV).
	err = unix.EEXIST
	for range 8 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", "", err
		}
		to := name + ".loopguard-held-" + hex.EncodeToString(b[:])
		if len(to) > 255 {
			to = "loopguard-held-" + hex.EncodeToString(b[:])
		}
		if err = unix.Renameat2(parent, name, parent, to, unix.RENAME_NOREPLACE); err == nil {
			return "renamed " + filepath.Join(filepath.Dir(rel), to), to, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	return "", "", err
}

// close closes held/RUN and, when anything was moved there, takes every
// bit of its mode: what the call made stays for the user to look at on
// purpose (chmod u+rwx first), not for a shell that follows a link there,
// or a curious git run inside it, to run (a git directory moved there is
// whole).
func (h *holder) close() {
	if h.done && h.dir >= 0 {
		if h.n > 0 {
			_ = unix.Chmod("/proc/self/fd/"+strconv.Itoa(h.dir), 0)
		}
		_ = unix.Close(h.dir)
	}
}

// isStartupFile: name, in the directory rel (a path in the project, or a
// directory's as the descriptor's link shows it), is a file that a
// Python environment's python runs or reads at every start (startupWhy).
func isStartupFile(rel, name string) bool { return startupWhy(rel, name) != "" }

// startupWhy is why name, in the directory rel (isStartupFile's), is a
// Python environment's startup file, "" when it is none: a .pth file in a
// site-packages directory, whose import lines site.py runs (the
// fifty-seventh attack run's .venv/lib/python3.11/site-packages/zz.pth
// ran in the user's next pip list); sitecustomize or usercustomize there
// (a module of any suffix, or what is in such a package), which site.py
// imports where the standard library has none first on the path
// (pyenv's and python.org's pythons: the eighty-third attack run's); a
// pyvenv.cfg anywhere, whose home names the standard library's place
// (the eighty-third run's home = $PWD/evil/bin ran its encodings).
func startupWhy(rel, name string) string {
	switch {
	case name == "pyvenv.cfg":
		return whyVenvConfig
	case isSitePackages(filepath.Base(rel)) && strings.HasSuffix(name, ".pth"):
		return whyStartup
	case isSitePackages(filepath.Base(rel)) && isCustomize(name), inCustomize(rel):
		return whyCustomize
	}
	return ""
}

// isCustomize: name is the module site.py imports at start
// (sitecustomize.py, sitecustomize.cpython-311-x86_64-linux-gnu.so, a
// package sitecustomize), by the name before its first dot.
func isCustomize(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	return stem == "sitecustomize" || stem == "usercustomize"
}

// inCustomize: the directory rel is, or is in, a sitecustomize or
// usercustomize package in a site-packages directory.
func inCustomize(rel string) bool {
	prev := ""
	for name := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if isSitePackages(prev) && isCustomize(name) {
			return true
		}
		prev = name
	}
	return false
}

// venvBin: the directory open as fd (rel in the project) is a Python
// environment's bin: named bin, and its parent holds a pyvenv.cfg,
// looked up from fd itself (its "..", which no link the call makes
// redirects), or the plan saw one there, or this sweep held the one
// there back (w.venvs: a call that moved the environment's pyvenv.cfg
// out, or had it held, leaves the user's .venv/bin/python what they
// start).
func (w *sweeper) venvBin(fd int, rel string) bool {
	if filepath.Base(rel) != "bin" {
		return false
	}
	if venvConfigBeside(fd) {
		return true
	}
	parent := filepath.Dir(rel)
	if parent == "." {
		parent = ""
	}
	return w.venvs[parent]
}

// venvConfigBeside reports whether the directory open as fd has a
// pyvenv.cfg beside it (in its "..", as the kernel has it, not a path a
// call could swap): fd is a Python environment's bin.
func venvConfigBeside(fd int) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, "../pyvenv.cfg", &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// isBytecode: name is a Python bytecode file (NAME.cpython-311.pyc, an
// optimised .opt-1.pyc, a sourceless module's NAME.pyc).
func isBytecode(name string) bool { return strings.HasSuffix(name, ".pyc") }

// shadowsSource: name is an extension module (NAME.so, NAME.abi3.so,
// NAME.cpython-311-x86_64-linux-gnu.so, in the directory open as fd) of a
// module whose source or package is beside it (NAME.py, NAME/): python's
// importer tries the extension suffixes first, so it would be imported
// instead (a package's __init__.so before its __init__.py too; and an
// __init__.so makes a namespace package, whose modules the importer
// found without one, a package of that code); and one named as a module
// of Python's standard library, wherever it is.
func shadowsSource(fd int, name string) bool {
	if !strings.HasSuffix(name, ".so") {
		return false
	}
	stem, _, _ := strings.Cut(name, ".")
	if stem == "" {
		return false
	}
	if stem == "__init__" || policy.IsPythonStdlib(stem) {
		// __init__ makes its directory a package, a namespace package's
		// too; a standard library module's name (argparse.so) is what
		// python -m and -c import from the directory they run in, before
		// the standard library (the ninety-third attack run's git
		// filter, python3 -m nbstripout, ran the top's argparse.py).
		return true
	}
	var st unix.Stat_t
	return unix.Fstatat(fd, stem+".py", &st, unix.AT_SYMLINK_NOFOLLOW) == nil ||
		unix.Fstatat(fd, stem, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// oneLine is a line of the launcher's own, as printed: a name in it is
// the call's choice, and a newline there printed a line of the call's
// making that read as the launcher's (the thirty-third attack run's
// "loopguard: put back .git/config", from a directory named so). Control
// characters (C0, DEL, C1), format characters (bidirectional overrides),
// characters that print as nothing (fsx.HiddenRune), the backslash (so an
// escape is told from a name's own text) and bytes that are not UTF-8
// are escaped; other characters, a name's letters in any script
// included, are kept.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\\':
			b.WriteString(`\\`)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r < 0x20 || r == 0x7f || r == '\\' || 0x80 <= r && r < 0xa0 || r == utf8.RuneError || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || fsx.HiddenRune(r)
}
