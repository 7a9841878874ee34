//go:build linux

package undo

import (
	"encoding/binary"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/fsx"
	"golang.org/x/sys/unix"
)

// A watcher hears, through inotify, every name below the project that
// changes while the call runs: each directory the before-state lists is
// watched (by its descriptor, through /proc/self/fd, never by a path),
// so that the after-state looks again only at what changed (a call that
// writes nothing: no second walk). Every write reaches the watch of the
// directory it was made in: a file opened for writing raises
// IN_CLOSE_WRITE when it is closed, however it was written (mmap too),
// and at the latest when its process exits. Where it cannot hold (a
// watch refused, the kernel's event queue overflowed) the after-state is
// a walk of the whole project again. A file with more than one name is
// looked at again whatever was heard (a write through its other name is
// heard in that name's directory).
type watcher struct {
	fd     int
	mu     sync.Mutex
	wds    map[int32]string
	failed bool
	closer int // the pid of closeAway's child (tests)
}

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return &watcher{fd: -1, failed: true}
	}
	return &watcher{fd: fd, wds: map[int32]string{}}
}

// add watches the directory open at dirfd (rel below the project).
func (w *watcher) add(dirfd int, rel string) {
	if w.fd < 0 {
		return
	}
	wd, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(dirfd), watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failed = true
		return
	}
	w.wds[int32(wd)] = rel
}

// heard reads what was heard: every path (relative) some event named;
// ok is false when the watch did not hold.
func (w *watcher) heard() (dirty map[string]bool, ok bool) {
	if w == nil || w.failed {
		return nil, false
	}
	dirty = map[string]bool{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return dirty, true
		}
		if err != nil || n <= 0 {
			return nil, false
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			wd := int32(binary.NativeEndian.Uint32(b[0:]))
			mask := binary.NativeEndian.Uint32(b[4:])
			l := int(binary.NativeEndian.Uint32(b[12:]))
			if len(b) < unix.SizeofInotifyEvent+l {
				return nil, false
			}
			name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+l]), "\x00")
			b = b[unix.SizeofInotifyEvent+l:]
			if mask&unix.IN_Q_OVERFLOW != 0 {
				return nil, false
			}
			if mask&unix.IN_IGNORED != 0 {
				continue
			}
			rel, known := w.wds[wd]
			if !known {
				return nil, false
			}
			switch {
			case name != "" && rel != "":
				dirty[rel+"/"+name] = true
			case name != "":
				dirty[name] = true
			case rel != "":
				dirty[rel] = true
			}
		}
	}
}

// close closes the instance, in a process of its own (closeAway): a
// close here would wait out the kernel's freeing of its watches.
func (w *watcher) close() {
	if w != nil && w.fd >= 0 {
		w.closer = closeAway(w.fd)
		w.fd = -1
	}
}

// changes is what the call changed: the state now of every path heard
// (and of each file with several names) that differs from the
// before-state, looked at again below the project following no link; a
// directory that is new (or another one) is listed whole, and what was
// below a directory no longer there is gone. Nothing else is looked at,
// and the before-state is searched, not copied.
func (r *Recorder) changes(dirty map[string]bool) ([]Entry, error) {
	for _, p := range r.multi {
		dirty[p] = true
	}
	root, err := unix.Open(r.s.Project, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	delta := map[string]Entry{}
	// set: e is p's state now; gone: p is not there now.
	set := func(e *Entry) {
		if b := r.find(e.Path); b != nil && same(b, e) {
			delete(delta, e.Path)
			return
		}
		delta[e.Path] = *e
	}
	gone := func(p string) {
		if r.find(p) != nil {
			delta[p] = Entry{Path: p, Kind: Gone}
		} else {
			delete(delta, p)
		}
	}
	goneBelow := func(p string) {
		for _, e := range r.below(p) {
			gone(e.Path)
		}
	}
	paths := make([]string, 0, len(dirty))
	for p := range dirty {
		paths = append(paths, p)
	}
	slices.Sort(paths) // a directory before what it holds
	for _, p := range paths {
		if !validRel(p) {
			continue
		}
		if left, ok := r.excluded(root, p); ok {
			// Made, or changed, in a directory the record leaves out
			// (the watchers watch none): it is named left out where it
			// is there.
			if left != "" && dirThere(root, left) {
				r.noteLeft(left)
			}
			continue
		}
		e, fd, err := look(root, p)
		if err != nil {
			return nil, err
		}
		b := r.find(p)
		if e == nil || e.Kind != Dir {
			if b != nil && b.Kind == Dir {
				goneBelow(p)
			}
			if e == nil {
				gone(p)
			} else {
				set(e)
			}
			continue
		}
		set(e)
		if b != nil && b.Kind == Dir && b.Dev == e.Dev && b.Ino == e.Ino {
			unix.Close(fd)
			continue // watched: what changed in it was heard
		}
		goneBelow(p)
		w := &walker{skip: r.skip, targets: r.afterTargets}
		sub, err := w.from(fd, p)
		if err != nil {
			return nil, err
		}
		r.noteLeft(w.left...)
		for i := range sub {
			set(&sub[i])
		}
	}
	out := make([]Entry, 0, len(delta))
	for _, e := range delta {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return walkOrder(a.Path, b.Path) })
	return out, nil
}

