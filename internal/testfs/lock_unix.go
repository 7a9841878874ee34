//go:build unix

package testfs

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock of the directory dir, as a live
// launcher holds its launch directory's, and returns what lets go of it.
func Lock(tb testing.TB, dir string) (release func()) {
	tb.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		tb.Fatal(err)
	}
	return func() { unix.Close(fd) }
}
