//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// The top level with the filter alone. Landlock's rights on a directory
// reach everything below it: a right to create files at the project's top
// is a right to create them in .git/hooks, .claude and .husky too, and a
// right to write the new file is a right to write .git/config. With
// namespaces of its own the launch mounts each protected entry read-only
// and grants the top whole (isolate); with the filter alone (Claude
// Code's sandbox, Ubuntu 24.04) no Landlock rule can tell `app` from
// `.git/hooks/pre-commit`. The same holds of every directory that has
// executable configuration or an instruction file below it (a monorepo's
// pkg/web with its own CLAUDE.md, and pkg): the plan gives their files
// and clean subdirectories rules of their own, never the directory whole
// (Plan.Unclean). So there the launcher makes new names itself: the
// filter sends every open with O_CREAT or for writing, every unlink and
// rename, and every mkdir, to the first stage (seccomp's user
// notification), which in such a directory (a served one):
//
//   - for a name that does not exist and is not executable configuration
//     or an instruction file (policy's one list, the hook directories
//     core.hooksPath names), creates it (never through a link, never an
//     existing file: O_CREAT|O_EXCL|O_NOFOLLOW, the program's umask) and
//     hands the program its descriptor, as if its own open had made it;
//   - refuses a protected name there (EACCES, what Landlock says);
//   - opens again, renames or removes a file it made in this call, known
//     by device and inode (go build's umask probe, a log opened twice
//     with O_APPEND, Python's "r+", npm's write-file-atomic);
//   - makes a new directory (mkdir build, mkdir -p dist/assets), and
//     serves the directories it made too, since no Landlock rule reaches
//     them (rm -r build removes them);
//   - renames and removes the write set's own files and directories
//     there (sed -i README.md: a temporary file renamed over it; mv docs
//     docs.old; rm -r dist), never executable configuration;
//   - opens an existing file for writing (or truncates it) by the
//     maker, by the program's own rules, and refuses one with a second
//     name, which may be a hard link into pnpm's store (writeExisting):
//     the program has no right to write a file of the project itself;
//   - lets every other call go on to the kernel unchanged, where Landlock
//     decides as before (SECCOMP_USER_NOTIF_FLAG_CONTINUE): a link or a
//     node (refused: no rule). The kernel
//     reads the call's path again, so a program that changes it
//     meanwhile gets what Landlock grants, which in the project is no
//     name and no write at all: a directory granted whole (a clean one)
//     grants every right but the rights to make a name and to write a
//     file (makerRights), and the maker makes its names
//     (maker_linux.go, makeBelow);
//   - refuses a call that makes a name where it cannot tell where the
//     name lands (the caller's memory or /proc unreadable), rather than
//     hand it to the kernel.
//
// It acts only on what it resolved itself, from the program's directory
// or descriptor by /proc, and only when that is a directory it serves
// (the same directory, by device and inode): a path through a link
// elsewhere is the kernel's to judge. A rename into what it serves from
// anywhere else, or out of a directory it made, is answered EXDEV (mv
// and go build then copy, which it serves).

// Seccomp's user notification structures (linux/seccomp.h).
type (
	seccompNotif struct {
		id    uint64
		pid   uint32
		flags uint32
		nr    int32
		arch  uint32
		ip    uint64
		args  [6]uint64
	}
	seccompNotifResp struct {
		id    uint64
		val   int64
		error int32
		flags uint32
	}
	seccompNotifAddfd struct {
		id         uint64
		flags      uint32
		srcfd      uint32
		newfd      uint32
		newfdFlags uint32
	}
)

// fileKey names a file by device and inode.
type fileKey struct{ dev, ino uint64 }

// topBroker is the first stage's side: the listener and the project's
// top.
type topBroker struct {
	conn     *os.File // the first stage's end of the hand-over
	listener int
	root     int
	rootKey  fileKey
	project  string
	// real is the project's path as /proc shows a directory's (every
	// link in project's resolved): what a directory below it reads as.
	real  string
	pl    policy.Places
	fixed map[string]bool // pl's fixed protected paths in the project (a hooks directory), +git's pins
	kept  []string        // the plan's Kept in the project: +git's git directories
	// held are the plan's Held entries in the project, sorted: no
	// directory that holds one is moved (heldBelow).
	held []string
	// mine are the files and directories the broker made in this call
	// (at the top, and below a directory it made there); dirs are those
	// directories; names are the last names it made, which an unlink
	// must name before it is looked at.
	mine  map[fileKey]bool
	dirs  map[fileKey]bool
	names map[string]bool
	// umasks are the umasks read of the program's threads (umaskOf);
	// umaskCalls the threads whose umask call went on to the kernel and
	// that have made no call here since.
	umasks     map[uint32]uint32
	umaskCalls map[uint32]bool
	// told are the names the call's output said were refused (tell).
	told map[string]bool
	// ownProc: /proc is this process's PID namespace's (procOf).
	ownProc bool
	// mounted: the launch's mounts, or a sandbox's, keep every mode
	// change to the write set (filterOpts.metadata false): change asks
	// no more than one name of a file.
	mounted bool
	// served are the project's directories no rule reaches whole (the
	// top, and every one that holds executable configuration below it:
	// Plan.Unclean), by device and inode, with their paths; ours are the
	// write set's files and directories directly in them, which the
	// broker renames and removes (rm -r dist, sed -i README.md), and
	// ourNames their last names (the unlink gate), and the plan's
	// RemoveDirs': the broker removes one once empty (rm -rf
	// node_modules: what is in it the program removes itself), and moves
	// what the program asks it to within one (bulkMove).
	served     map[fileKey]string
	ours       map[string]bool
	ourNames   map[string]bool
	removeDirs []string
	modeSet    func() modeSet // where a mode may change (brokermode_linux.go)
	stop       [2]int         // a pipe: closing stop[1] ends serve
	done       chan struct{}
	started    bool
	// The maker (maker_linux.go), started at the first name the program
	// makes in the project, restricted to makerRules (-1: none, and
	// every such name is refused); mkErr is why it could not start.
	makerRules int
	mk         *maker
	mkErr      error
	// noLinks: the plan's NoLinks.
	noLinks bool
	// fifoOpens counts the opens of FIFOs waiting (openFifo).
	fifoOpens atomic.Int32
}

// brokerRole is where a broker runs and what it does there.
type brokerRole struct {
	// serve: it serves the directories that hold protected entries
	// (Plan.Unclean, the top): it makes new names there.
	serve bool
	// ownProc: it runs in the second stage, whose /proc is its PID
	// namespace's (procOf).
	ownProc bool
}

// newTopBroker opens the project's top for plan; conn receives the
// listener. Under read-only (no project) it serves metadata changes
// alone: the filter sends it nothing else (filterOpts.opens).
func newTopBroker(plan Plan, e Env, conn *os.File, role brokerRole) (*topBroker, error) {
	b := &topBroker{conn: conn, listener: -1, root: -1, project: plan.Project, makerRules: -1, noLinks: plan.NoLinks,
		mine: map[fileKey]bool{}, dirs: map[fileKey]bool{}, names: map[string]bool{}, umasks: map[uint32]uint32{}, umaskCalls: map[uint32]bool{}, told: map[string]bool{}, modeSet: newModeSet(plan), done: make(chan struct{})}
	if plan.Project != "" {
		root, err := unix.Open(plan.Project, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(root, &st); err != nil {
			_ = unix.Close(root)
			return nil, err
		}
		b.root, b.rootKey = root, fileKey{st.Dev, st.Ino}
		if b.real, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(root)); err != nil {
			_ = unix.Close(root)
			return nil, err
		}
		b.ownProc = role.ownProc
		if role.serve {
			b.findServed(plan)
		} else {
			b.served, b.ours, b.ourNames = map[fileKey]string{}, map[string]bool{}, map[string]bool{}
		}
		e.Places.HooksPaths, e.Places.Imports = plan.hooksPaths, plan.imports
		b.pl = e.Places.Prepare()
		b.fixed, _ = fixedInProject(b.pl, plan.Project)
		// +git's pins in the git directories it serves (gitWriteSet):
		// never made, nor replaced by a rename, nor a name moved or
		// linked above one.
		for _, p := range plan.GitPins {
			if isAncestorOrSelf(plan.Project, p) {
				b.fixed[p] = true
			}
		}
		for _, k := range plan.Kept {
			if isAncestorOrSelf(plan.Project, k) {
				b.kept = append(b.kept, k)
			}
		}
		for _, h := range plan.Held {
			if h != plan.Project && isAncestorOrSelf(plan.Project, h) {
				b.held = append(b.held, h)
			}
		}
		slices.Sort(b.held)
	}
	if err := unix.Pipe2(b.stop[:], unix.O_CLOEXEC); err != nil {
		if b.root >= 0 {
			_ = unix.Close(b.root)
		}
		return nil, err
	}
	return b, nil
}

// start serves the program's calls until close.
func (b *topBroker) start() {
	b.started = true
	go func() {
		defer close(b.done)
		if b.receive() {
			b.serve()
		}
	}()
}

// brokerStop bounds how long close waits for the broker to stop once
// every process of the call has exited: it has nothing to answer any
// more, so only a system call of its own that never returns could keep
// it (writeExisting and waitOpen rule out the one a program could
// cause: an open that waits), and the sweep
// must run all the same.
var brokerStop = 2 * time.Second

// close ends serving (every process of the call has exited) and waits
// for it, at most brokerStop: an error says it did not stop, and then
// its descriptors are left open (a number closed here could name another
// file by the time it used it; the launcher ends soon).
func (b *topBroker) close() error {
	_ = unix.Close(b.stop[1])
	// Every process of the call has exited: a launch that never
	// sent the listener has closed its end, so receive returns. A
	// broker never started (the launch failed to start) has nothing
	// to wait for.
	if b.started {
		select {
		case <-b.done:
		case <-time.After(brokerStop):
			return fmt.Errorf("the broker did not stop within %v of the call's end", brokerStop)
		}
	}
	_ = b.conn.Close()
	_ = unix.Close(b.stop[0])
	if b.root >= 0 {
		_ = unix.Close(b.root)
	}
	if b.listener >= 0 {
		_ = unix.Close(b.listener)
	}
	if b.mk != nil {
		b.mk.stop()
	}
	if b.makerRules >= 0 {
		_ = unix.Close(b.makerRules)
	}
	return nil
}

