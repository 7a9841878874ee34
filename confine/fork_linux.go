//go:build linux

package confine

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/testknobs"
)

// Without namespaces of its own a launch needs no second Go process: the
// first stage forks a child that runs no Go code, only system calls over
// values the first stage prepared (forkJailed), and becomes the program
// by execve. What the second stage did there, the child does in the same
// order: it bounds its tasks, restricts itself (Landlock, then the
// filter), makes the call's redirections under the restriction, enters
// the call's directory and execs. The ruleset is built by the first
// stage, less one rule: the program's own /proc entries, /proc/self,
// which must name the pid the program will have. The child adds that
// rule itself, opening /proc/self, before it restricts itself: the
// process it becomes by execve keeps its pid. A second stage's Go start
// (about 10 ms of CPU on the 2-core test machine, more than the rest of
// the launch together) is so saved; with namespaces of its own the
// second stage stays a process of its own (launch_linux.go: it must be
// pid 1 of its PID namespace and make its mounts single-threaded, which
// a fork of a Go process cannot).

// forkSpec is everything the child does, prepared by the first stage:
// the child allocates nothing, grows no stack and calls no Go function
// but raw system calls.
type forkSpec struct {
	clone cloneArgs
	// ppid: the child dies with the first stage (PR_SET_PDEATHSIG), and
	// exits at once if it has ended already.
	ppid uintptr
	// mask is the signal mask to restore before execve; every signal is
	// blocked from before the fork until then.
	mask uint64
	// nproc bounds the call's tasks (RLIMIT_NPROC), unless setNproc is
	// false (the call's cgroup bounds them).
	setNproc bool
	nproc    unix.Rlimit
	// ruleset is the Landlock ruleset (-1: none, a test knob); self names
	// /proc/self, selfRule its rule (the child fills in the descriptor).
	ruleset int
	self    *byte
	// maker is the maker's ruleset (-1: none), which the first stage's
	// broker takes (startJailed).
	maker    int
	selfRule pathBeneath
	// prog is the filter; with the broker (brokerFd >= 0), its listener
	// goes to the first stage in msg, and where a filter above already
	// has one (EBUSY) plain is installed instead.
	prog, plain *unix.SockFprog
	brokerFd    int
	msg         unix.Msghdr
	iov         unix.Iovec
	one         [1]byte
	oob         []byte
	// redirects are the call's redirections, in order; made means the
	// forking thread made them already (and marked every other
	// descriptor close-on-exec), so the child leaves its descriptors be.
	redirects []forkRedirect
	made      bool
	cwd       *byte
	exe       *byte
	argv      []*byte
	envv      []*byte
	// errFd is where the child writes the step that failed and its
	// errno (forkFailure); the first stage reads nothing there when the
	// execve succeeded (close-on-exec).
	errFd, rd int
	fail      forkFailure
	// fdSlot is the listener's place in oob.
	fdSlot *int32
}

// cloneArgs is the kernel's struct clone_args (CLONE_ARGS_SIZE_VER2).
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
}

// pathBeneath is the kernel's struct landlock_path_beneath_attr (packed:
// the kernel reads its first 12 bytes).
type pathBeneath struct {
	access uint64
	fd     int32
}

// forkRedirect is a Redirect prepared for the child.
type forkRedirect struct {
	op      int // redirClose, redirDup or redirOpen
	fd, dup int
	path    *byte
	flags   int
}

// atFDCWD is AT_FDCWD as a system call's argument.
const atFDCWD = ^uintptr(99) // -100

// The kernel's SIG_DFL and SIG_IGN handlers.
const (
	sigDfl = 0
	sigIgn = 1
)

const (
	redirOpen = iota
	redirClose
	redirDup
)

// forkFailure is what the child reports: the step, the redirection's
// index for stepRedirect, and the errno.
type forkFailure struct {
	step, index, errno uint64
}

// The child's steps, as forkFailure names them.
const (
	stepNone = iota
	stepPdeathsig
	stepNproc
	stepProcSelf
	stepNoNewPrivs
	stepRestrict
	stepSeccomp
	stepListener
	stepCloseRange
	stepRedirect
	stepChdir
	stepExec
)

