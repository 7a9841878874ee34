//go:build linux

package undo

import (
	"math"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// closeAway closes fd, an inotify instance with watches, in a child
// process of its own, and returns that child's pid (0: it was closed
// here). The kernel frees an instance's watches after an SRCU grace
// period, and the close that drops its last reference waits for it: 13 to
// 25 ms of a launch here (Linux 6.18, 2 vCPUs), the launch's and so its
// call's (a process's exit waits the same way for a descriptor it still
// holds), for nothing the call needs. The child holds that last
// reference: it closes every other descriptor it inherited (the call's
// output pipes among them: the agent's read of the output is not held
// open), which this process waits for, then waits until this process
// has closed its own copy (the end of a pipe), closes fd and exits.
// Nobody waits for it: once this process has exited, its parent's
// sub-reaper or init reaps it. It holds nothing but the instance, runs no
// Go code, and has every signal blocked (but SIGKILL). Where it cannot be
// made, fd is closed here, waiting.
func closeAway(fd int) int {
	// p: the child reads it to its end once this process has let go of
	// fd; q: this process reads it to its end once the child has closed
	// the rest (its copies of a lock's descriptor among them: a flock
	// lives as long as any copy, and the next call's record takes it).
	var p, q [2]int
	if fd < 0 || unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
		unix.Close(fd)
		return 0
	}
	if unix.Pipe2(q[:], unix.O_CLOEXEC) != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		unix.Close(fd)
		return 0
	}
	c := closer{fd: uintptr(fd), rd: uintptr(p[0])}
	c.args, c.argsLen = argArea()
	c.lo, c.hi = c.fd, c.rd
	if c.lo > c.hi {
		c.lo, c.hi = c.hi, c.lo
	}
	runtime.LockOSThread()
	syscall.ForkLock.Lock()
	var all, saved uint64 = math.MaxUint64, 0
	_, _, e := syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&saved)), 8, 0, 0)
	var pid uintptr
	if e == 0 {
		pid, e = forkCloser(&c)
		_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&saved)), 0, 8, 0, 0)
	}
	syscall.ForkLock.Unlock()
	runtime.UnlockOSThread()
	runtime.KeepAlive(&c)
	unix.Close(q[1])
	if e == 0 {
		// Until the child has closed every descriptor but two.
		var b [1]byte
		for {
			n, err := unix.Read(q[0], b[:])
			if err == unix.EINTR {
				continue
			}
			if err != nil || n == 0 {
				break
			}
		}
		if testCloseAwayForked != nil {
			testCloseAwayForked(int(pid))
		}
	}
	unix.Close(q[0])
	// This process's reference first, then the pipe's write end: the
	// child's read returns once both are gone, and its close of fd is
	// the last.
	unix.Close(fd)
	unix.Close(p[0])
	unix.Close(p[1])
	if e != 0 {
		return 0
	}
	return int(pid)
}

// closer is what closeAway's child needs, computed before the fork: fd,
// the read end of the pipe, the two in order, and this process's
// arguments' memory.
type closer struct {
	fd, rd, lo, hi uintptr
	args           unsafe.Pointer
	argsLen        uintptr
	buf            [1]byte
}

// closerName is the child's command line and name, in place of the
// launcher's (which holds the call's command: a test or a human looking
// for the call's processes would find it).
const closerName = "loopguard-undo-close"

// closerComm is the child's name as prctl(PR_SET_NAME) takes it (at
// most 15 bytes and a NUL: closerName shortened).
var closerComm = [16]byte{'l', 'g', '-', 'u', 'n', 'd', 'o', '-', 'c', 'l', 'o', 's', 'e'}

// argArea is where this process's arguments are (the memory
// /proc/PID/cmdline reads: os.Args's strings are it, in order, each
// after the last one's NUL), or 0, 0 where they are not so laid out.
func argArea() (unsafe.Pointer, uintptr) {
	if len(os.Args) == 0 || len(os.Args[0]) == 0 {
		return nil, 0
	}
	start := unsafe.Pointer(unsafe.StringData(os.Args[0]))
	n := uintptr(0)
	for _, a := range os.Args {
		// An empty argument is its NUL alone (the next one's place
		// checks it).
		if len(a) > 0 && unsafe.Pointer(unsafe.StringData(a)) != unsafe.Add(start, n) {
			return nil, 0
		}
		n += uintptr(len(a)) + 1
	}
	return start, n
}

// forkCloser forks the child of closeAway; the child never returns.
// Nothing here may grow the stack, allocate or be instrumented.
//
//go:nosplit
//go:norace
//go:nocheckptr
func forkCloser(c *closer) (uintptr, syscall.Errno) {
	// clone as fork does (a sandbox's filter may refuse clone3).
	pid, _, e := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e != 0 || pid != 0 {
		return pid, e
	}
	// Its own command line and name, not the launcher's (the arguments'
	// pages are this process's copy).
	if c.argsLen > uintptr(len(closerName)) {
		for i := uintptr(0); i < c.argsLen; i++ {
			b := byte(0)
			if i < uintptr(len(closerName)) {
				b = closerName[i]
			}
			*(*byte)(unsafe.Add(c.args, i)) = b
		}
	}
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&closerComm[0])), 0)
	// Every descriptor but fd and the pipe's read end.
	if c.lo > 0 {
		syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 0, c.lo-1, 0)
	}
	if c.hi > c.lo+1 {
		syscall.RawSyscall(unix.SYS_CLOSE_RANGE, c.lo+1, c.hi-1, 0)
	}
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, c.hi+1, math.MaxUint32, 0)
	// End of file once the parent has closed its references (or ended).
	for {
		n, _, e := syscall.RawSyscall(unix.SYS_READ, c.rd, uintptr(unsafe.Pointer(&c.buf[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 || n == 0 {
			break
		}
	}
	syscall.RawSyscall(unix.SYS_CLOSE, c.fd, 0, 0)
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
}

// testCloseAwayForked, when a test sets it, is called with the child's pid
// before this process closes its references.
var testCloseAwayForked func(pid int)
