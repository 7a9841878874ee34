//go:build !linux

package confine

import "os"

// dirEnt is one name readDir lists, with its type.
type dirEnt struct {
	name string
	typ  os.FileMode
}

// readDir lists the directory dir and gives its change time.
func readDir(dir string, top bool) (ctime int64, ents []dirEnt, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, nil, err
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return 0, nil, err
	}
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
