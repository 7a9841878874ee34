//go:build !linux

package confine

import (
	"errors"
	"io"
	"time"
)

// Launches are Linux's alone: no launch directory is locked or recovered.
func lockRun(string, bool) (int, error) {
	return -1, errors.New("confinement needs Linux")
}
func unlockRun(int) {}

type undoLocking int

const lockTry undoLocking = 1

func recoverKilled(string, string, Env, io.Writer, undoLocking) bool { return false }

// KilledLaunch: no launch is recovered but on Linux.
func KilledLaunch([]string, int, string, time.Duration) bool { return false }

// LiveLaunch: no launch is recorded but on Linux.
func LiveLaunch([]string, int, string) bool { return false }

func recoverProject(string, string, Env, io.Writer) {}

// closeInherited: no recovery runs but on Linux.
func closeInherited() {}
