//go:build !unix

package hookmain

import (
	"errors"
	"syscall"
)

func sysExec(string, []string, []string) error {
	return errors.New("replacing the process is not supported on this system: register `loopguard hook`")
}

// ownSession: no launch runs here to recover.
func ownSession() *syscall.SysProcAttr { return nil }