// prepareFork is f for s under plan and the filter o: the ruleset built
// (the descriptor f.ruleset, which the caller closes), the filter
// assembled, every path and the environment made C strings.
func prepareFork(s Spec, plan Plan, o filterOpts, broker *os.File, nproc uint64, setNproc bool) (*forkSpec, error) {
	f := newForkSpec(nproc, setNproc)
	o.tcpUDP = plan.Network && !plan.OwnNet && !s.Cap.AnyPort
	if !testknobs.On(testknobs.NoRuleset) {
		rs, err := newRuleset(plan, s.Cap, ABI())
		if err != nil {
			return nil, err
		}
		self := -1
		for i, r := range rs.rules {
			if r.path == "/proc/self" {
				self = i
			}
		}
		if self >= 0 {
			f.selfRule.access = rs.rules[self].access
			rs.rules = append(rs.rules[:self:self], rs.rules[self+1:]...)
			if f.self, err = syscall.BytePtrFromString("/proc/self"); err != nil {
				return nil, err
			}
		}
		if broker != nil && o.opens {
			// The first stage's maker makes the program's names in the
			// project (maker_linux.go); under a listener above, where
			// there is none, no name there is made.
			f.ruleset, f.maker, err = rs.buildWithMaker(plan.Project)
		} else {
			f.ruleset, err = rs.build()
		}
		if err != nil {
			return nil, err
		}
		if o.broker = broker != nil; o.broker {
			f.brokerFd = int(broker.Fd())
			plain := o
			plain.broker = false
			if f.plain, err = fprog(plain); err != nil {
				f.close()
				return nil, err
			}
		}
		if f.prog, err = fprog(o); err != nil {
			f.close()
			return nil, err
		}
	}
	if err := f.prepareExec(s, plan); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

// newForkSpec is a forkSpec that restricts nothing yet: its child bounds
// its tasks to nproc where setNproc says so.
func newForkSpec(nproc uint64, setNproc bool) *forkSpec {
	return &forkSpec{ruleset: -1, maker: -1, brokerFd: -1, errFd: -1, rd: -1, ppid: uintptr(os.Getpid()), setNproc: setNproc, nproc: unix.Rlimit{Cur: nproc, Max: nproc}}
}

// prepareExec fills in the redirections, the directory, the program and
// its environment, and the hand-over of the filter's listener.
func (f *forkSpec) prepareExec(s Spec, plan Plan) error {
	var err error
	maxFd := 2
	for _, r := range s.Redirects {
		fr := forkRedirect{fd: r.Fd, dup: r.Dup}
		switch r.Op {
		case "close":
			fr.op = redirClose
		case "dup":
			fr.op = redirDup
		default:
			fr.op, fr.flags = redirOpen, r.openFlags()|unix.O_CLOEXEC
			if fr.path, err = syscall.BytePtrFromString(r.Path); err != nil {
				return fmt.Errorf("%s: %w", r.Path, err)
			}
		}
		maxFd = max(maxFd, r.Fd, r.Dup)
		f.redirects = append(f.redirects, fr)
	}
	if f.cwd, err = syscall.BytePtrFromString(s.Cwd); err != nil {
		return fmt.Errorf("failed to enter %s: %w", s.Cwd, err)
	}
	if f.exe, err = syscall.BytePtrFromString(s.Exe); err != nil {
		return err
	}
	if f.argv, err = syscall.SlicePtrFromStrings(s.Argv); err != nil {
		return err
	}
	if f.envv, err = syscall.SlicePtrFromStrings(jailEnv(plan)); err != nil {
		return err
	}
	// The child's report goes on a descriptor above every one a
	// redirection names, so that none replaces or closes it.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	f.errFd = p[1]
	if p[1] <= maxFd {
		if f.errFd, err = unix.FcntlInt(uintptr(p[1]), unix.F_DUPFD_CLOEXEC, maxFd+1); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return err
		}
		unix.Close(p[1])
	}
	f.rd = p[0]
	if f.brokerFd >= 0 {
		f.oob = make([]byte, unix.CmsgSpace(4))
		copy(f.oob, unix.UnixRights(-1))
		f.iov.Base = &f.one[0]
		f.iov.SetLen(1)
		f.msg.Iov = &f.iov
		f.msg.Iovlen = 1
		f.msg.Control = &f.oob[0]
		f.msg.SetControllen(len(f.oob))
		f.fdSlot = (*int32)(unsafe.Pointer(&f.oob[unix.CmsgLen(0)]))
	}
	return nil
}

// close releases what prepareFork opened.
func (f *forkSpec) close() {
	if f.ruleset >= 0 {
		unix.Close(f.ruleset)
		f.ruleset = -1
	}
	if f.maker >= 0 {
		unix.Close(f.maker)
		f.maker = -1
	}
	if f.errFd >= 0 {
		unix.Close(f.errFd)
		f.errFd = -1
	}
	if f.rd >= 0 {
		unix.Close(f.rd)
		f.rd = -1
	}
}

