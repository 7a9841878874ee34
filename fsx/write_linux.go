//go:build linux

package fsx

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// WriteFileAt is WriteFile for name in the directory dirfd, which the
// caller reached without following a link (openat2 beneath a root): a new
// temp file beside it (O_EXCL|O_NOFOLLOW under a random name, so that a
// file or link planted at a name it could guess neither receives the
// bytes nor stops the write), written, set to mode (whatever the umask),
// fsynced, and renamed over name.
func WriteFileAt(dirfd int, name string, data []byte, mode fs.FileMode) error {
	tmp, err := tempName()
	if err != nil {
		return err
	}
	return writeAt(dirfd, tmp, name, data, mode)
}

// WriteFileAtLocked is WriteFileAt with git's lock for the temp file:
// NAME.lock, which O_EXCL makes only while no git holds it, so that a git
// writing name meanwhile fails rather than one write losing the other's.
func WriteFileAtLocked(dirfd int, name string, data []byte, mode fs.FileMode) error {
	return writeAt(dirfd, name+".lock", name, data, mode)
}

func writeAt(dirfd int, tmp, name string, data []byte, mode fs.FileMode) error {
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}
