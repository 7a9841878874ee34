//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/internal/gitconfig"
)

// pinnedEntry is what a pinned path held before the call: nothing
// (missing), a file's mode and bytes, a link's target, or a directory's
// entries.
type pinnedEntry struct {
	missing bool
	mode    uint32 // st_mode
	data    []byte
	target  string
	entries map[string]pinnedEntry
}

// pinned is the copy of a launch's git pins, by their path. Every pin is
// read and put back from a descriptor of its directory opened beneath its
// git directory without following a link (openBeneath): the first stage
// is unconfined, and a call (or another running beside it) that made
// .git/modules/x a link to ~/.config must not make it read or write
// there.
type pinned struct {
	roots []string // the git directories (Plan.Kept)
	// project and projectFd: a root in the project is opened from the
	// project's descriptor (the directory the call began in), through no
	// link: by its path, a link swapped in where the project was made the
	// snapshot another directory's and the put-back write it into the
	// user's repository (the seventeenth attack run).
	project   string
	projectFd int
	entries   map[string]pinnedEntry
	// names are the entries of each root's modules/ tree before the
	// call (moduleNames), each with its type (st_mode's S_IFMT bits).
	names map[string]uint32
	// looked is set after the call (restore): a directory of a git
	// directory the call took its owner's read or search bit from is
	// given them back before it is looked into (reach), and looked holds
	// the lines that say so. Before the call the user's modes stand: a
	// pin that cannot be read stops the launch.
	looked *[]string
}

// maxPinned bounds what one pinned file's copy holds: a hook is a
// script, a config some kilobytes.
const maxPinned = 8 << 20

// snapshotPins copies each pin of paths (gitPins), each below one of the
// git directories roots, as it is now.
func snapshotPins(project string, projectFd int, roots, paths []string) (pinned, error) {
	p := pinned{roots: roots, project: project, projectFd: projectFd, entries: map[string]pinnedEntry{}, names: map[string]uint32{}}
	for _, r := range roots {
		if err := p.moduleNames(r, func(path string, parent int, name string) bool { p.names[path] = typeAt(parent, name); return true }); err != nil {
			return p, fmt.Errorf("listing %s before the call: %w", filepath.Join(r, "modules"), err)
		}
	}
	for _, path := range paths {
		if filepath.Base(path) == pinTooDeep {
			return p, fmt.Errorf("%s holds directories nested more than %d deep below the git directory: loopguard cannot pin the git configuration there, and runs no +git call in this project", filepath.Dir(path), maxModuleDepth)
		}
		e, err := p.read(path)
		if err != nil {
			return p, fmt.Errorf("keeping %s before the call: %w", path, err)
		}
		p.entries[path] = e
	}
	return p, nil
}

// read is what path holds now: missing when its directory is.
func (p pinned) read(path string) (pinnedEntry, error) {
	dir, err := p.openDir(path)
	if errors.Is(err, unix.ENOENT) {
		return pinnedEntry{missing: true}, nil
	}
	if err != nil {
		return pinnedEntry{}, err
	}
	defer unix.Close(dir)
	return p.readAt(dir, filepath.Dir(path), filepath.Base(path), 0)
}