// receive reads the listener from the launch's child.
func (b *topBroker) receive() bool {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(b.conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return false
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return false
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return false
	}
	b.listener = fds[0]
	return true
}

// serve answers notifications until the listener hangs up (no process
// of the call is left) or close.
func (b *topBroker) serve() {
	for {
		fds := []unix.PollFd{{Fd: int32(b.listener), Events: unix.POLLIN}, {Fd: int32(b.stop[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			continue
		}
		var n seccompNotif
		if err := ioctlPtr(b.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			continue // the caller died meanwhile (ENOENT), or a signal
		}
		resp := b.handle(&n)
		if resp == nil {
			continue // answered by ADDFD
		}
		_ = answerIoctl(b.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(resp))
	}
}

// answerIoctl is ioctlPtr for an answer to a call (SEND, ADDFD), with
// every signal blocked on the calling thread while it runs. An ADDFD with
// SECCOMP_ADDFD_FLAG_SEND marks the call answered before the caller
// installs the descriptor; a signal that interrupts the ioctl's wait then
// takes the descriptor back, and the caller's call returns 0 with no
// error, a descriptor it already had, its stdin (kernel/seccomp.c,
// seccomp_notify_addfd, Linux 6.18): git wrote a loose object to it
// (EBADF) when a signal reached the broker's thread, which a test that
// sends the launch's threads signals shows within a few hundred files. A
// SEND or ADDFD interrupted while it waits for the filter's lock returns
// EINTR, which the kernel does not restart: the call got no answer, or
// EMFILE for a file the broker made. SIGKILL and SIGSTOP cannot be
// blocked: a launcher stopped by hand in the middle of a hand-over is
// the one case left.
func answerIoctl(fd int, req uint, p unsafe.Pointer) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all, saved uint64 = math.MaxUint64, 0
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&saved)), 8, 0, 0); e != 0 {
		return e
	}
	err := ioctlPtr(fd, req, p)
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&saved)), 0, 8, 0, 0)
	return err
}

func ioctlPtr(fd int, req uint, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

// brokered is a call the filter sent: its directory descriptor, the
// address of its path, and what it asks.
type brokered struct {
	dirfd  int32
	path   uint64
	flags  int
	mode   uint32
	unlink bool
	rmdir  bool // unlinkat with AT_REMOVEDIR, rmdir
	mkdir  bool // mkdirat, mkdir (mode: its mode)
	// rename: dirfd and path are the new name's; from are the old's.
	rename    bool
	fromDirfd int32
	fromPath  uint64
	noReplace bool
	// exchange: renameat2 with RENAME_EXCHANGE or RENAME_WHITEOUT.
	exchange bool
	// name: a call that makes a name other than by open or rename
	// (mkdir, symlink, link, mknod): in a directory the broker serves it
	// makes a directory itself and leaves the others to Landlock (no rule
	// there); elsewhere in the project the maker makes it.
	name bool
	// symlink: target is the address of the link's text; link: from are
	// the existing name's, linkFlags the call's; mknod: mode and dev.
	symlink, link, mknod bool
	target               uint64
	linkFlags            int
	dev                  uint64
	// truncate: truncate(2), to length (flags: O_WRONLY, an open for
	// writing without O_CREAT).
	truncate bool
	length   int64
}

// brokeredCall reads n's call (ok false: one the broker does not serve).
func brokeredCall(n *seccompNotif) (brokered, bool) {
	a := n.args
	switch n.nr {
	case unix.SYS_OPENAT:
		return brokered{dirfd: int32(a[0]), path: a[1], flags: int(int32(a[2])), mode: uint32(a[3])}, true
	case unix.SYS_UNLINKAT:
		if a[2]&unix.AT_REMOVEDIR != 0 {
			return brokered{dirfd: int32(a[0]), path: a[1], rmdir: true}, true
		}
		return brokered{dirfd: int32(a[0]), path: a[1], unlink: true}, true
	case unix.SYS_MKDIRAT:
		return brokered{dirfd: int32(a[0]), path: a[1], mode: uint32(a[2]), name: true, mkdir: true}, true
	case unix.SYS_MKNODAT:
		return brokered{dirfd: int32(a[0]), path: a[1], name: true, mknod: true, mode: uint32(a[2]), dev: a[3]}, true
	case unix.SYS_SYMLINKAT:
		return brokered{dirfd: int32(a[1]), path: a[2], name: true, symlink: true, target: a[0]}, true
	case unix.SYS_LINKAT:
		return brokered{dirfd: int32(a[2]), path: a[3], name: true, link: true, fromDirfd: int32(a[0]), fromPath: a[1],
			linkFlags: int(int32(a[4]))}, true
	case unix.SYS_TRUNCATE:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], flags: unix.O_WRONLY, truncate: true, length: int64(a[1])}, true
	case unix.SYS_RENAMEAT2:
		if a[4]&^unix.RENAME_NOREPLACE != 0 {
			// An exchange, a whiteout: refused (refusedMove).
			return brokered{exchange: true}, true
		}
		return brokered{rename: true, fromDirfd: int32(a[0]), fromPath: a[1], dirfd: int32(a[2]), path: a[3],
			noReplace: a[4] != 0}, true
	}
	return legacyBrokeredCall(n)
}

// continued hands n's call back to the kernel unchanged
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE: Landlock decides).
func continued(n *seccompNotif) *seccompNotifResp {
	return &seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
}

// failed answers n's call with the error e, the broker's own.
func failed(n *seccompNotif, e unix.Errno) *seccompNotifResp {
	return &seccompNotifResp{id: n.id, error: -int32(e)}
}

// waiting reports whether n's caller still waits in its call: what the
// broker read and opened for it is its, not a process's that died and
// whose pid was reused.
func (b *topBroker) waiting(n *seccompNotif) bool { return idValid(b.listener, n.id) }

// madePerm are the mode bits a name made in the project may have: no
// set-id or sticky bit, and no write for other users, as no mode change
// sets them (refusedModeBits). open(O_CREAT, 04755) and mkdir(03777) made
// a set-uid file and a world-writable directory past the filter's check of
// chmod.
const madePerm = 0o775

// passFlags are the open flags the broker passes on to the file it makes.
const passFlags = unix.O_ACCMODE | unix.O_APPEND | unix.O_NONBLOCK | unix.O_DSYNC | unix.O_SYNC | unix.O_NOCTTY |
	unix.O_TRUNC | unix.O_LARGEFILE | unix.O_DIRECT | unix.O_NOATIME

// handle answers n: nil when ADDFD answered it.
func (b *topBroker) handle(n *seccompNotif) *seccompNotifResp {
	if isModeCall(n.nr) {
		return b.changeMode(n) // made or refused, never continued
	}
	if n.nr == unix.SYS_UTIMENSAT {
		return b.changeTimes(n) // made or refused, never continued
	}
	if b.project == "" {
		return failed(n, unix.EPERM) // nothing else is sent without a project
	}
	if n.nr == unix.SYS_UMASK {
		return b.umaskCall(n)
	}
	delete(b.umaskCalls, n.pid)
	c, ok := brokeredCall(n)
	if r := b.refusedMove(n, c); r != nil {
		return r
	}
	if !ok || !c.unlink && !c.rmdir && !c.rename && !c.name && (c.flags&(unix.O_CREAT|unix.O_WRONLY|unix.O_RDWR|unix.O_TRUNC) == 0 || c.flags&(unix.O_PATH|unix.O_DIRECTORY|unix.O_TMPFILE) != 0) {
		return continued(n)
	}
	var r resolved
	var errno unix.Errno
	if c.open() {
		// Its path, read once: a descriptor of the caller's own by
		// name (ownFdOpen), or where it lands.
		path, read := readPath(int(n.pid), c.path)
		if read && !c.truncate {
			if r := b.ownFdOpen(n, c, path); r != nil {
				return r
			}
		}
		if c.flags&unix.O_CREAT == 0 {
			return b.reopen(n, c, path, read)
		}
		if ok, errno = read, unix.EACCES; read {
			r, ok, errno = b.resolvePath(n, c.dirfd, path, true, false)
		}
	} else {
		if (c.unlink || c.rmdir) && !b.mayBeMine(n, c.path) {
			return continued(n) // rm -r of a tree: nothing the broker made or removes
		}
		r, ok, errno = b.resolve(n, c.dirfd, c.path, !c.rename)
	}
	if !ok {
		if errno != 0 && !c.unlink && !c.rmdir {
			// Where it would land is not known: it could be any name
			// Landlock lets a program make.
			return failed(n, errno)
		}
		return continued(n)
	}
	name, parent, key := r.name, r.parent, r.key
	defer unix.Close(parent)
	top := key == b.rootKey
	pdir, below := b.projectPath(parent)
	if !c.unlink && !c.rmdir && b.protectedIn(pdir, below, top, name) {
		var st unix.Stat_t
		exists := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
		if c.mkdir && exists {
			// mkdir -p .github/ISSUE_TEMPLATE's mkdir of the .github
			// that is there: the kernel's own answer, with nothing to
			// tell (the fifty-second run's agent was told .github was
			// refused, and it was not).
			return failed(n, unix.EEXIST)
		}
		// Executable configuration or an instruction file, at any depth
		// of the project: never made (Landlock cannot refuse a name),
		// nor written through an open that would have made it (echo >>
		// AGENTS.md: the usability run was told "refused to make").
		verb := "make"
		if exists && !c.rename && !c.symlink && !c.name {
			verb = "write"
		}
		if verb == "make" && inBulk(b.project, pdir) {
			// npm's, pip's or a build's copy of a package's own
			// AGENTS.md or .vscode/: said so, since the rest is made
			// (the usability run's agent took the install for failed).
			b.tellLeftOut(pdir, name)
			return failed(n, unix.EACCES)
		}
		b.tell(pdir, name, verb, "executable configuration or an instruction file")
		return failed(n, unix.EACCES)
	}
	if (c.rename || c.symlink) && below && b.aboveFixed(filepath.Join(pdir, name)) {
		// A directory moved, or a link made, where an ancestor of a
		// hooks directory core.hooksPath names would be (mv x ci, with
		// x/hooks/pre-commit, for ci/hooks): git would run what it
		// brings.
		b.tell(pdir, name, "make", "where git would find the hooks directory core.hooksPath names")
		return failed(n, unix.EACCES)
	}
	dir, unclean, served := b.servedDir(key, below)
	if !served {
		switch {
		case c.rename && (below || !r.trailing):
			return b.renameIn(n, c, r, below)
		case below && !c.unlink && !c.rmdir && (!r.trailing || c.mkdir):
			return b.makeBelow(n, c, r)
		}
		// Outside the project: Landlock decides. In it: a removal, or a
		// file's path with a trailing "/", which makes no name.
		return continued(n)
	}
	if !r.trailing && (c.symlink || c.mknod && c.mode&unix.S_IFMT == unix.S_IFIFO) {
		return b.makeServed(n, c, parent, name)
	}
	if r.trailing && !c.mkdir && !c.rmdir || c.name && !c.mkdir {
		// The kernel's: a file's path with a trailing "/", or a
		// directory renamed to one, makes no name here; a hard link or
		// a device at the top or below a directory the broker made is
		// refused by Landlock (no rule there).
		return continued(n)
	}
	sn := servedName{parent: parent, name: name, dir: dir, pdir: pdir, unclean: unclean, below: below, top: top}
	sn.err = unix.Fstatat(parent, name, &sn.st, unix.AT_SYMLINK_NOFOLLOW)
	sn.exists = sn.err == nil
	sn.mine = sn.exists && b.mine[fileKey{sn.st.Dev, sn.st.Ino}]
	switch {
	case c.rename:
		var dest *unix.Stat_t
		if sn.exists {
			dest = &sn.st
		}
		return b.renameTo(n, c, parent, dir, name, dest)
	case c.mkdir && sn.exists:
		return failed(n, unix.EEXIST)
	case c.mkdir:
		return b.makeDir(n, c, parent, name)
	case c.unlink || c.rmdir:
		return b.removeServed(n, c, &sn)
	}
	return b.openServed(n, c, &sn)
}

