//go:build unix

package hookmain

import "syscall"

var sysExec = syscall.Exec
