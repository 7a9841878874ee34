//go:build !linux

package confine

// dirIdentity is the Linux launcher's (root_linux.go); elsewhere nothing
// is launched, and a plan (doctor's) names the directory by its path.
func dirIdentity(string) ([2]uint64, error) { return [2]uint64{}, nil }

// openProject: nothing is launched here; a plan (doctor's) walks the
// project by its path (-1).
func openProject(string, [2]uint64) (int, error) { return -1, nil }

// closeFd: no descriptor here.
func closeFd(int) {}
