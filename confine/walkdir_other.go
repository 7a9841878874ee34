//go:build !linux

package confine

import (
	"errors"
	"os"
)

// dirEnt is one name readDir lists, with its type (and no inode here).
type dirEnt struct {
	name string
	typ  os.FileMode
	ino  uint64
}

// readDir appends to dst the names in the directory dir and gives its
// change time. On an error ents is dst.
func readDir(dst []dirEnt, dir string, top bool) (ctime int64, ents []dirEnt, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, dst, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, dst, err
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return 0, dst, err
	}
	ents = dst
	for _, d := range des {
		typ := d.Type()
		if typ&os.ModeType == os.ModeIrregular {
			if fi, err := os.Lstat(dir + "/" + d.Name()); err == nil {
				typ = fi.Mode().Type()
			}
		}
		ents = append(ents, dirEnt{name: d.Name(), typ: typ & os.ModeType})
	}
	return changeTime(fi), ents, nil
}

// readDirAt: no descriptor walk here (no launch).
func readDirAt([]dirEnt, int, string) (int64, [2]uint64, []dirEnt, error) {
	return 0, [2]uint64{}, nil, errors.New("confinement needs Linux")
}

// dirID: no launch here, no sweep to judge by it.
func dirID(string) ([2]uint64, bool) { return [2]uint64{}, false }