// openDir opens path's directory beneath its git directory, following no
// link, the git directory itself included.
func (p pinned) openDir(path string) (int, error) {
	for _, r := range p.roots {
		if !fsx.Within(path, r) || path == r {
			continue
		}
		rel, err := filepath.Rel(r, filepath.Dir(path))
		if err != nil {
			return -1, err
		}
		root, err := p.openRoot(r, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return -1, err
		}
		defer unix.Close(root)
		return p.beneath(root, r, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	}
	return -1, fmt.Errorf("%s is in no git directory of the call", path)
}

// beneath opens rel below root (whose path is base) following no link,
// as openBeneath does; after the call (looked), where the call took its
// owner's read or search bit from it or a directory on the way, they are
// given back first (reach).
func (p pinned) beneath(root int, base, rel string, flags int) (int, error) {
	if p.looked == nil {
		return openBeneath(root, rel, flags)
	}
	fd, lines, err := reach(root, base, rel, flags)
	*p.looked = append(*p.looked, lines...)
	return fd, err
}

// readPinAt is what name in dir holds, read as a pin is: through no link,
// a file at most maxPinned, a directory two deep.
func readPinAt(dir int, name string, depth int) (pinnedEntry, error) {
	return pinned{}.readAt(dir, "", name, depth)
}

// readAt is readPinAt's, dir's path being base (for the user); after the
// call a directory the call made unreadable to its owner is read all the
// same (beneath).
func (p pinned) readAt(dir int, base, name string, depth int) (pinnedEntry, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return pinnedEntry{missing: true}, nil
	} else if err != nil {
		return pinnedEntry{}, err
	}
	e := pinnedEntry{mode: st.Mode}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		t, err := fsx.ReadlinkAt(dir, name)
		if err != nil {
			return e, err
		}
		e.target = t
	case unix.S_IFREG:
		if st.Size > maxPinned {
			return e, fmt.Errorf("%s is %d bytes, more than loopguard keeps", name, st.Size)
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return e, err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		if e.data, err = io.ReadAll(io.LimitReader(f, maxPinned+1)); err != nil {
			return e, err
		}
		if len(e.data) > maxPinned {
			return e, fmt.Errorf("%s grew over %d bytes", name, maxPinned)
		}
	case unix.S_IFDIR:
		if depth > 2 {
			return e, fmt.Errorf("%s: nested too deep", name)
		}
		fd, err := p.beneath(dir, base, name, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return e, err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		names, err := f.Readdirnames(-1)
		if err != nil {
			return e, err
		}
		e.entries = map[string]pinnedEntry{}
		for _, n := range names {
			c, err := p.readAt(fd, filepath.Join(base, name), n, depth+1)
			if err != nil {
				return e, err
			}
			e.entries[n] = c
		}
	}
	// A FIFO or a device where git keeps its configuration: kept as its
	// type alone.
	return e, nil
}

func (e pinnedEntry) equal(o pinnedEntry) bool {
	if e.missing || o.missing {
		return e.missing == o.missing
	}
	if e.mode != o.mode || e.target != o.target || !bytes.Equal(e.data, o.data) || len(e.entries) != len(o.entries) {
		return false
	}
	for n, c := range e.entries {
		oc, ok := o.entries[n]
		if !ok || !c.equal(oc) {
			return false
		}
	}
	return true
}

// restore puts back every pin the call changed, added or removed, moves
// out (h) what the call added where git keeps submodules, and returns a
// line for each, sorted; one it could not put back is said so.
func (p pinned) restore(h *holder) []string {
	var lines, looked []string
	p.looked = &looked
	var cut []string // what unlinkReplaced removed
	for path, e := range p.entries {
		now, err := p.read(path)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			// A directory on the way to the pin is no longer one: a
			// link git would follow (.git/modules/x made a link to a
			// directory whose config the call wrote), or a file.
			var removed string
			removed, err = p.unlinkReplaced(path)
			if removed != "" {
				lines = append(lines, "loopguard: this call put a link or a file where the directory "+removed+" was; loopguard removed it (git follows a link there to a configuration the call wrote): git now finds no repository there")
				cut = append(cut, removed)
			}
			if err == nil {
				now, err = p.read(path)
			}
		}
		if err == nil && slices.ContainsFunc(cut, func(c string) bool { return fsx.Within(path, c) }) {
			// Below what was removed: said once, for the directory.
			continue
		}
		if err == nil && e.equal(now) {
			continue
		}
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: could not look at %s after this call (%v), so whether the call changed it is not known: check it before running git", path, err))
			continue
		}
		if err = p.put(path, e); err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: this call changed %s and loopguard could not put it back (%v): check it before running git", path, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("loopguard: put back %s, which this call changed: +git writes git's own directory, never its configuration or hooks", path))
	}
	// Then what the call added where git keeps submodules (after the
	// pins: a link there that the put-back removed is not held too).
	lines = append(lines, p.holdNewModules(h)...)
	lines = append(lines, looked...)
	slices.Sort(lines)
	return slices.Compact(lines)
}

