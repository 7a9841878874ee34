//go:build linux

package undo

import (
	"errors"

	"golang.org/x/sys/unix"
)

// fileStat is what a record reads of an entry.
type fileStat struct {
	mode         uint32 // type and permission bits
	nlink        uint64
	size         int64
	mtime, ctime int64 // ns
	dev, ino     uint64
}

// statAt looks at name in dirfd with fstatat, not following a link.
func statAt(dirfd int, name string, st *fileStat) error {
	var s unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &s, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		*st = fileStat{
			mode: s.Mode, nlink: uint64(s.Nlink), size: s.Size,
			mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), dev: uint64(s.Dev), ino: s.Ino,
		}
		return nil
	}
}
