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

// syncDir is a no-op: Windows cannot fsync a directory. The rename itself is
// atomic (MoveFileEx with MOVEFILE_REPLACE_EXISTING).
func syncDir(string) error { return nil }

// noFollow has no equivalent flag on Windows.
const noFollow = 0
