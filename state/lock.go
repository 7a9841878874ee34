//go:build unix

package state

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, waiting for it; closing
// f releases it.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