// fprog is the filter o as the kernel takes it.
func fprog(o filterOpts) (*unix.SockFprog, error) {
	prog, err := filter(o)
	if err != nil {
		return nil, err
	}
	return &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}, nil
}

// forkJailed forks the child f describes, in the cgroup cg (-1: none),
// and returns its pid and the read end of its report, or an error when
// it was not started. It runs on a locked thread with every signal
// blocked: the child inherits that thread alone, and the parent-death
// signal is that thread's (it stays locked until the launch ends).
func forkJailed(f *forkSpec, cg int) (int, int, error) {
	runtime.LockOSThread()
	rd := f.rd
	f.rd = -1
	f.clone = cloneArgs{exitSignal: uint64(unix.SIGCHLD)}
	if f.vforks() {
		f.clone.flags = unix.CLONE_VM | unix.CLONE_VFORK
	}
	if cg >= 0 {
		f.clone.flags |= unix.CLONE_INTO_CGROUP
		f.clone.cgroup = uint64(cg)
	}
	syscall.ForkLock.Lock()
	var all, saved uint64 = math.MaxUint64, 0
	_, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&saved)), 8, 0, 0)
	if e != 0 {
		syscall.ForkLock.Unlock()
		return 0, -1, fmt.Errorf("rt_sigprocmask: %w", e)
	}
	f.mask = saved
	pid, e := forkChild(f)
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&saved)), 0, 8, 0, 0)
	syscall.ForkLock.Unlock()
	runtime.KeepAlive(f)
	unix.Close(f.errFd)
	f.errFd = -1
	if e != 0 {
		unix.Close(rd)
		return 0, -1, fmt.Errorf("failed to start the launch: clone: %w", e)
	}
	return int(pid), rd, nil
}

// vforks: the child may share the first stage's memory, suspending the
// first stage's thread until it execs (CLONE_VM|CLONE_VFORK), which
// spares copying the first stage's page tables, and the first stage a
// page fault on every page it writes after. Not when a redirection opens
// a file: under the broker the child's open may wait for the first
// stage's answer, and with one CPU for Go's code (GOMAXPROCS 1) no
// goroutine could give it while the thread that forked is suspended.
func (f *forkSpec) vforks() bool {
	if !canVfork {
		return false
	}
	for _, r := range f.redirects {
		if r.op == redirOpen {
			return false
		}
	}
	return true
}

// forkChild forks; the child runs child and never returns. Nothing here
// may grow the stack, allocate or be instrumented. As a vfork the child
// runs on this goroutine's stack, below this frame, until it execs or
// exits; it writes only the forkSpec's fields the first stage reads no
// more (the report, the listener's slot, /proc/self's rule).
//
//go:nosplit
//go:norace
//go:nocheckptr
func forkChild(f *forkSpec) (uintptr, syscall.Errno) {
	pid, e := rawVfork(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&f.clone)), unsafe.Sizeof(f.clone), 0)
	if (e == unix.ENOSYS || e == unix.EPERM) && f.clone.flags&^(unix.CLONE_VM|unix.CLONE_VFORK) == 0 {
		// A sandbox's filter refuses clone3 (Claude Code's answers
		// ENOSYS, so that libc falls back): without a cgroup to start
		// in, clone as fork (or vfork) does.
		pid, e = rawVfork(unix.SYS_CLONE, uintptr(f.clone.flags)|uintptr(unix.SIGCHLD), 0, 0)
	}
	if e != 0 || pid != 0 {
		return pid, e
	}
	forked(f)
	return 0, 0 // not reached
}