// unlinkReplaced removes the first entry on the way from path's git
// directory to path's directory that is not a directory (reached from
// its parent, beneath the git directory, following no link), and returns
// its path; "" when every one is a directory. What git would
// have found there (the call's directory the link names) is not touched,
// and what the directory held is not made again: git then finds no
// repository there and says so, instead of running what the call wrote.
func (p pinned) unlinkReplaced(path string) (string, error) {
	for _, r := range p.roots {
		if !fsx.Within(path, r) || path == r {
			continue
		}
		rel, err := filepath.Rel(r, filepath.Dir(path))
		if err != nil || rel == "." {
			return "", err
		}
		dir, err := p.openRoot(r, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return "", err
		}
		at := r
		for _, name := range strings.Split(rel, string(filepath.Separator)) {
			parent := at
			at = filepath.Join(at, name)
			var st unix.Stat_t
			err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				if p.looked != nil {
					*p.looked = append(*p.looked, mayMove(dir, parent, name, at)...)
				}
				err = unix.Unlinkat(dir, name, 0)
				unix.Close(dir)
				if err != nil {
					return "", fmt.Errorf("removing %s, which this call made where a directory was: %w", at, err)
				}
				return at, nil
			}
			var next int
			if err == nil {
				next, err = p.beneath(dir, parent, name, unix.O_RDONLY|unix.O_DIRECTORY)
			}
			unix.Close(dir)
			if err != nil {
				return "", err
			}
			dir = next
		}
		unix.Close(dir)
		return "", nil
	}
	return "", fmt.Errorf("%s is in no git directory of the call", path)
}

