//go:build !linux

package confine

import (
	"os"
	"path/filepath"
)

func chmodBeneath(root, rel string, mode uint32) error {
	return os.Chmod(filepath.Join(root, rel), os.FileMode(mode))
}
