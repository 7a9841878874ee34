//go:build !linux

package confine

import "os"

// dirEnt is one name readDir lists, with its type.
type dirEnt struct {
	name string
	typ  os.FileMode
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

// dirID: no launch here, no sweep to judge by it.
func dirID(string) ([2]uint64, bool) { return [2]uint64{}, false }
