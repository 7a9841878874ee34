//go:build unix

package hookmain

import "syscall"

var sysExec = syscall.Exec

// ownSession starts a process in a session of its own (a recovery left to
// finish after the hook has answered: recoverProject).
func ownSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
