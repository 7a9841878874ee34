//go:build unix

package confine

import (
	"os"

	"golang.org/x/sys/unix"
)

// heldFD is where the approved call's lock descriptors go: high, so that
// a script's own `exec 3>file` does not close one and let the project go.
const heldFD = 900

// inheritHigh moves each of files to a descriptor at heldFD or above that
// exec keeps open.
func inheritHigh(files []*os.File) error {
	for _, f := range files {
		// F_DUPFD, not F_DUPFD_CLOEXEC: open across exec (the flock
		// goes with the open file, whichever descriptor holds it).
		if _, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD, heldFD); err != nil {
			return err
		}
	}
	return nil
}
