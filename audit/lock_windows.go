//go:build windows

package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// flock takes an exclusive lock on f, waiting for it.
func flock(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

// noFollow has no equivalent flag on Windows.
const noFollow = 0
