package fsx

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ReadlinkAt is the text of the link name in the directory dirfd (read
// without following anything: what a program that follows it would
// read).
func ReadlinkAt(dirfd int, name string) (string, error) {
	for size := 256; size <= 1<<16; size *= 4 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
	return "", errors.New("link target too long")
}
