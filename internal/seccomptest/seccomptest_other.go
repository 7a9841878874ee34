//go:build !linux

package seccomptest

// ListenerAbove is Linux's alone: seccomp is.
func ListenerAbove() { panic("seccomptest: seccomp is Linux's alone") }

// RefuseClone3 is Linux's alone: seccomp is.
func RefuseClone3() { panic("seccomptest: seccomp is Linux's alone") }
