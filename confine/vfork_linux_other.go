//go:build linux && !amd64 && !arm64

package confine

import "syscall"

// canVfork: here the launch's child is a fork (its own copy of the first
// stage's memory); vfork needs the few lines of assembly written for
// amd64 and arm64 alone (vfork_linux_*.s).
const canVfork = false

// rawVfork is a clone or clone3 system call, never a vfork here.
//
//go:nosplit
func rawVfork(trap, a1, a2, a3 uintptr) (uintptr, syscall.Errno) {
	r1, _, e := syscall.RawSyscall6(trap, a1, a2, a3, 0, 0, 0)
	return r1, e
}