// servedName is a name in a directory the broker serves, as handle
// looked at it: parent (its directory), dir and pdir (the directory's
// path in the plan and in the project), what Fstatat said of it (st, err,
// exists), whether the broker made it (mine), and where the directory
// is (unclean: one of the plan's; below: in the project; top: its top).
type servedName struct {
	parent              int
	name, dir, pdir     string
	st                  unix.Stat_t
	err                 error
	exists, mine        bool
	unclean, below, top bool
}

// removeServed answers an unlink or rmdir of sn: the broker's own files
// and directories, and the write set's in a directory no rule reaches
// whole, are removed here; any other is the kernel's.
func (b *topBroker) removeServed(n *seccompNotif, c brokered, sn *servedName) *seccompNotifResp {
	st, parent, name := &sn.st, sn.parent, sn.name
	switch {
	case c.rmdir && sn.mine && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil {
			return failed(n, err.(unix.Errno))
		}
		delete(b.mine, fileKey{st.Dev, st.Ino})
		delete(b.dirs, fileKey{st.Dev, st.Ino})
		return &seccompNotifResp{id: n.id}
	case c.unlink && sn.mine && st.Mode&unix.S_IFMT != unix.S_IFDIR:
		if err := unix.Unlinkat(parent, name, 0); err != nil {
			return failed(n, err.(unix.Errno))
		}
		delete(b.mine, fileKey{st.Dev, st.Ino})
		return &seccompNotifResp{id: n.id}
	case sn.unclean && sn.exists && b.ours[filepath.Join(sn.dir, name)] && !b.protectedIn(sn.pdir, sn.below, sn.top, name) &&
		(c.rmdir && st.Mode&unix.S_IFMT == unix.S_IFDIR || c.unlink && st.Mode&unix.S_IFMT == unix.S_IFREG):
		// A directory or file of the write set in a directory no rule
		// reaches whole (rm -r dist, rm package-lock.json): its contents
		// are the program's already.
		flags := 0
		if c.rmdir {
			flags = unix.AT_REMOVEDIR
		}
		if err := unix.Unlinkat(parent, name, flags); err != nil {
			return failed(n, err.(unix.Errno))
		}
		return &seccompNotifResp{id: n.id}
	case c.rmdir && sn.unclean && sn.exists && st.Mode&unix.S_IFMT == unix.S_IFDIR && slices.Contains(b.removeDirs, filepath.Join(sn.dir, name)):
		// A bulk directory (Plan.RemoveDirs) the program emptied: the
		// kernel removes none that is not empty.
		if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil {
			return failed(n, err.(unix.Errno))
		}
		return &seccompNotifResp{id: n.id}
	}
	return continued(n)
}

// openServed answers an open of sn for writing, or with O_CREAT: an
// existing file is opened by writeExisting, and a new one is made here.
func (b *topBroker) openServed(n *seccompNotif, c brokered, sn *servedName) *seccompNotifResp {
	parent, name := sn.parent, sn.name
	switch {
	case sn.exists:
		return b.writeExisting(n, c, parent, name)
	case !errors.Is(sn.err, unix.ENOENT):
		return continued(n) // not told: the program writes no file here
	}
	mode := c.mode & madePerm &^ b.umaskOf(n.pid, "")
	fd, err := unix.Openat(parent, name, c.flags&passFlags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	switch {
	case errors.Is(err, unix.EEXIST) && c.flags&unix.O_EXCL == 0:
		return b.writeExisting(n, c, parent, name) // made meanwhile by another
	case err != nil:
		return continued(n) // the kernel decides, which writes no file here for the program
	}
	var made unix.Stat_t
	if err := unix.Fstat(fd, &made); err != nil || !modeAsAsked(fd, made.Mode, mode) {
		_ = unix.Close(fd)
		_ = unix.Unlinkat(parent, name, 0)
		return failed(n, unix.EIO)
	}
	b.made(fileKey{made.Dev, made.Ino}, name, false)
	return b.hand(n, fd, c, parent, name)
}

// open reports whether c is an open (not a name made or removed).
func (c brokered) open() bool { return !c.unlink && !c.rmdir && !c.rename && !c.name }

// reopen answers an open for writing without O_CREAT, or a truncate, of
// path (read: false when it could not be read): a file of the project is
// opened by writeExisting. Outside the project the kernel decides: it
// writes no file of the project for the program, which has no right to
// write one, whatever path it reads again.
func (b *topBroker) reopen(n *seccompNotif, c brokered, path string, read bool) *seccompNotifResp {
	if !read {
		return continued(n)
	}
	r, ok, _ := b.resolvePath(n, c.dirfd, path, true, false)
	if !ok {
		return continued(n)
	}
	name, parent := r.name, r.parent
	defer unix.Close(parent)
	if _, below := b.projectPath(parent); !below {
		return continued(n)
	}
	return b.writeExisting(n, c, parent, name)
}

// errSecondName: a file with more than one name (writeExisting).
var errSecondName = errors.New("a file with a second name")

// writeExisting answers n's call c, an open for writing or a truncate of
// name in parent (name "": parent, an O_PATH descriptor, is the file), a
// name the broker did not make. The maker opens it, so that the program's
// own rules decide (the maker has them; the program has no right to write
// a file of the project itself: makerRights), and the file the program
// gets is the one looked at: by a descriptor of what the name was
// (O_PATH, its last link followed unless O_NOFOLLOW: pathOf), opened again
// through /proc. A regular file with a second name is refused when the
// call writes it (flock's O_RDONLY|O_CREAT does not): the name may be one
// of pnpm's hard links into its store, which other projects link too, and
// a write there is a write outside the project. A FIFO, or a file whose
// lease the open must wait to break, is opened on a thread of its own
// (waitOpen).
func (b *topBroker) writeExisting(n *seccompNotif, c brokered, parent int, name string) *seccompNotifResp {
	if c.flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		return failed(n, unix.EEXIST) // it exists
	}
	mk := b.theMaker()
	if mk == nil {
		return failed(n, unix.EACCES)
	}
	writes := c.writes()
	// Never waiting here (a device's open; a file under a lease, which
	// an open for writing waits to break: the twenty-first attack run
	// stalled every other call of the launch so): O_NONBLOCK, cleared
	// after unless the program asked for it.
	flags := c.flags&passFlags | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, p, mine, fifo := -1, -1, false, false
	err := mk.do(-1, func() error {
		q, err := pathOf(parent, name, c.flags&unix.O_NOFOLLOW)
		if err != nil {
			return err
		}
		p = q
		var st unix.Stat_t
		if err := unix.Fstat(p, &st); err != nil {
			return err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			if writes && st.Nlink > 1 {
				return errSecondName
			}
			if writes && noRewrite(p) {
				// The user's bytecode, rewritten in place: what their
				// next python runs (the sweep holds back a new one). By
				// the file's own name, not the one opened: a link in the
				// project to it, or /proc/self/fd/N of a descriptor
				// opened for reading, reached it (the thirty-third
				// attack run's class).
				return unix.EACCES
			}
		case unix.S_IFLNK:
			return unix.ELOOP // O_NOFOLLOW, as the kernel says
		case unix.S_IFDIR:
			return unix.EISDIR
		case unix.S_IFIFO:
			fifo = true
		}
		// A file the broker made (a link of its at the top leads to
		// one): no rule reaches it, and it opens it itself; only in the
		// project, where its number was its (one freed by an unlink the
		// broker did not see could be reused by a file anywhere).
		// The map first: projectPath reads a link of /proc, on every
		// write of the project.
		if b.mine[fileKey{st.Dev, st.Ino}] {
			_, mine = b.projectPath(p)
		}
		if mine || fifo {
			return nil
		}
		fd, err = openChecked(p, c, flags)
		return err
	})
	if p >= 0 {
		defer unix.Close(p)
	}
	if err == nil && mine && !fifo {
		fd, err = openChecked(p, c, flags)
	}
	switch {
	case errors.Is(err, errSecondName):
		pdir, _ := b.projectPath(parent) // for the message alone
		b.tellWrite(pdir, name)
		return failed(n, unix.EACCES)
	case errors.Is(err, errNotOurs):
		if r := b.ownFdLink(n, c, parent, name); r != nil {
			return r
		}
		return continued(n)
	case errors.Is(err, unix.ENOENT) && c.flags&unix.O_CREAT != 0:
		// A link to a name that does not exist, or a name gone
		// meanwhile: the kernel's open makes the name the link leads to
		// where the program's rules let it, which in the project is
		// nowhere (makerRights).
		return continued(n)
	case fifo, errors.Is(err, unix.EWOULDBLOCK) && !c.truncate && c.flags&unix.O_NONBLOCK == 0:
		// Its open waits (the other end, the lease's break): on a
		// thread of its own.
		w, err := unix.FcntlInt(uintptr(p), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return failed(n, unix.EMFILE)
		}
		return b.waitOpen(n, c, w, !mine, fifo)
	case err != nil:
		return failed(n, errnoOf(err))
	}
	if c.flags&unix.O_NONBLOCK == 0 {
		if err := clearNonblock(fd); err != nil {
			_ = unix.Close(fd)
			return failed(n, errnoOf(err))
		}
	}
	return b.answer(n, fd, c)
}

