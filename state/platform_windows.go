//go:build windows

package state

import (
	"io/fs"
	"os"

	"github.com/loopguard/loopguard/fsx"
)

func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// platformSupported refuses the state directory on Windows: its ACL is not
// checked and a rename does not claim a grant for exactly one process
// (fsx.ErrStateUnsupported), so the hook denies every call, saying why,
// instead of guessing.
func platformSupported() error { return fsx.ErrStateUnsupported }

// alive says no process holds a call: the state directory is refused on
// Windows, so no hook ever holds one.
func alive(int) bool { return false }

// lockFile refuses: the state directory is refused on Windows, so no hook
// ever takes a lock.
func lockFile(*os.File) error { return fsx.ErrStateUnsupported }
