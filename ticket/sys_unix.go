//go:build unix

package ticket

import (
	"os"
	"syscall"
)

// lockNB takes f's exclusive lock without waiting.
func lockNB(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// writable reports whether the wrapper could write dir: false inside a
// sandbox that mounts it read-only.
func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }

// inherit clears f's close-on-exec flag: the command the wrapper execs
// keeps it (and its lock).
func inherit(f *os.File) {
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFD, 0)
}