// writes reports whether c, an open or a truncate, writes the file.
func (c brokered) writes() bool {
	return c.truncate || c.flags&unix.O_ACCMODE != unix.O_RDONLY || c.flags&unix.O_TRUNC != 0
}

// openChecked opens p, an O_PATH descriptor of the file c opens, again
// through /proc/self/fd as c asks with flags (c's, and O_NONBLOCK as the
// caller needs), on the calling thread (the maker's, restricted by the
// program's rules; the broker's for a file it made), and refuses a file
// the call writes that has a name besides the one it was opened by
// (oneName: errSecondName). O_TRUNC is made by ftruncate once that is
// known, never by the open: a name removed between the look and the open
// truncated the store's file. An O_RDONLY|O_TRUNC open truncates by a
// descriptor opened for writing, and hands one opened for reading.
func openChecked(p int, c brokered, flags int) (int, error) {
	self := "/proc/self/fd/" + strconv.Itoa(p)
	trunc := flags&unix.O_TRUNC != 0
	how := flags &^ unix.O_TRUNC
	if trunc && how&unix.O_ACCMODE == unix.O_RDONLY {
		how = how&^unix.O_ACCMODE | unix.O_WRONLY
	}
	fd, err := unix.Open(self, how, 0)
	if err != nil {
		return -1, err
	}
	if !c.writes() {
		return fd, nil // and no O_TRUNC, which writes
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !oneName(fd, &st) {
		_ = unix.Close(fd)
		return -1, errSecondName
	}
	if !trunc {
		return fd, nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		if err := unix.Ftruncate(fd, 0); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
	}
	if flags&unix.O_ACCMODE != unix.O_RDONLY {
		return fd, nil
	}
	_ = unix.Close(fd)
	return unix.Open(self, flags&^unix.O_TRUNC, 0)
}

// oneName reports whether fd, opened (st: its stat), is not a regular
// file with a name other than the one it was opened by: it has at most one
// name, and that one was not removed (namedBy), or it has none at all.
// Landlock judged the open by the name it was opened by: with that name
// removed and the store's left, nlink is 1, and a descriptor of a removed
// name of the project wrote the store's file (the twenty-second attack
// run: by a descriptor kept across the rm, and by a race between the look
// and the rm). Looked at in this order, after the open: no call of the
// program gives a file a new name in the project, so one name counted and
// a name found not removed after are the same name.
func oneName(fd int, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink == 0 {
		return true
	}
	return st.Nlink == 1 && namedBy(fd, st)
}

// namedBy reports whether the path the kernel gives for fd (st: its
// stat) still names it: not so once that name was removed (the kernel
// adds " (deleted)" to it, which a name of its own may end with too: a
// file named "x (deleted)" was refused its appends by the suffix alone).
func namedBy(fd int, st *unix.Stat_t) bool {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	var now unix.Stat_t
	return unix.Fstatat(unix.AT_FDCWD, p, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

// ownFdOpen answers n's open c of one of its caller's own descriptors by
// a path that names it (path: /dev/stdout, /dev/fd/N, /proc/self/fd/N)
// when the descriptor is a file of the project: the program has no right
// to write one, and `echo x > /dev/stdout` under `> out.txt` was refused.
// The file is opened again as writeExisting opens one, from the
// descriptor the caller holds. nil: not such a path, or not a file of the
// project (the kernel's to open, in the program's own /proc).
func (b *topBroker) ownFdOpen(n *seccompNotif, c brokered, path string) *seccompNotifResp {
	fdn, ok := ownFdPath(path)
	if !ok {
		return nil
	}
	pfd, ok := b.procTarget(n, "fd/"+strconv.Itoa(fdn))
	if !ok {
		return nil
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if _, below := b.projectPath(pfd); !below {
		return nil
	}
	return b.writeExisting(n, c, pfd, "")
}

// ownFdLink is ownFdOpen of the text of the link name in parent (one
// level: a log linked to /dev/stdout).
func (b *topBroker) ownFdLink(n *seccompNotif, c brokered, parent int, name string) *seccompNotifResp {
	buf := make([]byte, 64)
	k, err := unix.Readlinkat(parent, name, buf)
	if err != nil || k == len(buf) {
		return nil
	}
	return b.ownFdOpen(n, c, string(buf[:k]))
}

// ownFdPath is the number of the descriptor a path names by the caller's
// own /proc or /dev (/dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N).
func ownFdPath(p string) (int, bool) {
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			k, err := strconv.Atoi(rest)
			return k, err == nil && k >= 0 && strconv.Itoa(k) == rest
		}
	}
	return 0, false
}

// errNotOurs: a path the broker cannot follow for the program (pathOf).
var errNotOurs = errors.New("a path through /proc")

// filePath is the path of the file p (an O_PATH descriptor) is, as its
// descriptor's link says ("" when it cannot be read).
func filePath(p int) string {
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(p))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(target, " (deleted)")
}

// noRewrite reports whether the file p (an O_PATH descriptor) is one a
// call may not rewrite in place, by the path its descriptor has: Python's
// bytecode, an extension module beside its source, a Python environment's
// startup file (isStartupFile: a .pth, sitecustomize or usercustomize in
// site-packages, a pyvenv.cfg) or a file of its bin (venvBinFile). One
// readlink, where each check read the descriptor's link of its own.
func noRewrite(p int) bool {
	t := filePath(p)
	return isBytecode(filepath.Base(t)) || shadowingExtension(t) || isStartupFile(filepath.Dir(t), filepath.Base(t)) || venvBinFile(p, t)
}

// venvBinFile reports whether the file p (an O_PATH descriptor; target
// its path, filePath's) is in a Python environment's bin: a directory
// named bin whose parent holds a pyvenv.cfg (the eighty-third attack
// run's bin/activate, which the user's shell sources, and bin/python3).
// The directory is opened by the path, then taken only if it holds p
// under its name (a file written has that one name: a second is refused
// before), and its pyvenv.cfg looked up from it (its "..", not a path a
// call could swap meanwhile). A directory that cannot be opened, or that
// holds another file under that name now, counts as one.
func venvBinFile(p int, target string) bool {
	dir := filepath.Dir(target)
	if filepath.Base(dir) != "bin" {
		return false
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(d)
	var f, in unix.Stat_t
	if unix.Fstat(p, &f) != nil || unix.Fstatat(d, filepath.Base(target), &in, unix.AT_SYMLINK_NOFOLLOW) != nil || f.Dev != in.Dev || f.Ino != in.Ino {
		return true
	}
	return venvConfigBeside(d)
}

// shadowingExtension reports whether the file at target (filePath's) is an
// extension module beside its module's source (shadowsSource), judged in
// the directory it is in now: a rewrite in place changes no directory, so
// the sweep never looks (the forty-sixth attack run's). A directory that
// cannot be opened counts as one where it is.
func shadowingExtension(target string) bool {
	if !strings.HasSuffix(target, ".so") {
		return false
	}
	dir, err := unix.Open(filepath.Dir(target), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(dir)
	return shadowsSource(dir, filepath.Base(target))
}

// pathOf opens name in parent as O_PATH, its last link followed unless
// nofollow, as the program's open would, but through no magic link and
// to nothing in /proc (errNotOurs): there /proc/self is the broker's, and
// a link in the project to /proc/self/fd/15 gave the program the broker's
// own pipe, which stopped it, and one to /proc/self/maps the second
// stage's map (the twenty-first attack run). Such a path is the kernel's
// to open, in the program's own /proc (a log linked to /dev/stdout).
func pathOf(parent int, name string, nofollow int) (int, error) {
	if name == "" {
		// parent is the file (ownFdOpen).
		p, err := unix.FcntlInt(uintptr(parent), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		return p, nil
	}
	how := unix.OpenHow{Flags: uint64(unix.O_PATH | unix.O_CLOEXEC | nofollow), Resolve: unix.RESOLVE_NO_MAGICLINKS}
	p, err := unix.Openat2(parent, name, &how)
	if errors.Is(err, unix.ELOOP) && nofollow == 0 {
		return -1, errNotOurs // a magic link, or a loop the kernel will find too
	}
	if err != nil {
		return -1, err
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(p, &fs); err != nil || fs.Type == unix.PROC_SUPER_MAGIC {
		_ = unix.Close(p)
		return -1, errNotOurs
	}
	return p, nil
}

// answer answers n's call c with fd, a file opened for it: its descriptor
// handed over, or for a truncate the file truncated.
func (b *topBroker) answer(n *seccompNotif, fd int, c brokered) *seccompNotifResp {
	if !c.truncate {
		return b.hand(n, fd, c, -1, "")
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, c.length); err != nil {
		return failed(n, errnoOf(err))
	}
	return &seccompNotifResp{id: n.id}
}

// tellWrite says, as tell does, that writing name in dir was refused.
func (b *topBroker) tellWrite(dir, name string) {
	if rel, ok := b.firstTelling(dir, name); ok {
		fmt.Fprintln(os.Stderr, oneLine(fmt.Sprintf("loopguard: refused to write %s: the file has another name (a hard link, as pnpm's node_modules are into its store, which other projects share), which the write would change too; to change this name alone, write a new file and rename it over this one (as sed -i does)", rel)))
	}
}

// clearNonblock clears fd's O_NONBLOCK, which the broker's own open set.
func clearNonblock(fd int) error {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	return err
}

// maxFifoOpens bounds the opens waiting at once (waitOpen: a FIFO's for
// its other end, a file's for a lease's break); one more is answered
// EAGAIN.
const maxFifoOpens = 64

// waitOpen opens pfd, an O_PATH descriptor (closed here) of a FIFO (fifo)
// or of a file under a lease, for n's call c on a goroutine of its own,
// which answers the call when the open returns; restricted: on a thread
// restricted by the maker's rules (confineThread), a file the broker did
// not make, which the program's own rules must let it open.
func (b *topBroker) waitOpen(n *seccompNotif, c brokered, pfd int, restricted, fifo bool) *seccompNotifResp {
	if b.fifoOpens.Load() >= maxFifoOpens {
		_ = unix.Close(pfd)
		return failed(n, unix.EAGAIN)
	}
	lfd, err := unix.FcntlInt(uintptr(b.listener), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(pfd)
		return failed(n, unix.EMFILE)
	}
	id, flags := n.id, c.flags
	b.fifoOpens.Add(1)
	go func() {
		defer b.fifoOpens.Add(-1)
		defer unix.Close(lfd)
		defer unix.Close(pfd)
		answer := func(e unix.Errno) {
			resp := &seccompNotifResp{id: id, error: -int32(e)}
			_ = answerIoctl(lfd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(resp))
		}
		// deliver answers the call with the open's result: fd handed
		// over (and closed here), or err.
		deliver := func(fd int, err error) {
			if errors.Is(err, errSecondName) {
				err = unix.EACCES
			}
			if err != nil {
				answer(errnoOf(err))
				return
			}
			if err := addFd(lfd, id, fd, flags); err != nil && !errors.Is(err, unix.ENOENT) {
				answer(unix.EMFILE)
			}
			_ = unix.Close(fd)
		}
		if restricted {
			// Never unlocked: the thread ends with this goroutine, and
			// its restriction with it.
			runtime.LockOSThread()
			if err := confineThread(b.makerRules); err != nil {
				answer(unix.EACCES)
				return
			}
		}
		if fifo {
			// A FIFO's open waits for its other end as the kernel's
			// would (tried again without waiting, a writer met a reader
			// about to close: lines were lost, and with namespaces a
			// loop of writers and readers stalled: the twenty-third
			// attack run); a watcher ends the wait when the caller is
			// gone (a writer killed while its open waited left it to
			// meet the next reader, which read nothing, and held its
			// slot: the twenty-second).
			done, stopped := make(chan struct{}), make(chan struct{})
			go b.endWaitWhenGone(lfd, id, pfd, c.flags, restricted, done, stopped)
			fd, err := openChecked(pfd, c, flags&passFlags|unix.O_CLOEXEC)
			close(done)
			<-stopped // it uses lfd and pfd, closed on return
			deliver(fd, err)
			return
		}
		// A file under a lease: tried again without waiting, while the
		// caller still waits in its call (an open that must break a
		// lease starts the break though it fails, EWOULDBLOCK).
		for pause := time.Millisecond; ; pause = min(2*pause, maxWaitPause) {
			fd, err := openChecked(pfd, c, flags&passFlags|unix.O_CLOEXEC|unix.O_NONBLOCK)
			if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EWOULDBLOCK) {
				if !idValid(lfd, id) {
					return // gone: nothing to answer
				}
				time.Sleep(pause)
				continue
			}
			if err == nil && flags&unix.O_NONBLOCK == 0 {
				if err = clearNonblock(fd); err != nil {
					_ = unix.Close(fd)
				}
			}
			deliver(fd, err)
			return
		}
	}()
	return nil
}

// endWaitWhenGone ends a FIFO's open waiting on pfd for the call id
// (its flags) once the call is no longer waiting on the listener lfd, by
// opening the other end for a moment, on a thread restricted by the
// program's rules when the FIFO is not the broker's own (restricted);
// done: the open returned; stopped is closed when it returns.
func (b *topBroker) endWaitWhenGone(lfd int, id uint64, pfd, flags int, restricted bool, done, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(fifoWatch)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if idValid(lfd, id) {
			continue
		}
		other := unix.O_RDONLY
		if flags&unix.O_ACCMODE == unix.O_RDONLY {
			other = unix.O_WRONLY
		}
		if restricted {
			// Never unlocked: the thread ends with this goroutine.
			runtime.LockOSThread()
			if confineThread(b.makerRules) != nil {
				return
			}
		}
		if fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), other|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			_ = unix.Close(fd)
		}
		return
	}
}

// fifoWatch is how often a FIFO's waiting open asks whether its caller
// still waits.
const fifoWatch = 20 * time.Millisecond

// maxWaitPause bounds the pause between a waiting open's tries.
const maxWaitPause = 50 * time.Millisecond

// idValid reports whether the call id still waits for its answer on the
// listener lfd.
func idValid(lfd int, id uint64) bool {
	return ioctlPtr(lfd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// modeAsAsked gives the file fd, which the broker made with mode (the
// program's umask taken off already) and which has have, that mode: the
// broker's own umask (the first stage's, often 022) was taken off too,
// and a file the program made at the top with umask 002 was 0644 where
// the same made below was 0664 (the forty-second attack run).
func modeAsAsked(fd int, have, mode uint32) bool {
	return have&0o7777 == mode || unix.Fchmod(fd, mode) == nil
}

// made records a file or directory the broker made, named name.
func (b *topBroker) made(k fileKey, name string, dir bool) {
	b.mine[k] = true
	b.names[name] = true
	if dir {
		b.dirs[k] = true
	}
}

// makeDir makes the directory name in parent (the top, or a directory
// the broker made) for n's caller, with the caller's umask and no set-id
// or sticky bit; what is made in it is made by the broker too, since no
// Landlock rule reaches it.
func (b *topBroker) makeDir(n *seccompNotif, c brokered, parent int, name string) *seccompNotifResp {
	mode := c.mode & madePerm &^ b.umaskOf(n.pid, "")
	if err := unix.Mkdirat(parent, name, mode); err != nil {
		if e, ok := err.(unix.Errno); ok {
			return failed(n, e)
		}
		return failed(n, unix.EIO)
	}
	var st unix.Stat_t
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		ok := unix.Fstat(fd, &st) == nil && modeAsAsked(fd, st.Mode, mode)
		_ = unix.Close(fd)
		if !ok {
			err = unix.EIO
		}
	}
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		_ = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
		return failed(n, unix.EIO)
	}
	if !b.waiting(n) { // otherwise nothing stays
		_ = unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
		return failed(n, unix.ENOENT)
	}
	b.made(fileKey{st.Dev, st.Ino}, name, true)
	return &seccompNotifResp{id: n.id}
}

// makeServed makes the symbolic link or FIFO name in parent (the top, or
// a directory the broker made) for n's caller, where no Landlock rule
// reaches: python3 -m venv .venv (its lib64 and bin/python links) and
// npm's bin links in a new node_modules failed there. A link's text
// names any place, as below the top; the sweep holds back one into the
// launcher's caches or through /proc. Under the jail's capability no
// link is made, as below.
func (b *topBroker) makeServed(n *seccompNotif, c brokered, parent int, name string) *seccompNotifResp {
	var err error
	if c.symlink {
		if b.noLinks {
			return failed(n, unix.EACCES) // as Landlock refuses one below
		}
		target, ok := readPath(int(n.pid), c.target)
		if !ok {
			return failed(n, unix.EACCES) // not read: cannot tell what it makes
		}
		err = unix.Symlinkat(target, parent, name)
	} else {
		err = unix.Mknodat(parent, name, unix.S_IFIFO|c.mode&madePerm&^b.umaskOf(n.pid, ""), 0)
	}
	if err != nil {
		return failed(n, errnoOf(err))
	}
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return failed(n, unix.EIO)
	}
	if !b.waiting(n) { // otherwise nothing stays
		_ = unix.Unlinkat(parent, name, 0)
		return failed(n, unix.ENOENT)
	}
	b.made(fileKey{st.Dev, st.Ino}, name, false)
	return &seccompNotifResp{id: n.id}
}

