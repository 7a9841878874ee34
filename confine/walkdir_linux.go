//go:build linux

package confine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// direntBufs are getdents buffers (a walk lists hundreds of directories).
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// dirEnt is one name readDir lists, with its type.
type dirEnt struct {
	name string
	typ  os.FileMode // os.ModeDir, os.ModeSymlink, 0 (a regular file) or another type bit
}

// readDir lists the directory dir (its last component not followed unless
// top) and gives its change time: open, fstat, getdents with the types
// the file system gives (an fstatat where it gives none), close. The
// walk of a project-write plan calls it once per directory; os.Open,
// File.Stat and File.ReadDir cost it twice as much (an epoll
// registration tried and refused per directory, a DirEntry each).
func readDir(dir string, top bool) (ctime int64, ents []dirEnt, err error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !top {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(dir, flags, 0)
	if err != nil {
		return 0, nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, nil, err
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		if n <= 0 {
			return st.Ctim.Nano(), ents, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				return 0, nil, errors.New("malformed directory entry")
			}
			ino, dt, name := binary.NativeEndian.Uint64(b), b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := dirEnt{name: string(name)}
			switch dt {
			case unix.DT_DIR:
				e.typ = os.ModeDir
			case unix.DT_LNK:
				e.typ = os.ModeSymlink
			case unix.DT_REG:
			case unix.DT_UNKNOWN:
				var s unix.Stat_t
				if err := unix.Fstatat(fd, e.name, &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					e.typ = os.ModeIrregular // gone, or unreadable: not clean
					break
				}
				switch s.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					e.typ = os.ModeDir
				case unix.S_IFLNK:
					e.typ = os.ModeSymlink
				case unix.S_IFREG:
				default:
					e.typ = os.ModeDevice
				}
			default:
				e.typ = os.ModeDevice // a FIFO, socket or device
			}
			ents = append(ents, e)
		}
	}
}
