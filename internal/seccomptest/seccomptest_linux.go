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
	install("ListenerAbove", unix.SYS_ACCT, unix.SECCOMP_RET_USER_NOTIF,
		unix.SECCOMP_FILTER_FLAG_TSYNC|unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH|unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
}

// RefuseClone3 installs, on every thread of this process, a filter that
// answers clone3 with ENOSYS, as Claude Code's sandbox does (so that libc
// falls back to clone); a program it starts inherits it. It exits with
// status 99 when the filter cannot be installed.
func RefuseClone3() {
	install("RefuseClone3", unix.SYS_CLONE3, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS), unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// install sets no_new_privs and installs, with flags, a filter that
// answers system call nr with ret and lets every other through; name is
// the caller's, for the message when it fails.
func install(name string, nr, ret uint32, flags uintptr) {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: nr},
		{Code: unix.BPF_RET | unix.BPF_K, K: ret},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "seccomptest."+name+":", err)
		os.Exit(99)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fp))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomptest."+name+":", e)
		os.Exit(99)
	}
	runtime.KeepAlive(prog)
}