// mayBeMine: the last name of the path at addr is one the broker made in
// this call, or one of the write set's in a directory it serves, which it
// may remove (where it is, resolve finds).
func (b *topBroker) mayBeMine(n *seccompNotif, addr uint64) bool {
	if len(b.names) == 0 && len(b.ourNames) == 0 {
		return false
	}
	path, ok := readPath(int(n.pid), addr)
	if !ok {
		return false
	}
	path = strings.TrimRight(path, "/")
	name := path[strings.LastIndexByte(path, '/')+1:]
	return b.names[name] || b.ourNames[name]
}

// findServed finds the directories the broker serves and the write set's
// entries in them (plan.Unclean, the write set): a directory that is not
// one now (a link, gone) is not served.
func (b *topBroker) findServed(plan Plan) {
	b.served = map[fileKey]string{b.rootKey: plan.Project}
	b.ours, b.ourNames = map[string]bool{}, map[string]bool{}
	paths := map[string]bool{plan.Project: true}
	for _, d := range plan.Unclean {
		var st unix.Stat_t
		if d == plan.Project || !fsx.Within(d, plan.Project) || unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		b.served[fileKey{st.Dev, st.Ino}] = d
		paths[d] = true
	}
	for _, p := range slices.Concat(plan.WriteDirs, plan.WriteFiles) {
		if paths[filepath.Dir(p)] {
			b.ours[p] = true
			b.ourNames[filepath.Base(p)] = true
		}
	}
	b.removeDirs = plan.RemoveDirs
	for _, d := range plan.RemoveDirs {
		b.ourNames[filepath.Base(d)] = true
	}
}