// forked is the forked child: it fails by reporting the step and exiting.
//
//go:nosplit
//go:norace
//go:nocheckptr
func forked(f *forkSpec) {
	if _, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0, 0); e != 0 {
		childFail(f, stepPdeathsig, 0, e)
	}
	if ppid, _, _ := syscall.RawSyscall6(unix.SYS_GETPPID, 0, 0, 0, 0, 0, 0); ppid != f.ppid {
		childFail(f, stepPdeathsig, 0, unix.ESRCH)
	}
	// The first stage's handlers are Go's: a signal between the mask's
	// restoring and execve gets its default action instead.
	var act [4]uint64
	for sig := uintptr(1); sig < 65; sig++ {
		if sig == uintptr(unix.SIGKILL) || sig == uintptr(unix.SIGSTOP) {
			continue
		}
		act = [4]uint64{}
		if _, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0); e != 0 {
			continue
		}
		if act[0] == sigIgn || act[0] == sigDfl {
			continue
		}
		act = [4]uint64{}
		_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
	if f.setNproc {
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NPROC, uintptr(unsafe.Pointer(&f.nproc)), 0, 0, 0); e != 0 {
			childFail(f, stepNproc, 0, e)
		}
	}
	if f.ruleset >= 0 {
		if f.self != nil {
			fd, _, e := syscall.RawSyscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(f.self)), unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
			if e != 0 {
				childFail(f, stepProcSelf, 0, e)
			}
			f.selfRule.fd = int32(fd)
			if _, _, e := syscall.RawSyscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(f.ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&f.selfRule)), 0, 0, 0); e != 0 {
				childFail(f, stepProcSelf, 0, e)
			}
			_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			childFail(f, stepNoNewPrivs, 0, e)
		}
		if _, _, e := syscall.RawSyscall6(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(f.ruleset), 0, 0, 0, 0, 0); e != 0 {
			childFail(f, stepRestrict, 0, e)
		}
		_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, uintptr(f.ruleset), 0, 0, 0, 0, 0)
		childFilter(f)
	}
	if !f.made {
		if _, _, e := syscall.RawSyscall6(unix.SYS_CLOSE_RANGE, 3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC, 0, 0, 0); e != 0 {
			childFail(f, stepCloseRange, 0, e)
		}
	}
	for i := range f.redirects {
		childRedirect(f, i)
	}
	if _, _, e := syscall.RawSyscall6(unix.SYS_CHDIR, uintptr(unsafe.Pointer(f.cwd)), 0, 0, 0, 0, 0); e != 0 {
		childFail(f, stepChdir, 0, e)
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&f.mask)), 0, 8, 0, 0)
	_, _, e := syscall.RawSyscall6(unix.SYS_EXECVE, uintptr(unsafe.Pointer(f.exe)), uintptr(unsafe.Pointer(&f.argv[0])), uintptr(unsafe.Pointer(&f.envv[0])), 0, 0, 0)
	childFail(f, stepExec, 0, e)
}

// childFilter installs the filter, handing its listener to the first
// stage under the broker.
//
//go:nosplit
//go:norace
//go:nocheckptr
func childFilter(f *forkSpec) {
	if f.brokerFd < 0 {
		if _, _, e := syscall.RawSyscall6(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(f.prog)), 0, 0, 0); e != 0 {
			childFail(f, stepSeccomp, 0, e)
		}
		return
	}
	fd, _, e := syscall.RawSyscall6(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(f.prog)), 0, 0, 0)
	switch {
	case e == 0:
		// The listener's number in the one SCM_RIGHTS message.
		*f.fdSlot = int32(fd)
		if _, _, e := syscall.RawSyscall6(unix.SYS_SENDMSG, uintptr(f.brokerFd), uintptr(unsafe.Pointer(&f.msg)), 0, 0, 0, 0); e != 0 {
			childFail(f, stepListener, 0, e)
		}
		_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, uintptr(f.brokerFd), 0, 0, 0, 0, 0)
	case e == unix.EBUSY:
		// A filter above already has a listener (a container runtime's,
		// a sandbox's): one per task. The launch runs without the
		// broker, under the filter without it; the first stage hears
		// its end close.
		_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, uintptr(f.brokerFd), 0, 0, 0, 0, 0)
		if _, _, e := syscall.RawSyscall6(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(f.plain)), 0, 0, 0); e != 0 {
			childFail(f, stepSeccomp, 0, e)
		}
	default:
		childFail(f, stepSeccomp, 0, e)
	}
}

// childRedirect performs redirection i, as redirect does.
//
//go:nosplit
//go:norace
//go:nocheckptr
func childRedirect(f *forkSpec, i int) {
	r := &f.redirects[i]
	switch r.op {
	case redirClose:
		_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, uintptr(r.fd), 0, 0, 0, 0, 0)
	case redirDup:
		if _, _, e := syscall.RawSyscall6(unix.SYS_DUP3, uintptr(r.dup), uintptr(r.fd), 0, 0, 0, 0); e != 0 && r.dup != r.fd {
			childFail(f, stepRedirect, uint64(i), e)
		}
	default:
		fd, _, e := syscall.RawSyscall6(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(r.path)), uintptr(r.flags), 0o666, 0, 0)
		if e != 0 {
			childFail(f, stepRedirect, uint64(i), e)
		}
		if int(fd) != r.fd {
			if _, _, e := syscall.RawSyscall6(unix.SYS_DUP3, fd, uintptr(r.fd), 0, 0, 0, 0); e != 0 {
				childFail(f, stepRedirect, uint64(i), e)
			}
			_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		} else if _, _, e := syscall.RawSyscall6(unix.SYS_FCNTL, fd, unix.F_SETFD, 0, 0, 0, 0); e != 0 {
			childFail(f, stepRedirect, uint64(i), e)
		}
	}
}

