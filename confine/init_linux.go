//go:build linux

package confine

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// With namespaces of its own the second stage is also in a PID namespace
// of its own, where it is pid 1, and /proc is a proc of that namespace
// (isolate mounts it): every process of the jail reads its own /proc
// entries, and sees no process outside the jail (the host's
// /proc/PID/cmdline is readable by every process of any user, not gated
// by ptrace). The program cannot be pid 1: the kernel delivers to pid 1
// only the signals it has a handler for (a shell as pid 1 would ignore
// the ^C and SIGTERM the first stage forwards), and orphans come back to
// pid 1 to be reaped. So the second stage stays, restricted on the
// thread that forks the program, as the namespace's init: it forwards
// the signals it is sent to the program, reaps every orphan, and when
// the program exits, exits with its status; the kernel then kills every
// process left in the namespace before the first stage's wait returns.
// It is not dumpable, so no process of the jail can trace it or read its
// memory, descriptors or environment through /proc/1 (its other threads
// are not restricted).

// forwarded are the signals the first stage forwards, and init in turn.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}

// taken are the signals Go's runtime ends on when it is sent one it did
// not ask for (an abort, a trap, a bad system call; a fault sent by kill
// rather than raised by the code): init asks for them and does nothing
// with them. The program is the same user, inside init's Landlock
// domain, so the kernel lets it signal init, which has handlers for
// every signal: the thirty-first attack run's kill -ABRT 1 ended the call
// at once, with init's stack on the call's output. A fault init raises
// itself is still the runtime's.
var taken = []os.Signal{unix.SIGILL, unix.SIGTRAP, unix.SIGABRT, unix.SIGBUS, unix.SIGFPE, unix.SIGSEGV, unix.SIGSTKFLT, unix.SIGSYS}

// runInit restricts this thread to plan and o (with a broker b: its
// listener sent on conn), starts s's program from it (bounded to nproc
// tasks, where setNproc says so) and is the namespace's init until the
// program exits: it returns only when the program was not started.
func runInit(s Spec, plan Plan, o filterOpts, conn *os.File, b *topBroker, nproc uint64, setNproc bool) error {
	if os.Getpid() != 1 {
		return fmt.Errorf("the second stage is pid %d in its PID namespace, not 1", os.Getpid())
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	if err := prepareJailed(s, plan, o, conn, b); err != nil {
		return err
	}
	signal.Notify(make(chan os.Signal, 1), taken...) // never read: Notify drops what does not fit
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	pid, err := forkProgram(s, plan, nproc, setNproc)
	if err != nil {
		return err
	}
	go func() {
		for sig := range sigs {
			_ = unix.Kill(pid, sig.(syscall.Signal))
		}
	}()
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// No child left but the program not reaped: cannot happen;
			// say so rather than report a status.
			fmt.Fprintf(os.Stderr, "loopguard: waiting for the program: %v\n", err)
			os.Exit(ExitFailed)
		}
		if wpid != pid {
			continue // an orphan of the program
		}
		switch {
		case ws.Exited():
			os.Exit(ws.ExitStatus())
		case ws.Signaled():
			// pid 1 cannot end itself by a signal: the first stage
			// reports 128+N for a signal either way.
			os.Exit(128 + int(ws.Signal()))
		}
	}
}

// forkProgram starts s's program from this thread, which prepareJailed
// restricted, redirected and moved to the call's directory: the program
// inherits its Landlock domain and filter (fork copies the calling
// thread's), and by execve nothing of this process but the descriptors
// prepareJailed left open. The task bound is the child's alone, set
// between fork and execve (forked): the kernel checks a fork against the
// forking task's own RLIMIT_NPROC, so this process, the namespace's
// init, can still start the threads Go's runtime wants (to wait, to take
// a signal) while a fork bomb holds the namespace at the bound; with the
// bound its own, it could not, and died with the call's output unsaid.
func forkProgram(s Spec, plan Plan, nproc uint64, setNproc bool) (int, error) {
	f := newForkSpec(nproc, setNproc)
	s.Redirects, f.made = nil, true
	if err := f.prepareExec(s, plan); err != nil {
		f.close()
		return 0, err
	}
	pid, rd, err := forkJailed(f, -1)
	f.close()
	if err != nil {
		return 0, err
	}
	if err := forkResult(s, rd); err != nil {
		_, _ = waitPid(pid) // it exited after its report
		if e, ok := err.(syscall.Errno); ok {
			return 0, fmt.Errorf("failed to start %s: %w", s.Exe, e)
		}
		return 0, err
	}
	return pid, nil
}
