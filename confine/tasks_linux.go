//go:build linux

package confine

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// jailTasks bounds the tasks (processes and threads) of one call: a fork
// bomb stops there, and the machine stays usable. It is the call's
// cgroup's pids.max where it has one (cgroup_linux.go), and otherwise its
// RLIMIT_NPROC: with namespaces of its own the kernel counts that limit
// in the call's own user namespace (ucounts: a user's tasks are counted
// per user namespace, and checked against the limit of each namespace up
// to the initial one), so it is exactly the call's tasks; without them,
// the limit counts every task of the user's (in the launcher's user
// namespace: Claude Code's sandbox makes one per command), so it is set
// to what the user runs now plus jailTasks. A build of this repository
// (go test ./..., GOMAXPROCS threads in each compile and test binary)
// stays far below it. 64 a CPU, 1024 at least: a build runs a compiler
// a CPU, each with a thread or more a CPU.
func jailTasks() uint64 { return max(1024, 64*uint64(runtime.NumCPU())) }

// taskLimit is the RLIMIT_NPROC of a launch without a cgroup that bounds
// its tasks, with namespaces of its own (ns) or without; the program's
// child sets it on itself before execve (forked), soft and hard (an
// unprivileged process cannot raise it again), and the kernel does not
// apply it to root.
func taskLimit(ns bool) (uint64, error) {
	n := jailTasks()
	if !ns {
		c, err := userTasks(os.Getuid())
		if err != nil {
			return 0, fmt.Errorf("counting this user's tasks to bound the call's: %w", err)
		}
		n += c
	}
	var cur unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &cur); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NPROC): %w", err)
	}
	return min(n, cur.Max), nil
}

// userTasks counts the tasks of uid this process's /proc shows: for each
// process whose owner uid is, its threads, which are the link count of its
// task directory less two (proc_task_getattr: one link a thread besides .
// and ..), so one fstatat a process tells both its owner and its threads.
// A process changing its owner or ending meanwhile is counted or not; the
// bound is jailTasks either way, give or take such a race.
func userTasks(uid int) (uint64, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(int(d.Fd()), name+"/task", &st, 0); err != nil || int(st.Uid) != uid {
			continue
		}
		n += max(1, uint64(st.Nlink)-min(2, uint64(st.Nlink)))
	}
	return n, nil
}