// childFail reports the failed step to the first stage and exits.
//
//go:nosplit
//go:norace
//go:nocheckptr
func childFail(f *forkSpec, step, index uint64, e syscall.Errno) {
	f.fail = forkFailure{step: step, index: index, errno: uint64(e)}
	_, _, _ = syscall.RawSyscall6(unix.SYS_WRITE, uintptr(f.errFd), uintptr(unsafe.Pointer(&f.fail)), unsafe.Sizeof(f.fail), 0, 0, 0)
	for {
		_, _, _ = syscall.RawSyscall6(unix.SYS_EXIT_GROUP, ExitFailed, 0, 0, 0, 0, 0)
	}
}

// forkResult reads the child's report from rd (and closes it): nil when
// it reached its program (execve closed the descriptor), or the error of
// the step that failed, worded as the second stage worded it.
func forkResult(s Spec, rd int) error {
	defer unix.Close(rd)
	var fail forkFailure
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&fail)), unsafe.Sizeof(fail))
	n := 0
	for n < len(buf) {
		k, err := unix.Read(rd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the launch's start: %w", err)
		}
		if k == 0 {
			break
		}
		n += k
	}
	if n == 0 {
		return nil
	}
	if n != len(buf) {
		return fmt.Errorf("the launch's start reported %d bytes", n)
	}
	e := syscall.Errno(fail.errno)
	switch fail.step {
	case stepPdeathsig:
		return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", e)
	case stepNproc:
		return fmt.Errorf("bounding the call's tasks: setrlimit(RLIMIT_NPROC): %w", e)
	case stepProcSelf:
		return fmt.Errorf("landlock_add_rule /proc/self: %w", e)
	case stepNoNewPrivs:
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", e)
	case stepRestrict:
		return fmt.Errorf("landlock_restrict_self: %w", e)
	case stepSeccomp:
		return fmt.Errorf("seccomp: %w", e)
	case stepListener:
		return fmt.Errorf("handing the filter's listener over: %w", e)
	case stepCloseRange:
		return fmt.Errorf("close_range: %w", e)
	case stepRedirect:
		if i := int(fail.index); i < len(s.Redirects) {
			r := s.Redirects[i]
			switch r.Op {
			case "dup":
				return fmt.Errorf("%d>&%d: %w", r.Fd, r.Dup, e)
			case "close":
			default:
				return fmt.Errorf("%s: %w", r.Path, e)
			}
		}
		return fmt.Errorf("redirection: %w", e)
	case stepChdir:
		return fmt.Errorf("failed to enter %s: %w", s.Cwd, e)
	case stepExec:
		return e
	}
	return fmt.Errorf("the launch's start failed (step %d): %w", fail.step, e)
}

// build makes rs in the kernel: the ruleset's descriptor, which the
// caller closes.
func (rs ruleset) build() (int, error) {
	attr := llsys.RulesetAttr{HandledAccessFS: rs.fs, HandledAccessNet: rs.net, Scoped: rs.scoped}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	if err := rs.addRules(fd, -1, ""); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// buildWithMaker builds rs for a program whose names in project the
// maker makes (maker_linux.go): prog is rs without the rights to make a
// name there, mk the maker's, the rules that grant such a right, as they
// are, and nothing else handled than files (it connects nowhere and
// signals no one: a signal scope would keep the Go runtime on its thread
// from signalling the launcher's other threads). Both are built from the
// same descriptors, so that a directory renamed during the call is the
// same to both.
func (rs ruleset) buildWithMaker(project string) (prog, mk int, err error) {
	attr := llsys.RulesetAttr{HandledAccessFS: rs.fs, HandledAccessNet: rs.net, Scoped: rs.scoped}
	if prog, err = llsys.LandlockCreateRuleset(&attr, 0); err != nil {
		return -1, -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	if mk, err = llsys.LandlockCreateRuleset(&llsys.RulesetAttr{HandledAccessFS: rs.fs}, 0); err != nil {
		unix.Close(prog)
		return -1, -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	if err := rs.addRules(prog, mk, project); err != nil {
		unix.Close(prog)
		unix.Close(mk)
		return -1, -1, err
	}
	return prog, mk, nil
}
