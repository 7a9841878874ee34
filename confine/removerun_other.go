//go:build !linux

package confine

import (
	"os"
	"path/filepath"
)

func chmodBeneath(root, rel string, mode uint32) error {
	return os.Chmod(filepath.Join(root, rel), os.FileMode(mode))
}

func relBelow(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	return rel
}
