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

// dirScratch is what readDir reuses from one directory to the next (a
// walk lists hundreds): the getdents buffer, and the names and their ends
// before they become one string.
type dirScratch struct {
	buf   []byte
	names []byte
	ends  []int
}

var dirScratches = sync.Pool{New: func() any { return &dirScratch{buf: make([]byte, 32<<10)} }}

// dirEnt is one name readDir lists, with its type and inode.
type dirEnt struct {
	name string
	typ  os.FileMode // os.ModeDir, os.ModeSymlink, 0 (a regular file) or another type bit
	ino  uint64
}

// readDir appends to dst the names in the directory dir (its last
// component not followed unless top), and gives its change time: open,
// fstat, getdents with the types the file system gives (an fstatat where
// it gives none), close. The walk of a project-write plan calls it once
// per directory; os.Open, File.Stat and File.ReadDir cost it twice as
// much (an epoll registration tried and refused per directory, a DirEntry
// each). The names of one directory share one string. On an error ents is
// dst.
func readDir(dst []dirEnt, dir string, top bool) (ctime int64, ents []dirEnt, err error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !top {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(dir, flags, 0)
	if err != nil {
		return 0, dst, err
	}
	defer unix.Close(fd)
	ctime, _, ents, err = readDirFd(dst, fd)
	return ctime, ents, err
}

// readDirAt is readDir of rel ("" root itself), opened below the
// directory root without following any link on the way (openBeneath):
// the walk of a project before a launch, which a concurrent call may
// change as it reads (a directory swapped for a link to another tree
// between the listing of its parent and its own). It gives the
// directory's device and inode too.
func readDirAt(dst []dirEnt, root int, rel string) (ctime int64, id [2]uint64, ents []dirEnt, err error) {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return 0, id, dst, err
	}
	defer unix.Close(fd)
	return readDirFd(dst, fd)
}

// readDirFd is readDir of the directory open as fd.
func readDirFd(dst []dirEnt, fd int) (ctime int64, id [2]uint64, ents []dirEnt, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, id, dst, err
	}
	id = [2]uint64{st.Dev, st.Ino}
	sc := dirScratches.Get().(*dirScratch)
	defer dirScratches.Put(sc)
	sc.names, sc.ends = sc.names[:0], sc.ends[:0]
	ents = dst
	for {
		n, err := unix.Getdents(fd, sc.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, id, dst, err
		}
		if n <= 0 {
			break
		}
		for b := sc.buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:]))
			if reclen < 19 || reclen > len(b) {
				return 0, id, dst, errors.New("malformed directory entry")
			}
			ino, dt, name := binary.NativeEndian.Uint64(b), b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			var typ os.FileMode
			switch dt {
			case unix.DT_DIR:
				typ = os.ModeDir
			case unix.DT_LNK:
				typ = os.ModeSymlink
			case unix.DT_REG:
			case unix.DT_UNKNOWN:
				var s unix.Stat_t
				if err := unix.Fstatat(fd, string(name), &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					typ = os.ModeIrregular // gone, or unreadable: not clean
					break
				}
				switch s.Mode & unix.S_IFMT {
				case unix.S_IFDIR:
					typ = os.ModeDir
				case unix.S_IFLNK:
					typ = os.ModeSymlink
				case unix.S_IFREG:
				default:
					typ = os.ModeDevice
				}
			default:
				typ = os.ModeDevice // a FIFO, socket or device
			}
			sc.names = append(sc.names, name...)
			sc.ends = append(sc.ends, len(sc.names))
			ents = append(ents, dirEnt{typ: typ, ino: ino})
		}
	}
	all := string(sc.names)
	from := 0
	for i, end := range sc.ends {
		ents[len(dst)+i].name = all[from:end]
		from = end
	}
	return st.Ctim.Nano(), id, ents, nil
}

// dirID is the device and inode of the directory path (no link
// followed); false when it is none.
func dirID(path string) ([2]uint64, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return [2]uint64{}, false
	}
	return [2]uint64{st.Dev, st.Ino}, true
}
