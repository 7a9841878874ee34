//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
)

// A mode change with the filter alone (and a change of times, by path or
// by a descriptor, changeTimes, checked the same way). Landlock does not
// cover chmod, so where the launch cannot make everything outside its
// write set read-only (Claude Code's sandbox, Ubuntu 24.04) the filter
// refused every mode change, the program's own files' too: `chmod +x
// run.sh` in the project failed in the jail under init's defaults. With
// the broker the filter sends chmod, fchmod, fchmodat and fchmodat2 to
// the first stage, which makes the change itself when all of these hold,
// and answers EPERM otherwise (never SECCOMP_USER_NOTIF_FLAG_CONTINUE: the
// kernel would then make any change the call asks):
//
//   - the file is the one the call names, opened by the first stage from
//     the caller's root, working directory or descriptor through /proc
//     (resolve; a descriptor of the caller's by /proc/PID/fd), its last
//     link followed as chmod follows it, and the caller still waiting in
//     the call when it was opened;
//   - it is a file or directory the broker made in this call, or where it
//     is now (its descriptor's path) lies in a directory of the write set
//     inside the project, or is a file of it, or lies in the launch's
//     private directories (its TMPDIR); never in a git directory, a held
//     entry, executable configuration or an instruction file;
//   - it is a directory, or a regular file with one name (a second name
//     may be outside the project: a hard link into pnpm's store);
//   - the mode sets no set-id or sticky bit, and does not let other users
//     write.
//
// The change is made on the descriptor the checks looked at
// (/proc/self/fd), so a name swapped after them changes nothing else.
//
// With namespaces of its own the second stage's broker gets mode and
// time changes too, and makes them with one check: a file has no second
// name. Where a mode may change is its mounts' to say (everything
// outside the write set, and every held entry, is mounted read-only:
// EROFS), but the kernel does not ask how many names a file has, and a
// chmod of a file of node_modules changed pnpm's store's file.
type modeCall struct {
	byFd   bool // fchmod, or fchmodat2 with AT_EMPTY_PATH and ""
	dirfd  int32
	path   uint64
	mode   uint32
	follow bool
}

// isModeCall reports whether nr is one of the calls the filter sends for
// a mode change.
func isModeCall(nr int32) bool {
	return slices.Contains(modeCalls, uint32(nr)) || slices.Contains(legacyModeCalls, uint32(nr))
}

// readModeCall reads n's mode change; ok is false for flags the kernel
// would refuse (EINVAL).
func readModeCall(n *seccompNotif) (c modeCall, ok bool) {
	a := n.args
	c.follow = true
	switch n.nr {
	case unix.SYS_FCHMOD:
		return modeCall{byFd: true, dirfd: int32(a[0]), mode: uint32(a[1])}, true
	case unix.SYS_FCHMODAT:
		c.dirfd, c.path, c.mode = int32(a[0]), a[1], uint32(a[2])
	case unix.SYS_FCHMODAT2:
		c, ok = atCall(n, int32(a[0]), a[1], int(int32(a[3])))
		c.mode = uint32(a[2])
		return c, ok
	default:
		if !slices.Contains(legacyModeCalls, uint32(n.nr)) {
			return c, false
		}
		// chmod(path, mode)
		c.dirfd, c.path, c.mode = unix.AT_FDCWD, a[0], uint32(a[1])
	}
	return c, true
}

// atCall is the file a *at call with flags names: dirfd and the path at
// addr, its last link followed unless AT_SYMLINK_NOFOLLOW, dirfd itself
// for AT_EMPTY_PATH and "" (byFd); ok is false for flags the kernel would
// refuse (EINVAL).
func atCall(n *seccompNotif, dirfd int32, addr uint64, flags int) (modeCall, bool) {
	c := modeCall{dirfd: dirfd, path: addr, follow: flags&unix.AT_SYMLINK_NOFOLLOW == 0}
	if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return c, false
	}
	if flags&unix.AT_EMPTY_PATH != 0 {
		if p, ok := readPath(int(n.pid), addr); ok && p == "" {
			c.byFd = true
		}
	}
	return c, true
}