// renameTo answers a rename to name in parent, a directory the broker
// serves (the top, or one it made; dest: what has that name now, if
// anything). A protected name is refused before (handle). The broker
// moves, within what it serves:
//   - a file or directory it made (npm's write-file-atomic: a temporary
//     file beside the target, renamed over it);
//   - a file or directory of the write set at the top (mv src src2);
//
// to a new name, over another it made, or over a file of the write set
// at the top (sed -i README.md: a temporary file renamed over it). What
// it moved is then its own in this call. Anything from elsewhere is
// answered EXDEV, on which mv and go copy it instead (which the broker
// serves); any other name that exists is the kernel's to judge (Landlock
// refuses it, as before).
func (b *topBroker) renameTo(n *seccompNotif, c brokered, parent int, dir, name string, dest *unix.Stat_t) *seccompNotifResp {
	if dest != nil {
		switch {
		case !b.mine[fileKey{dest.Dev, dest.Ino}] && !(dir != "" && dest.Mode&unix.S_IFMT == unix.S_IFREG && b.ours[filepath.Join(dir, name)]):
			return continued(n)
		case c.noReplace:
			return failed(n, unix.EEXIST)
		}
	}
	fr, ok, _ := b.resolve(n, c.fromDirfd, c.fromPath, false)
	if !ok {
		return failed(n, unix.EXDEV)
	}
	from, fparent, fkey := fr.name, fr.parent, fr.key
	defer unix.Close(fparent)
	fpdir, fbelow := b.projectPath(fparent)
	if fp := filepath.Join(fpdir, from); fbelow && dest == nil && fpdir == dir && bulkRoot(b.removeDirs, fp) != "" && !b.fixed[fp] && !b.aboveFixed(fp) && sameFile(fparent, parent) {
		return b.bulkMove(n, fparent, from, parent, name)
	}
	if fbelow && b.pinnedSource(filepath.Join(fpdir, from)) {
		b.tellMove(fpdir, from)
		return failed(n, unix.EACCES)
	}
	fdir, funclean, fserved := b.servedDir(fkey, fbelow)
	if !fserved {
		return failed(n, unix.EXDEV)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fparent, from, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return continued(n)
	}
	key := fileKey{st.Dev, st.Ino}
	ours := funclean && b.ours[filepath.Join(fdir, from)] && !b.protectedIn(fpdir, fbelow, fkey == b.rootKey, from) &&
		(st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFDIR)
	if !b.mine[key] && !ours {
		return continued(n) // one the broker did not make: Landlock's
	}
	if err := unix.Renameat(fparent, from, parent, name); err != nil {
		return failed(n, err.(unix.Errno))
	}
	if dest != nil {
		// What it replaced is gone: its inode may be another file's next
		// (an attack run got a directory in its TMPDIR taken for one the
		// broker made, and served, by the number alone).
		gone := fileKey{dest.Dev, dest.Ino}
		delete(b.mine, gone)
		delete(b.dirs, gone)
	}
	b.mine[key] = true
	b.names[name] = true
	return &seccompNotifResp{id: n.id}
}

// sameFile reports whether the descriptors a and b are the one file.
func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	return unix.Fstat(a, &sa) == nil && unix.Fstat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// bulkMove answers a rename in a directory of a bulk directory
// (Plan.RemoveDirs), to a name there that is not protected and does not
// exist: npm moves a package it removes or replaces aside first
// (node_modules/.foo-XXXX), and back when it fails, and a package's own
// AGENTS.md in it refused the move. Only within the one directory: what
// moves keeps its ancestors, so no rule reaches it that did not (a
// directory the program emptied of protected entries, which a launch
// beside this one found clean and granted whole, gets no nested
// repository moved in), and nothing leaves the bulk directory by this (a
// move out needs the refer right, which no rule there grants).
func (b *topBroker) bulkMove(n *seccompNotif, fparent int, from string, parent int, name string) *seccompNotifResp {
	if err := unix.Renameat2(fparent, from, parent, name, unix.RENAME_NOREPLACE); err != nil {
		return failed(n, err.(unix.Errno))
	}
	return &seccompNotifResp{id: n.id}
}

// hand gives the program fd as its call's result; a call whose process
// died meanwhile leaves nothing it made (made: the name it created in
// parent, "" when it made none).
func (b *topBroker) hand(n *seccompNotif, fd int, c brokered, parent int, made string) *seccompNotifResp {
	defer unix.Close(fd)
	if err := addFd(b.listener, n.id, fd, c.flags); err != nil {
		if made != "" {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil {
				delete(b.mine, fileKey{st.Dev, st.Ino})
			}
			_ = unix.Unlinkat(parent, made, 0)
		}
		if errors.Is(err, unix.ENOENT) {
			return nil // the caller is gone
		}
		return failed(n, unix.EMFILE)
	}
	return nil
}

// addFd answers the call id by installing fd in its caller as the call's
// result, close-on-exec if flags (the call's) ask for it.
func addFd(listener int, id uint64, fd int, flags int) error {
	a := seccompNotifAddfd{id: id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(fd)}
	if flags&unix.O_CLOEXEC != 0 {
		a.newfdFlags = unix.O_CLOEXEC
	}
	return answerIoctl(listener, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a))
}

// protectedIn: name in the directory dir (its path in the project, as
// projectPath gives it; below false: outside the project; top: the
// project's top) is executable configuration or an instruction file of
// the project (policy's one list, the hook directories core.hooksPath
// names), or one of the guard's own paths.
func (b *topBroker) protectedIn(dir string, below, top bool, name string) bool {
	if top {
		return b.pl.Classify(filepath.Join(b.project, name)).Protected()
	}
	if !below {
		return false // outside the project: Landlock's alone
	}
	p := filepath.Join(dir, name)
	for _, k := range b.kept {
		if p != k && isAncestorOrSelf(k, p) {
			// In a git directory +git writes, the pins alone are
			// protected (gitpin.go): git makes names of its own there,
			// dot names too (gc's .tmp-PID-pack-*.pack), which Classify
			// takes, as all of .git, for executable configuration.
			for f := range b.fixed {
				if isAncestorOrSelf(f, p) {
					return true
				}
			}
			return false
		}
	}
	// A fixed path's last name is none of the protected names: a hooks
	// directory core.hooksPath names that does not exist yet (ci/hooks)
	// would be made, and run on the user's next commit.
	// In a directory that holds protected entries of two names (.github,
	// for .github/hooks) every name is judged: hooks alone is none that
	// policy.NameCouldBeProtected takes.
	return b.fixed[p] || (policy.NameCouldBeProtected(name) || b.pl.Classify(dir).Holds) && b.pl.Classify(p).Protected()
}

// renameIn answers a rename to to, a directory the broker does not serve
// (below: in the project): a directory moved in from outside the project,
// or out of one the broker made, is answered EXDEV (mv then copies it,
// name by name, each made through this broker: a .git inside it is
// refused); anything else the maker moves in the project (makeRename),
// and Landlock judges outside it.
func (b *topBroker) renameIn(n *seccompNotif, c brokered, to resolved, below bool) *seccompNotifResp {
	fr, ok, errno := b.resolve(n, c.fromDirfd, c.fromPath, false)
	if !ok {
		if errno != 0 {
			// Not known where it comes from: a directory moved in from
			// outside the project would bring its names past the
			// broker. mv then copies, name by name.
			return failed(n, unix.EXDEV)
		}
		return continued(n)
	}
	from, parent, key := fr.name, fr.parent, fr.key
	defer unix.Close(parent)
	if b.dirs[key] {
		// Out of a directory the broker made, which no rule reaches: mv
		// copies it, name by name.
		return failed(n, unix.EXDEV)
	}
	fromDir, fromBelow := b.projectPath(parent)
	if fromBelow && b.pinnedSource(filepath.Join(fromDir, from)) {
		b.tellMove(fromDir, from)
		return failed(n, unix.EACCES)
	}
	if below && !fromBelow {
		// Into the project from outside it: whatever it is when the
		// maker moves it (a second thread can swap a file for a
		// directory holding a .git between a look and the move), mv and
		// go copy it instead, name by name, each judged.
		return failed(n, unix.EXDEV)
	}
	onward := func() *seccompNotifResp {
		if below {
			return b.makeRename(n, c, fr, to)
		}
		return continued(n)
	}
	if _, unclean := b.served[key]; unclean {
		return onward()
	}
	var st unix.Stat_t
	if err := unix.Fstatat(parent, from, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return onward()
	}
	if fromBelow {
		return onward()
	}
	return failed(n, unix.EXDEV)
}

// maxTold bounds the refusals a call's output names (a loop that tries
// one name a thousand times says it once).
const maxTold = 10

