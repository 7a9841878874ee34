//go:build unix

package fsx

import (
	"fmt"
	"io/fs"
	"syscall"
)

func identityOf(fi fs.FileInfo) (Identity, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Identity{}, fmt.Errorf("no stat data for %s", fi.Name())
	}
	return Identity{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		Mtime: fi.ModTime().UnixNano(), Ctime: ctimeNano(st), Mode: uint32(fi.Mode()),
	}, nil
}

func ownedByRootOnly(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid != 0 {
		return false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return true // a link's own mode bits mean nothing; its owner does
	}
	return fi.Mode().Perm()&0o022 == 0
}