// changeMode answers a mode change (the filter sends it only with the
// broker): made here, or refused.
func (b *topBroker) changeMode(n *seccompNotif) *seccompNotifResp {
	c, ok := readModeCall(n)
	if !ok {
		return failed(n, unix.EINVAL)
	}
	mode := c.mode & 0o7777
	if mode&refusedModeBits != 0 {
		return failed(n, unix.EPERM)
	}
	return b.change(n, c, false, func(_ int, self string) error { return unix.Fchmodat(unix.AT_FDCWD, self, mode, 0) })
}

// changeTimes answers utimensat, by path or by a descriptor (its path
// NULL: futimens, what touch and cp -p do to the file they opened): the
// times of a file the program may write are set here (tar x, touch -d,
// cp -p), every other refused. A descriptor opened for reading alone
// reaches files outside the write set (~/.gitconfig, .git/config).
func (b *topBroker) changeTimes(n *seccompNotif) *seccompNotifResp {
	a := n.args
	var c modeCall
	if a[1] == 0 {
		// utimensat(fd, NULL, times, 0): the kernel's futimens.
		if int32(a[3]) != 0 {
			return failed(n, unix.EINVAL)
		}
		if int32(a[0]) == unix.AT_FDCWD {
			return failed(n, unix.EFAULT)
		}
		c = modeCall{byFd: true, dirfd: int32(a[0])}
	} else {
		var ok bool
		if c, ok = atCall(n, int32(a[0]), a[1], int(int32(a[3]))); !ok {
			return failed(n, unix.EINVAL)
		}
	}
	// NULL: both now.
	ts := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	if a[2] != 0 {
		var raw [2]unix.Timespec
		local := []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&raw[0]))}}
		local[0].SetLen(int(unsafe.Sizeof(raw)))
		remote := []unix.RemoteIovec{{Base: uintptr(a[2]), Len: int(unsafe.Sizeof(raw))}}
		if m, err := unix.ProcessVMReadv(int(n.pid), local, remote, 0); err != nil || m != int(unsafe.Sizeof(raw)) {
			return failed(n, unix.EFAULT)
		}
		ts = raw[:]
	}
	// By the descriptor itself (AT_EMPTY_PATH), which may be a link's:
	// touch -h, and cp -a of a tree that holds links, set a link's times.
	return b.change(n, c, true, func(fd int, _ string) error { return unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH) })
}

