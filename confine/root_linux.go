//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// dirIdentity opens the directory dir (its path followed as the kernel
// follows it) and returns its device and inode and the path it is at.
func dirIdentity(dir string) (id [2]uint64, real string, err error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return id, "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return id, "", err
	}
	if real, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil {
		return id, "", err
	}
	return [2]uint64{st.Dev, st.Ino}, real, nil
}

// errMoved: the project's path no longer leads to the directory the plan
// saw.
var errMoved = errors.New("is no longer the directory the call began in (another directory, or a link, is there now)")

// openProject opens the project dir as an O_PATH descriptor, when it is
// still the directory id names ([0, 0]: any).
func openProject(dir string, id [2]uint64) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	if id != [2]uint64{} && [2]uint64{st.Dev, st.Ino} != id {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("%s %w", dir, errMoved)
	}
	return fd, nil
}