// tell says on the call's standard error that making (verb: make) or
// writing (write) the name in dir (a directory of the project, by its
// path; "" outside it) was refused and why, so that the agent reads a
// reason and not the program's bare "Permission denied". Each name once,
// at most maxTold.
func (b *topBroker) tell(dir, name, verb, why string) {
	if rel, ok := b.firstTelling(dir, name); ok {
		fmt.Fprintln(os.Stderr, oneLine(fmt.Sprintf("loopguard: refused to %s %s in the project: %s (it reaches the project only with the user's approval)", verb, rel, why)))
	}
}

// tellLeftOut says, as tell does, that name in dir, a directory of
// installed packages or build products, was not made.
func (b *topBroker) tellLeftOut(dir, name string) {
	if rel, ok := b.firstTelling(dir, name); ok {
		fmt.Fprintln(os.Stderr, oneLine(fmt.Sprintf("loopguard: left out %s: executable configuration or an instruction file is not made in a directory of installed packages or build products either; the rest of what the call makes there is (it reaches the project only with the user's approval)", rel)))
	}
}

// tellMove says, as tell does, that moving name in dir was refused.
func (b *topBroker) tellMove(dir, name string) {
	if rel, ok := b.firstTelling(dir, name); ok {
		fmt.Fprintln(os.Stderr, oneLine(fmt.Sprintf("loopguard: refused to move %s: it is, or holds, executable configuration or an instruction file, which stays where it is", rel)))
	}
}

// firstTelling marks name in dir (a directory of the project by its path;
// "" outside it) as said, and gives its path in the project: ok is false
// when it was said already, or is past maxTold (the first past it says
// that no more are named).
func (b *topBroker) firstTelling(dir, name string) (rel string, ok bool) {
	if dir == "" {
		return "", false
	}
	rel, err := filepath.Rel(b.project, filepath.Join(dir, name))
	if err != nil || b.told[rel] || len(b.told) > maxTold {
		return "", false
	}
	b.told[rel] = true
	if len(b.told) > maxTold {
		fmt.Fprintln(os.Stderr, "loopguard: further names refused in the project are not named")
		return "", false
	}
	return rel, true
}

// servedDir: the directory whose key is key, in the project (below), is
// one the broker serves (unclean: one of the plan's, at dir; or one it
// made). Never one outside the project, whatever its number.
func (b *topBroker) servedDir(key fileKey, below bool) (dir string, unclean, served bool) {
	if !below {
		return "", false, false
	}
	dir, unclean = b.served[key]
	return dir, unclean, unclean || b.dirs[key]
}

// pinnedSource: p, a path in the project a rename would move, is +git's
// git directory, one of its pins or what holds one (a hooks directory
// core.hooksPath names, or an ancestor of one, too), or a held entry or
// what holds one (heldBelow). Judged on the resolution the rename then
// uses (its descriptors), never a second read of the caller's path. The
// seventeenth attack run's mv .git .gitx had the sweep hold the user's
// whole repository back, and mv .git/objects left none; the eighteenth
// moved vendor/, holding a nested repository, away and back across three
// launches. With namespaces the kernel refuses these moves too (every
// directory above a held entry is a mount point: isolateTree).
func (b *topBroker) pinnedSource(p string) bool {
	return b.fixed[p] || b.aboveFixed(p) || slices.Contains(b.kept, p) || b.heldBelow(p)
}

// umaskCall lets n, a umask call, go on. What umaskOf read may be
// another's now (threads share it), and what it reads is not kept until
// this call is known to be done: when its thread makes its next call that
// comes here.
func (b *topBroker) umaskCall(n *seccompNotif) *seccompNotifResp {
	clear(b.umasks)
	b.umaskCalls[n.pid] = true
	return continued(n)
}

// refusedMove refuses n's call c when it is a rename that swaps two
// names (RENAME_EXCHANGE; or a whiteout): each would move where the other
// was, and a directory that holds executable configuration, swapped with
// an empty one, would leave the paths every held entry is mounted on and
// checked at. Answered as a file system without them answers; programs
// then rename, which renameTo and renameIn judge (pinnedSource: no held
// entry, nor what holds one, moves). nil: not refused here.
func (b *topBroker) refusedMove(n *seccompNotif, c brokered) *seccompNotifResp {
	if c.exchange {
		return failed(n, unix.EINVAL)
	}
	return nil
}

// heldBelow: p, a path in the project, is one of the held entries or
// holds one.
func (b *topBroker) heldBelow(p string) bool {
	i, found := slices.BinarySearch(b.held, p)
	if found {
		return true
	}
	return i < len(b.held) && strings.HasPrefix(b.held[i], p+"/")
}

// aboveFixed: p, a path in the project, is an ancestor of one of the
// fixed protected paths (a hooks directory core.hooksPath names).
func (b *topBroker) aboveFixed(p string) bool {
	for f := range b.fixed {
		if f != p && fsx.Within(f, p) {
			return true
		}
	}
	return false
}

// projectPath is the directory parent's path in the project, spelled as
// the plan spells the project; false when it is not in the project.
func (b *topBroker) projectPath(parent int) (string, bool) {
	dir, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(parent))
	if err != nil || !fsx.Within(dir, b.real) {
		return "", false
	}
	return b.project + dir[len(b.real):], true
}

// theMaker is the maker, started at its first use; nil (and the call
// refused) when it could not start.
func (b *topBroker) theMaker() *maker {
	if b.mk == nil && b.mkErr == nil {
		if b.makerRules < 0 {
			b.mkErr = errors.New("no ruleset for it")
		} else {
			b.mk, b.mkErr = startMaker(b.makerRules)
		}
		if b.mkErr != nil {
			fmt.Fprintf(os.Stderr, "loopguard: the launcher cannot make names in the project for the program (%v): each is refused\n", b.mkErr)
		}
	}
	return b.mk
}

// makeBelow makes the name n's call c makes at r, in a directory of the
// project the broker does not serve (one a rule grants whole), by the
// maker: from the name the broker read and judged, never the path the
// kernel would read again.
func (b *topBroker) makeBelow(n *seccompNotif, c brokered, r resolved) *seccompNotifResp {
	parent, name := r.parent, r.name
	var st unix.Stat_t
	if !c.name && unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		// An open of an existing name (a link's target, if it is one):
		// the program's own rules decide, by the maker, and give it no
		// name to make.
		return b.writeExisting(n, c, parent, name)
	}
	mk := b.theMaker()
	if mk == nil {
		return failed(n, unix.EACCES)
	}
	mask := int(b.umaskOf(n.pid, r.proc))
	var err error
	switch {
	case c.mkdir:
		err = mk.do(mask, func() error { return unix.Mkdirat(parent, name, c.mode&madePerm) })
	case c.mknod:
		err = mk.do(mask, func() error { return unix.Mknodat(parent, name, c.mode&(unix.S_IFMT|madePerm), int(c.dev)) })
	case c.symlink:
		target, ok := readPath(int(n.pid), c.target)
		if !ok {
			return failed(n, unix.EACCES) // not read: cannot tell what it makes
		}
		err = mk.do(-1, func() error { return unix.Symlinkat(target, parent, name) })
	case c.link:
		// No second name for a file in the project: a write through one
		// made in a directory the undo record leaves out (node_modules/m,
		// a link of Makefile) changed the Makefile past the record and
		// the hook's warning before an unjailed make (the sixteenth
		// attack run). EXDEV, on which git, cargo and cp -l make the
		// file another way (a rename, a copy).
		return failed(n, unix.EXDEV)
	default: // an open with O_CREAT of a name that does not exist
		fd := -1
		err = mk.do(mask, func() error {
			var err error
			fd, err = unix.Openat(parent, name, c.flags&passFlags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, c.mode&madePerm)
			return err
		})
		switch {
		case errors.Is(err, unix.EEXIST) && c.flags&unix.O_EXCL == 0:
			// Made meanwhile: as above.
			return b.writeExisting(n, c, parent, name)
		case err != nil:
			return failed(n, errnoOf(err))
		}
		return b.hand(n, fd, c, parent, name)
	}
	if err != nil {
		return failed(n, errnoOf(err))
	}
	if !b.waiting(n) { // gone meanwhile: nothing stays
		flags := 0
		if c.mkdir {
			flags = unix.AT_REMOVEDIR
		}
		_ = unix.Unlinkat(parent, name, flags)
		return failed(n, unix.ENOENT)
	}
	return &seccompNotifResp{id: n.id}
}

// makeRename moves fr to to for n's call c, both in the project, by the
// maker (the names the broker read and judged; Landlock, by the
// program's rules, says whether it may).
func (b *topBroker) makeRename(n *seccompNotif, c brokered, fr, to resolved) *seccompNotifResp {
	if fr.trailing || to.trailing {
		// A path ending in "/" renames only a directory.
		var st unix.Stat_t
		if err := unix.Fstatat(fr.parent, fr.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return failed(n, unix.ENOTDIR)
		}
	}
	mk := b.theMaker()
	if mk == nil {
		return failed(n, unix.EACCES)
	}
	flags := uint(0)
	if c.noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	if err := mk.do(-1, func() error { return unix.Renameat2(fr.parent, fr.name, to.parent, to.name, flags) }); err != nil {
		return failed(n, errnoOf(err))
	}
	return &seccompNotifResp{id: n.id}
}

// errnoOf is err's errno (EIO for an error that is none).
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

// resolve finds the directory a path of n's call names, from the caller's
// root, working directory or descriptor (dirfd), and returns the last
// name, the directory (open: the caller closes it) and its device and
// inode (the project's top: b.rootKey). ok false is either "need not"
// (errno 0: quick, a name made outside the project, which no protection
// names; a last name no call can make, "." or "..") or "cannot tell"
// (errno set): a path in memory the broker cannot read (the program made
// itself non-dumpable, or runs an execute-only binary), a directory
// /proc does not show. Cannot tell is refused, never handed to the
// kernel, which would make any name there that Landlock allows. A path
// ending in "/" is judged by its last name (mkdir build/; rename to
// src/d/.git/), and trailing says it had one.
func (b *topBroker) resolve(n *seccompNotif, dirfd int32, addr uint64, quick bool) (r resolved, ok bool, errno unix.Errno) {
	path, ok := readPath(int(n.pid), addr)
	if !ok {
		return resolved{}, false, unix.EACCES
	}
	return b.resolvePath(n, dirfd, path, quick, false)
}

