//go:build !linux

package confine

import (
	"errors"
	"io"
)

// Launches are Linux's alone: no launch directory is locked or recovered.
func lockRun(string, bool) (int, error) {
	return -1, errors.New("confinement needs Linux")
}
func unlockRun(int)                        {}
func recoverKilled(string, Env, io.Writer) {}
