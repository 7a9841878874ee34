//go:build linux && (amd64 || arm64)

package confine

import "syscall"

// canVfork: the launch's child may share the first stage's memory until
// it execs (vfork_linux_*.s).
const canVfork = true

// rawVfork is a clone or clone3 system call that may be a vfork
// (CLONE_VM|CLONE_VFORK): the child returns from it on the parent's
// stack.
//
//go:noescape
func rawVfork(trap, a1, a2, a3 uintptr) (r1 uintptr, err syscall.Errno)
