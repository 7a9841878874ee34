//go:build !linux

package confine

import (
	"errors"
	"path/filepath"
)

// dirIdentity is the Linux launcher's (root_linux.go); elsewhere nothing
// is launched, and a plan (doctor's) names the directory by its path.
func dirIdentity(dir string) (id [2]uint64, real string, err error) {
	real, err = filepath.EvalSymlinks(dir)
	return id, real, err
}

// openProject: nothing is launched here.
func openProject(string, [2]uint64) (int, error) {
	return -1, errors.New("confinement needs Linux")
}
