//go:build unix

package audit

import (
	"os"
	"syscall"
)

// flock takes an exclusive advisory lock on f, waiting for it.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

// noFollow makes opening the log or the lock fail on a symlink, so a link
// planted in the audit directory cannot redirect appends to another file.
const noFollow = syscall.O_NOFOLLOW