// change makes do(fd, self), fd an O_PATH descriptor of the file c names
// for n's caller and self its /proc/self/fd path, when the program may
// change it; EPERM otherwise. links: a link's own may change (times).
func (b *topBroker) change(n *seccompNotif, c modeCall, links bool, do func(fd int, self string) error) *seccompNotifResp {
	fd, ok := b.modeTarget(n, c)
	if !ok {
		return failed(n, unix.EPERM)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return failed(n, unix.EPERM)
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	where, err := os.Readlink(self)
	if err != nil {
		return failed(n, unix.EPERM)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		if !links {
			return failed(n, unix.EOPNOTSUPP) // what the kernel says of a link's mode
		}
		fallthrough
	case unix.S_IFREG, unix.S_IFIFO, unix.S_IFSOCK: // a FIFO: tar x sets its times and mode; a server its socket's
		// Refused: a file with a second name (a hard link into pnpm's
		// store), unless it is in the launch's own directories (its
		// TMPDIR, where a link can only be to its own files), and one
		// whose name it was reached by is gone while it has another (a
		// descriptor kept across an rm). No name at all is one less
		// than two: a file made with O_TMPFILE, or removed while open.
		if st.Nlink > 1 && !b.modeSet().inPrivate(where) || st.Nlink == 1 && !namedBy(fd, &st) {
			return failed(n, unix.EPERM)
		}
	default:
		return failed(n, unix.EPERM)
	}
	if !b.mounted && !b.mine[fileKey{st.Dev, st.Ino}] && !b.modeWritable(where) {
		return failed(n, unix.EPERM)
	}
	if err := do(fd, self); err != nil {
		if e, ok := err.(unix.Errno); ok {
			return failed(n, e)
		}
		return failed(n, unix.EPERM)
	}
	return &seccompNotifResp{id: n.id}
}

// modeTarget opens (O_PATH) the file c names for n's caller.
func (b *topBroker) modeTarget(n *seccompNotif, c modeCall) (int, bool) {
	if c.byFd {
		return b.procTarget(n, "fd/"+strconv.Itoa(int(c.dirfd)))
	}
	path, ok := readPath(int(n.pid), c.path)
	if !ok {
		return -1, false
	}
	if k, ok := ownFdPath(path); ok {
		// /dev/stdout, /proc/self/fd/N: the caller's descriptor.
		return b.procTarget(n, "fd/"+strconv.Itoa(k))
	}
	if sub, ok := strings.CutPrefix(path, "/proc/self/"); ok && (sub == "cwd" || sub == "root") {
		// The caller's directory or root, by its own /proc.
		return b.procTarget(n, sub)
	}
	r, ok, _ := b.resolvePath(n, c.dirfd, path, false, true)
	if !ok {
		return -1, false
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !c.follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat(r.parent, r.name, flags, 0)
	_ = unix.Close(r.parent)
	return b.stillWaiting(n, fd, err)
}

// stillWaiting is fd, what an open (err) gave for n's caller, while the
// caller still waits in its call (else closed: a process that died and
// whose pid was reused is not its caller).
func (b *topBroker) stillWaiting(n *seccompNotif, fd int, err error) (int, bool) {
	if err != nil {
		return -1, false
	}
	if !b.waiting(n) {
		_ = unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// procTarget opens (O_PATH) the entry sub of n's caller's /proc
// directory (fd/N, cwd, root): what it names.
func (b *topBroker) procTarget(n *seccompNotif, sub string) (int, bool) {
	proc, ok := b.procOf(n.pid)
	if !ok {
		return -1, false
	}
	fd, err := unix.Open(proc+"/"+sub, unix.O_PATH|unix.O_CLOEXEC, 0)
	return b.stillWaiting(n, fd, err)
}

// modeWritable reports whether p (a path as the kernel gives it, links
// resolved) may have its mode changed by the program.
func (b *topBroker) modeWritable(p string) bool {
	w := b.modeSet()
	if w.tmp != "" && fsx.Within(p, w.tmp) {
		// The launch's own TMPDIR, removed with its last process: a git
		// directory there is the program's own (git init in it failed on
		// its chmod of .git/config.lock: the twenty-third attack run).
		return true
	}
	if !filepath.IsAbs(p) || slices.Contains(strings.Split(p, "/"), ".git") {
		return false
	}
	for _, h := range w.held {
		if fsx.Within(p, h) {
			return false
		}
	}
	if fsx.Within(p, w.project) && b.pl.Classify(p).Protected() {
		return false
	}
	if slices.Contains(w.files, p) {
		return true
	}
	for _, d := range w.dirs {
		if fsx.Within(p, d) {
			return true
		}
	}
	return false
}

// modeSet is where the program may change modes: the plan's write set in
// the project and its private directories, links resolved (the kernel
// names a file by its real path), made on the first mode change.
type modeSet struct {
	project     string
	dirs, files []string
	held        []string
	private     []string // the launch's own directories (TMPDIR, caches)
	tmp         string   // its TMPDIR
}

// inPrivate reports whether p (links resolved) lies in one of the
// launch's own directories.
func (w modeSet) inPrivate(p string) bool {
	for _, d := range w.private {
		if fsx.Within(p, d) {
			return true
		}
	}
	return false
}

func newModeSet(plan Plan) func() modeSet {
	return sync.OnceValue(func() modeSet {
		real := func(p string) string {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return r
			}
			return p
		}
		project := real(plan.Project)
		w := modeSet{project: project}
		for _, d := range plan.WriteDirs {
			if r := real(d); fsx.Within(r, project) {
				w.dirs = append(w.dirs, r)
			}
		}
		for _, d := range plan.Private {
			w.dirs = append(w.dirs, real(d))
			w.private = append(w.private, real(d))
		}
		if t := plan.Env["TMPDIR"]; t != "" {
			w.tmp = real(t)
		}
		for _, f := range plan.WriteFiles {
			if r := real(f); fsx.Within(r, project) {
				w.files = append(w.files, r)
			}
		}
		for _, h := range slices.Concat(plan.Held, plan.GitPins, plan.Kept) {
			w.held = append(w.held, real(h))
		}
		return w
	})
}
