//go:build linux

// Package seccomptest installs, in a test's child process, the seccomp
// filters other programs put above loopguard's launcher, so that a test
// can run the launcher under them.
package seccomptest

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ListenerAbove installs, on every thread of this process, a filter with
// a seccomp listener that lets every call through (a container runtime's,
// LXD's or sysbox's, may hold one). The kernel allows one listener per
// task, so a launcher started under it cannot have its own (EBUSY). It
// exits with status 99 when the filter cannot be installed.
func ListenerAbove() {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_ACCT},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "seccomptest.ListenerAbove:", err)
		os.Exit(99)
	}
	flags := unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH | unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, uintptr(flags), uintptr(unsafe.Pointer(&fp))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomptest.ListenerAbove:", e)
		os.Exit(99)
	}
	runtime.KeepAlive(prog)
}