// moduleNames calls f with each entry of the tree where git keeps
// submodules' git directories below root (root/modules: names, which may
// hold slashes, each a directory; a git directory's own modules/ for its
// submodules), with the descriptor of the directory it is in and its
// name there; f returns whether to look into it. What is inside a git
// directory but its modules/ is not listed. Every directory is opened
// from its parent, never following a link.
func (p pinned) moduleNames(root string, visit func(path string, parent int, name string) bool) error {
	r, err := p.openRoot(root, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(r)
	// walk lists the modules/ of the git directory open at dir;
	// names lists the names directory open at fd (closing it).
	var walk, names func(fd int, path string, depth int) error
	walk = func(dir int, path string, depth int) error {
		fd, err := p.beneath(dir, path, "modules", unix.O_RDONLY|unix.O_DIRECTORY)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return nil // none, or not a directory: git keeps none there
		}
		if err != nil {
			return err
		}
		return names(fd, filepath.Join(path, "modules"), depth+1)
	}
	names = func(fd int, path string, depth int) error {
		f := os.NewFile(uintptr(fd), path)
		defer f.Close()
		if depth > maxModuleDepth {
			return fmt.Errorf("%s: nested more than %d deep", path, maxModuleDepth)
		}
		ents, err := f.Readdirnames(-1)
		if err != nil {
			return err
		}
		slices.Sort(ents)
		for _, n := range ents {
			cpath := filepath.Join(path, n)
			if !visit(cpath, fd, n) {
				continue
			}
			c, err := p.beneath(fd, path, n, unix.O_RDONLY|unix.O_DIRECTORY)
			if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				continue // a file or a link: listed, nothing below
			}
			if err != nil {
				return err
			}
			var st unix.Stat_t
			if unix.Fstatat(c, "HEAD", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				err = walk(c, cpath, depth)
				unix.Close(c)
			} else {
				err = names(c, cpath, depth+1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(r, root, 0)
}

// typeAt is the type of name in dir (st_mode's S_IFMT bits; 0 when it
// cannot be looked at), not following a link.
func typeAt(dir int, name string) uint32 {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return st.Mode & unix.S_IFMT
}

// holdNewModules moves out of git's way each entry of the roots'
// modules/ trees that was not there before the call, or not of the same
// type (a directory of names made a link): a git directory
// there (with a hooks/post-checkout, or a config setting
// core.fsmonitor) is what the human's next `git submodule update --init`
// of a submodule of that name reuses, unconfined, instead of cloning.
// Under +git a submodule's own new checkout is held back by the sweep
// (its .git file is executable configuration), so no approved call needs
// one. Each is moved out as the sweep's finds are (h), and said.
func (p pinned) holdNewModules(h *holder) []string {
	var lines []string
	for _, r := range p.roots {
		err := p.moduleNames(r, func(path string, parent int, name string) bool {
			if t, ok := p.names[path]; ok && t == typeAt(parent, name) {
				return true
			}
			if p.looked != nil {
				*p.looked = append(*p.looked, mayMove(parent, filepath.Dir(path), name, path)...)
			}
			where, _, err := h.move(parent, name, path)
			if err != nil {
				lines = append(lines, fmt.Sprintf("loopguard: this call created %s, where git keeps submodules' directories, and loopguard could not move it (%v): remove it before running git submodule", path, err))
				return false
			}
			lines = append(lines, fmt.Sprintf("loopguard: held back %s, which this call made: a git directory there is what a later git submodule update would reuse, unconfined (%s)", path, where))
			return false
		})
		if err != nil {
			lines = append(lines, fmt.Sprintf("loopguard: could not look for what this call created in %s (%v): check it before running git submodule", filepath.Join(r, "modules"), err))
		}
	}
	return lines
}

// put makes path hold e again, in the directory it is in now (whichever
// directory that is: it was reached without a link, beneath its git
// directory).
func (p pinned) put(path string, e pinnedEntry) error {
	dir, err := p.openDir(path)
	if errors.Is(err, unix.ENOENT) && e.missing {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := filepath.Base(path)
	if err := removeAt(dir, name, 0); err != nil {
		return err
	}
	return e.putAt(dir, name)
}

// removeAt removes name from dir, a directory with what it holds, never
// following a link.
func removeAt(dir int, name string, depth int) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil
	} else if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dir, name, 0)
	}
	if depth > 8 {
		return fmt.Errorf("%s: nested too deep to remove", name)
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, err := f.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeAt(fd, n, depth+1); err != nil {
				break
			}
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// putAt makes name in dir hold e, where nothing is now: a file written
// under a random temporary name and renamed into place (fsx.WriteFileAt:
// a name the call could guess and plant would stop the put-back).
func (e pinnedEntry) putAt(dir int, name string) error {
	perm := e.mode & 0o7777
	switch {
	case e.missing:
		return nil
	case e.mode&unix.S_IFMT == unix.S_IFLNK:
		return unix.Symlinkat(e.target, dir, name)
	case e.mode&unix.S_IFMT == unix.S_IFREG:
		return fsx.WriteFileAt(dir, name, e.data, fs.FileMode(perm))
	case e.mode&unix.S_IFMT == unix.S_IFDIR:
		if err := unix.Mkdirat(dir, name, 0o700); err != nil {
			return err
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for n, c := range e.entries {
			if err := c.putAt(fd, n); err != nil {
				return err
			}
		}
		return unix.Fchmod(fd, perm)
	}
	return fmt.Errorf("a file of mode %o cannot be put back", e.mode)
}

// openRoot opens the git directory r: one in the project from the
// project's descriptor through no link, any other by its path, its last
// name not followed.
func (p pinned) openRoot(r string, flags int) (int, error) {
	if p.projectFd >= 0 && r != p.project && fsx.Within(r, p.project) {
		return p.beneath(p.projectFd, p.project, strings.TrimPrefix(r, p.project+"/"), flags)
	}
	fd, err := unix.Open(r, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) && p.looked != nil {
		// Outside the project (a linked worktree's): from its parent,
		// by its path.
		parent, perr := unix.Open(filepath.Dir(r), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if perr != nil {
			return -1, err
		}
		defer unix.Close(parent)
		return p.beneath(parent, filepath.Dir(r), filepath.Base(r), flags)
	}
	return fd, err
}

// stateFiles are, in each directory where git keeps an operation in
// progress (an interactive rebase, a cherry-pick or revert sequence, git
// am), the files whose content makes the user's --continue run a program
// or write where the call chose, each with its judge: an exec line in a
// todo (the seventeenth attack run); a merge strategy that is not one of
// git's own, which git runs as git-merge-NAME, by its path when NAME holds
// a slash (the thirty-second attack run's "/../evil" beside an empty
// directory git-merge-, in rebase-merge/strategy and in sequencer/opts);
// git am's options for git apply (--unsafe-paths, --directory: a patch of
// the call's applied outside the project); the subtree strategy and a
// strategy's options, which move where a commit's changes land (the
// thirty-seventh attack run's pick of a commit whose tree held only
// pre-commit, with subtree or -Xsubtree=.githooks: the user's --continue
// wrote .githooks/pre-commit).
var stateFiles = []struct {
	dir   string
	files []stateFile
}{
	{"rebase-merge", []stateFile{{"git-rebase-todo", todoRuns}, {"strategy", strategyRuns}, {"strategy_opts", nonEmpty}}},
	{"sequencer", []stateFile{{"todo", todoRuns}, {"opts", optsRun}}},
	{"rebase-apply", []stateFile{{"apply-opt", nonEmpty}}},
}

// stateFile is one file of stateFiles and its judge.
type stateFile struct {
	name string
	runs func([]byte) bool
}

// gitStrategies are git's own merge strategies, which it runs in its own
// process (builtin/merge.c, sequencer.c), but subtree, which shifts a
// commit's paths below a directory it picks.
var gitStrategies = []string{"ort", "recursive", "resolve", "octopus", "ours"}

// nonEmpty: the file holds anything.
func nonEmpty(b []byte) bool { return len(bytes.TrimSpace(b)) > 0 }

// strategyRuns: rebase-merge/strategy names a strategy that is not git's
// own.
func strategyRuns(b []byte) bool {
	return !slices.Contains(gitStrategies, strings.TrimSpace(string(b)))
}

// optsRun: sequencer/opts (git's configuration syntax) sets a strategy
// that is not git's own, or a strategy's option, or cannot be read as git
// reads it.
func optsRun(b []byte) bool {
	ents, err := gitconfig.Parse(b)
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.Name == "options.strategy" && !slices.Contains(gitStrategies, strings.TrimSpace(e.Value)) || e.Name == "options.strategy-option" {
			return true
		}
	}
	return false
}

// todoRuns: a todo holds an exec line.
func todoRuns(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "exec" || f[0] == "x") {
			return true
		}
	}
	return false
}

// holdGitState holds back each of stateFiles that the call made or changed
// (since started) and whose judge says it runs something, in every git
// directory of the project a +git call wrote (kept), a linked worktree's
// (worktrees/NAME) and a submodule's (modules/..., the thirty-second
// attack run's rebase left stopped in an initialised submodule ran its
// exec on the user's git rebase --continue there) included; and a link
// where one of their directories is (git follows it). git then says the
// operation's file is missing, or runs git's own strategy; --abort ends
// it. Each directory is reached from the project's descriptor
// (projectFd), through no link, its owner's bits given back where the
// call took them (reach: the thirty-first attack run's chmod 311
// .git/rebase-merge).
func holdGitState(project string, projectFd int, kept []string, started time.Time, h *holder) []string {
	var lines []string
	for _, g := range kept {
		if g == project {
			continue
		}
		// A git directory in the project is reached from its descriptor;
		// one outside it (a linked worktree's, in its main repository's
		// .git/worktrees), which +git writes too, from its parent, by its
		// path.
		base, baseFd, rel := project, projectFd, strings.TrimPrefix(g, project+"/")
		if !fsx.Within(g, project) {
			fd, err := unix.Open(filepath.Dir(g), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // gone: nothing of it for git to run
			}
			defer unix.Close(fd)
			base, baseFd, rel = filepath.Dir(g), fd, filepath.Base(g)
		}
		var dirs []string
		gitDirsBelow(base, baseFd, rel, 0, &dirs, &lines)
		for _, d := range dirs {
			for _, sd := range stateFiles {
				lines = append(lines, holdState(base, baseFd, d+"/"+sd.dir, sd.files, started, h)...)
			}
		}
	}
	return slices.Compact(lines)
}

// holdState holds back each of files in rel (below base, open as
// baseFd), a directory of stateFiles, as holdGitState says; a link where
// the directory is, too. The directory is reached once.
func holdState(base string, baseFd int, rel string, files []stateFile, started time.Time, h *holder) []string {
	dir, lines, err := reach(baseFd, base, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return lines // no such operation in progress
	case errors.Is(err, unix.ELOOP):
		// A link where the operation's directory is: git follows it to a
		// todo of the call's own in the project.
		return append(lines, holdStateLink(base, baseFd, rel, h)...)
	case err != nil:
		return append(lines, fmt.Sprintf("loopguard: could not look at %s after this call (%v): if a rebase, a cherry-pick or git am is in progress there, end it with --abort rather than --continue, which could run what the call left", filepath.Join(base, rel), err))
	}
	defer unix.Close(dir)
	for _, f := range files {
		lines = append(lines, holdStateFile(base, dir, rel+"/"+f.name, f.runs, started, h)...)
	}
	return lines
}

// holdStateFile holds back rel (below base; its directory open as dir) when the
// call made or changed it and runs says it runs something; one that is not
// a regular file, or cannot be read as a pin is, counts as running.
func holdStateFile(base string, dir int, rel string, runs func([]byte) bool, started time.Time, h *holder) []string {
	name := filepath.Base(rel)
	if since, ok := changedSince(dir, name, started); !ok || !since {
		return nil
	}
	if e, err := readPinAt(dir, name, 0); err == nil && e.mode&unix.S_IFMT == unix.S_IFREG && !runs(e.data) {
		return nil
	}
	lines := mayMove(dir, filepath.Join(base, filepath.Dir(rel)), name, filepath.Join(base, rel))
	where, _, err := h.move(dir, name, rel)
	if err != nil {
		return append(lines, fmt.Sprintf("loopguard: this call left %s, which git would follow on your --continue (an exec line, a strategy that is not git's or moves paths, a strategy's options, git apply's options), and loopguard could not move it (%v): end the operation with --abort", filepath.Join(base, rel), err))
	}
	return append(lines, fmt.Sprintf("loopguard: held back %s, which this call left: git would run what it names, unconfined, on your --continue (an exec line, a strategy that is not git's or moves paths, a strategy's options, git apply's options) (%s); end the operation with --abort", filepath.Join(base, rel), where))
}

// gitDirsBelow adds to dirs the git directory rel (below base) and
// those kept in it: each linked worktree's (worktrees/NAME) and each
// submodule's (modules/NAME, NAME holding slashes, and their own
// modules/), maxModuleDepth deep at most. A directory it cannot look into
// is said.
func gitDirsBelow(base string, baseFd int, rel string, depth int, dirs, lines *[]string) {
	*dirs = append(*dirs, rel)
	if depth > maxModuleDepth {
		return
	}
	for _, n := range subdirs(base, baseFd, rel+"/worktrees", lines) {
		*dirs = append(*dirs, rel+"/worktrees/"+n)
	}
	var names func(at string, d int)
	names = func(at string, d int) {
		if d > maxModuleDepth {
			return
		}
		for _, n := range subdirs(base, baseFd, at, lines) {
			c := at + "/" + n
			var st unix.Stat_t
			if unix.Fstatat(baseFd, c+"/HEAD", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				gitDirsBelow(base, baseFd, c, d+1, dirs, lines)
			} else {
				names(c, d+1)
			}
		}
	}
	names(rel+"/modules", depth+1)
}

// subdirs are the directories in rel (below base), not links; none
// when rel is not a directory. A directory it cannot read is said.
func subdirs(base string, baseFd int, rel string, lines *[]string) []string {
	fd, looked, err := reach(baseFd, base, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	*lines = append(*lines, looked...)
	if err != nil {
		if !gone(err) {
			*lines = append(*lines, fmt.Sprintf("loopguard: could not look in %s after this call (%v): check it for an operation in progress before running git there", filepath.Join(base, rel), err))
		}
		return nil
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		*lines = append(*lines, fmt.Sprintf("loopguard: could not look in %s after this call (%v): check it for an operation in progress before running git there", filepath.Join(base, rel), err))
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// holdStateLink holds back the link rel (below base: a rebase's or a
// sequence's directory in a git directory) as the sweep holds one:
// removed, its text said.
func holdStateLink(base string, baseFd int, rel string, h *holder) []string {
	gdir, lines, err := reach(baseFd, base, filepath.Dir(rel), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return append(lines, fmt.Sprintf("loopguard: could not look at %s after this call (%v): if a rebase or a cherry-pick is in progress there, run git rebase --abort (or git cherry-pick --abort) rather than --continue", filepath.Join(base, rel), err))
	}
	defer unix.Close(gdir)
	name := filepath.Base(rel)
	if typeAt(gdir, name) != unix.S_IFLNK {
		return lines
	}
	lines = append(lines, mayMove(gdir, filepath.Join(base, filepath.Dir(rel)), name, filepath.Join(base, rel))...)
	where, _, err := h.move(gdir, name, rel)
	if err != nil {
		return append(lines, fmt.Sprintf("loopguard: this call made %s a link, which git would follow to a todo of the call's, and loopguard could not remove it (%v): remove it, and run no git rebase --continue there", filepath.Join(base, rel), err))
	}
	return append(lines, fmt.Sprintf("loopguard: held back %s, which this call made a link: git would follow it to a todo of the call's, whose exec lines it runs on your git rebase --continue (%s)", filepath.Join(base, rel), where))
}