// afterTargets is walker.targets for a listing compared with r.before: a
// directory named target the before-state recorded is recorded. Taking
// the after-state, one it did not is left out where the before-state had
// a Cargo.toml beside it (it was left out then, whatever is beside it
// now), and recorded where it had none (the call made it: a new
// docs/target/install.sh was named nowhere, neither recorded nor left
// out, when every target the before-state lacked was left out). Taking a
// before-state from the last listing (chain_linux.go), the last listing
// does not say, and the Cargo.toml beside it now does.
func (r *Recorder) afterTargets(rel string) (known, recorded bool) {
	if e := r.find(rel); e != nil && e.Kind == Dir {
		return true, true
	}
	if !r.after {
		return false, false
	}
	return true, r.find(path.Join(path.Dir(rel), "Cargo.toml")) == nil
}

// find is the before-state's entry of p (nil: none), by a binary search
// of the before-state, which is in walk order.
func (r *Recorder) find(p string) *Entry {
	i, ok := slices.BinarySearchFunc(r.before, p, func(e Entry, p string) int { return walkOrder(e.Path, p) })
	if !ok {
		return nil
	}
	return &r.before[i]
}

// below are the before-state's entries below the directory p: those
// right after it in walk order whose path starts with p/.
func (r *Recorder) below(p string) []Entry {
	i, _ := slices.BinarySearchFunc(r.before, p+"/", func(e Entry, p string) int { return walkOrder(e.Path, p) })
	j := i
	for j < len(r.before) && strings.HasPrefix(r.before[j].Path, p+"/") {
		j++
	}
	return r.before[i:j]
}

// excluded reports whether p is not recorded (ok): below a skipped path,
// or in a directory the record leaves out (a regenerable one, a cargo
// target), which is left ("" for a skipped path).
func (r *Recorder) excluded(root int, p string) (left string, ok bool) {
	parts := strings.Split(p, "/")
	for i, name := range parts {
		dir := strings.Join(parts[:i+1], "/")
		if r.skip[dir] {
			return "", true
		}
		if slices.Contains(Regenerable, name) {
			return dir, true
		}
		if name == "target" {
			if known, recorded := r.afterTargets(dir); known {
				if !recorded {
					return dir, true
				}
				continue
			}
			cargo := path.Join(append(parts[:i:i], "Cargo.toml")...)
			if e, fd, _ := look(root, cargo); e != nil {
				if fd >= 0 {
					unix.Close(fd)
				}
				return dir, true
			}
		}
	}
	return "", false
}

// noteLeft notes dirs, directories the record leaves out, for its Left
// (Meta.addLeft), each once.
func (r *Recorder) noteLeft(dirs ...string) {
	for _, d := range dirs {
		if !slices.Contains(r.left, d) {
			r.left = append(r.left, d)
		}
	}
}

// dirThere reports whether p (below root) is a directory now, reached
// following no link; true where that cannot be told (a directory left
// out is named rather than not).
func dirThere(root int, p string) bool {
	dir := root
	if strings.Contains(p, "/") {
		pfd, err := openParent(root, p)
		if errors.Is(err, errLink) || errors.Is(err, unix.ENOENT) {
			return false
		}
		if err != nil {
			return true
		}
		defer unix.Close(pfd)
		dir = pfd
	}
	var st fileStat
	if err := statAt(dir, path.Base(p), &st); err != nil {
		return !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR)
	}
	return st.mode&unix.S_IFMT == unix.S_IFDIR
}

// leftThere are the directories of left that are there now (dirThere): a
// record's Left taken from the last record's (fromLast) names no
// node_modules removed since.
func leftThere(project string, left []string) []string {
	if len(left) == 0 {
		return nil
	}
	root, err := unix.Open(project, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return slices.Clone(left)
	}
	defer unix.Close(root)
	var out []string
	for _, p := range left {
		if dirThere(root, p) {
			out = append(out, p)
		}
	}
	return out
}

// look is p's state below root (nil: not there, or not reachable without
// a link), and for a directory a descriptor of it to list.
func look(root int, p string) (*Entry, int, error) {
	pfd, err := openParent(root, p)
	if err != nil {
		if errors.Is(err, errLink) || errors.Is(err, unix.ENOENT) {
			return nil, -1, nil
		}
		return nil, -1, err
	}
	defer unix.Close(pfd)
	name := path.Base(p)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, -1, nil
		}
		return nil, -1, err
	}
	e := Entry{Path: p, Mode: st.Mode & 0o7777, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Dev: st.Dev, Ino: st.Ino}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		e.Kind, e.Size = Dir, 0
		fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			e.Kind, e.Note = Skipped, "a directory that could not be read: "+errText(err)
			return &e, -1, nil
		}
		if fs := onKernelFS(fd); fs != "" {
			unix.Close(fd)
			e.Kind, e.Note = Skipped, kernelFSNote(fs)
			return &e, -1, nil
		}
		return &e, fd, nil
	case unix.S_IFLNK:
		e.Kind = Link
		if e.Target, err = fsx.ReadlinkAt(pfd, name); err != nil {
			e.Kind, e.Note = Skipped, "a link that could not be read: "+errText(err)
		}
	case unix.S_IFREG:
		e.Kind = File
	default:
		e.Kind, e.Note = Skipped, "neither a file, a directory nor a link"
	}
	return &e, -1, nil
}
