//go:build !linux

package confine

import (
	"errors"
	"io"
	"os"
)

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

func run(Spec, Env, io.Writer) (int, error) {
	return 0, errors.New("confinement needs Linux's Landlock; this system has none")
}

func stage2() error { return errors.New("confinement needs Linux's Landlock; this system has none") }

func changeTime(fi os.FileInfo) int64 { return fi.ModTime().UnixNano() }

func ownedBy(os.FileInfo, int) bool { return false }