// resolvePath is resolve of path, read; dots: a last name "." or ".."
// is resolved too (the directory itself, or its parent: what a mode or
// time change names), never "".
func (b *topBroker) resolvePath(n *seccompNotif, dirfd int32, path string, quick, dots bool) (r resolved, ok bool, errno unix.Errno) {
	if len(path) > 1 && strings.HasSuffix(path, "/") {
		r.trailing = true
		if path = strings.TrimRight(path, "/"); path == "" {
			path = "/"
		}
	}
	// A path through the program's own /proc (/proc/self/cwd/build, the
	// shell's /dev/fd/3/x) is read from the directory it names there.
	sub, rest, self := procSelf(path)
	if self {
		path = rest
	}
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i+1], path[i+1:]
	}
	if name == "" || !dots && (name == "." || name == "..") {
		return resolved{}, false, 0
	}
	if quick && strings.HasPrefix(path, "/") && !policy.NameCouldBeProtected(name) && !strings.Contains(path, "/..") &&
		!fsx.Within(filepath.Clean(dir), b.project) && !fsx.Within(filepath.Clean(dir), b.real) {
		// The common case, a build's files in its own TMPDIR or cache:
		// a name nothing protects, by a path that does not name the
		// project. Through a link into the project, or a path rewritten
		// meanwhile, the program makes no name: it has no right to make
		// one there (maker_linux.go).
		return resolved{}, false, 0
	}
	proc, ok := b.procOf(n.pid)
	if !ok {
		return resolved{}, false, unix.EACCES
	}
	base := proc + "/cwd"
	switch {
	case self:
		base = proc + "/" + sub
	case strings.HasPrefix(path, "/"):
		base = proc + "/root"
	case dirfd != unix.AT_FDCWD:
		base = proc + "/fd/" + strconv.Itoa(int(dirfd))
	}
	bfd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			return resolved{}, false, unix.ENOTDIR // a descriptor of a file, as the kernel says
		}
		return resolved{}, false, unix.EACCES
	}
	if !b.waiting(n) {
		_ = unix.Close(bfd)
		return resolved{}, false, unix.EINTR // gone: the answer reaches no one
	}
	parent := bfd
	if dir != "" {
		// As the program's kernel would, from its root, directory or
		// descriptor, but through no /proc magic link: /proc/self, the
		// launcher's own /dev/fd, led this process elsewhere than the
		// program (an attack run made src/.git by mkdir of
		// /proc/self/cwd/../../../.git, which climbed out of the project
		// here and into src/ there). Such a path cannot be told: refused.
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
		rel := dir
		if strings.HasPrefix(path, "/") {
			how.Resolve |= unix.RESOLVE_IN_ROOT
			if rel = strings.TrimLeft(dir, "/"); rel == "" {
				rel = "."
			}
		}
		parent, err = unix.Openat2(bfd, rel, &how)
		_ = unix.Close(bfd)
		if err != nil {
			var e unix.Errno
			if !errors.As(err, &e) {
				e = unix.EACCES
			}
			return resolved{}, false, e // ENOENT, ENOTDIR, ELOOP: as the kernel says
		}
	}
	var st unix.Stat_t
	var fs unix.Statfs_t
	if err := unix.Fstat(parent, &st); err != nil || unix.Fstatfs(parent, &fs) != nil || fs.Type == unix.PROC_SUPER_MAGIC {
		// In /proc: /proc/self there is this process's, not the
		// program's (linkat of /proc/self/fd/N named the launcher's
		// descriptor N). The program's own entries are read from its
		// directory there (procSelf) when they lead out of /proc.
		_ = unix.Close(parent)
		return resolved{}, false, unix.EACCES
	}
	r.name, r.parent, r.key, r.proc = name, parent, fileKey{st.Dev, st.Ino}, proc
	return r, true, 0
}

// procSelf splits a path through the calling process's own /proc
// (/proc/self/, /proc/thread-self/, /dev/fd/) into the entry it names
// there (cwd, root, fd/N) and the rest, a relative path; ok false for
// any other path, or one that names the entry itself.
func procSelf(path string) (sub, rest string, ok bool) {
	var p string
	switch {
	case strings.HasPrefix(path, "/proc/self/"):
		p = strings.TrimPrefix(path, "/proc/self/")
	case strings.HasPrefix(path, "/proc/thread-self/"):
		p = strings.TrimPrefix(path, "/proc/thread-self/")
	case strings.HasPrefix(path, "/dev/fd/"):
		p = "fd/" + strings.TrimPrefix(path, "/dev/fd/")
	default:
		return "", "", false
	}
	sub, rest, _ = strings.Cut(p, "/")
	if sub == "fd" {
		var n string
		n, rest, _ = strings.Cut(rest, "/")
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return "", "", false
		}
		sub = "fd/" + n
	} else if sub != "cwd" && sub != "root" {
		return "", "", false
	}
	if rest = strings.TrimLeft(rest, "/"); rest == "" {
		return "", "", false
	}
	return sub, rest, true
}

// resolved is where a path of a call lands: its last name in the
// directory parent (open), known by key; trailing when it ended in "/".
type resolved struct {
	name     string
	parent   int
	key      fileKey
	trailing bool
	proc     string // the caller's /proc directory
}

// procOf is procOf, or /proc/PID where the broker's /proc is its own PID
// namespace's (the second stage's, which isolate mounts: ownProc): what
// the broker opens there is checked to be its caller's by the
// notification still being valid after (waiting), as with the pidfd.
func (b *topBroker) procOf(pid uint32) (string, bool) {
	if b.ownProc {
		return "/proc/" + strconv.Itoa(int(pid)), true
	}
	return procOf(pid)
}

// pidfdThread is pidfd_open's PIDFD_THREAD, which x/sys does not name.
const pidfdThread = unix.O_EXCL

// procOf is the /proc directory of the process whose pid, in this
// process's PID namespace, is pid (a notification's), or false when
// /proc does not show it. /proc may be another namespace's: inside Claude
// Code's sandbox the launch's PID namespace is not the one its /proc was
// mounted for, and /proc/PID there was another process (the host's
// shell, in the project's top), so that a file the program made after
// `cd src` was made at the top. A pidfd names the process in this
// namespace, and its fdinfo gives its pid in /proc's (fs/pidfs.c:
// "Pid:", 0 when /proc's namespace does not hold it).
func procOf(pid uint32) (string, bool) {
	// The notification's pid is the thread's that made the call (a Go
	// program makes files from any of its threads): PIDFD_THREAD (Linux
	// 6.9, O_EXCL's value) lets the pidfd name a thread that does not
	// lead its group; /proc/TID is that thread's own entry.
	fd, err := unix.PidfdOpen(int(pid), pidfdThread)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.PidfdOpen(int(pid), 0) // a kernel without it: leaders only
	}
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	v, ok := procField("/proc/self/fdinfo/"+strconv.Itoa(fd), "Pid")
	p, err := strconv.Atoi(v)
	if !ok || err != nil || p <= 0 {
		return "", false
	}
	return "/proc/" + strconv.Itoa(p), true
}

// readPath reads the NUL-terminated path at addr in pid's memory, page by
// page (a path that ends before an unmapped page is read), at most
// PATH_MAX bytes.
func readPath(pid int, addr uint64) (string, bool) {
	var buf [unix.PathMax]byte
	got := 0
	for got < len(buf) {
		chunk := min(len(buf)-got, 4096-int((addr+uint64(got))%4096))
		local := []unix.Iovec{{Base: &buf[got]}}
		local[0].SetLen(chunk)
		remote := []unix.RemoteIovec{{Base: uintptr(addr) + uintptr(got), Len: chunk}}
		m, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if m > 0 {
			got += m
		}
		if bytes.IndexByte(buf[:got], 0) >= 0 || err != nil || m <= 0 {
			break
		}
	}
	end := bytes.IndexByte(buf[:got], 0)
	if end <= 0 {
		return "", false
	}
	return string(buf[:end]), true
}

// umaskOf is the umask of the thread tid, whose /proc directory is proc
// ("": not known yet), 0o022 when it cannot be read. /proc's status is
// the only place that says it, and reading it was a third of what making
// a name cost: a thread's is read once, until the program next calls
// umask (the filter sends that call here: umaskCalled). A thread of
// another process that reads its umask while one of its threads changes
// it keeps what it read, as one of the two orders the kernel allows.
func (b *topBroker) umaskOf(tid uint32, proc string) uint32 {
	if m, ok := b.umasks[tid]; ok && len(b.umaskCalls) == 0 {
		return m
	}
	if proc == "" {
		var ok bool
		if proc, ok = b.procOf(tid); !ok {
			return 0o022
		}
	}
	m := umaskIn(proc)
	if len(b.umaskCalls) > 0 {
		return m // a umask call may not have reached the kernel yet
	}
	if len(b.umasks) >= 4096 {
		clear(b.umasks)
	}
	b.umasks[tid] = m
	return m
}

// umaskIn is the umask of the process whose /proc directory is proc
// (0o022 when it cannot be read).
func umaskIn(proc string) uint32 {
	if v, ok := procField(proc+"/status", "Umask"); ok {
		if m, err := strconv.ParseUint(v, 8, 32); err == nil {
			return uint32(m)
		}
	}
	return 0o022
}

// startBroker makes the hand-over's two ends and the broker on the first
// stage's; the other end is the launch's child's (forkSpec.brokerFd).
func startBroker(plan Plan, e Env, role brokerRole) (*topBroker, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "broker"), os.NewFile(uintptr(fds[1]), "broker")
	b, err := newTopBroker(plan, e, ours, role)
	if err != nil {
		ours.Close()
		theirs.Close()
		return nil, nil, err
	}
	return b, theirs, nil
}
