//go:build !linux

package confine

import (
	"errors"
	"os"
)

// ABI is 0: Landlock is Linux's.
func ABI() int { return 0 }

func run(Spec, Env) error {
	return errors.New("confinement needs Linux's Landlock; this system has none")
}

func ownedBy(os.FileInfo, int) bool { return false }
