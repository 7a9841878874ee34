//go:build linux

package confine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// dirIdentity is the device and inode of the directory dir, opened
// through no link. A link on a project's path is one a call of an
// enclosing project may have put there, or swap in and out while a
// launch reads the project (the seventeenth attack run wrote another
// repository's files so in 20 to 28 launches of 60): a project is named
// by its real path, as the hosts name it (their own getcwd).
func dirIdentity(dir string) ([2]uint64, error) {
	fd, id, err := openNoLinks(dir)
	if errors.Is(err, unix.ELOOP) {
		return id, fmt.Errorf("a link is on its path: name the project by its real path")
	}
	if err != nil {
		return id, err
	}
	_ = unix.Close(fd)
	return id, nil
}

// errMoved: the project's path no longer leads to the directory the plan
// saw.
var errMoved = errors.New("is no longer the directory the call began in (another directory, or a link, is there now)")

// openProject opens the project dir as an O_PATH descriptor, when it is
// still the directory want names ([0, 0]: any).
func openProject(dir string, want [2]uint64) (int, error) {
	fd, id, err := openNoLinks(dir)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("%s %w", dir, errMoved)
	}
	if err != nil {
		return -1, err
	}
	if want != [2]uint64{} && id != want {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("%s %w", dir, errMoved)
	}
	return fd, nil
}

// closeFd closes fd, when it is one.
func closeFd(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// openNoLinks opens the directory dir (absolute) as an O_PATH descriptor,
// refusing a link anywhere on its path (ELOOP), and returns its device and
// inode.
func openNoLinks(dir string) (int, [2]uint64, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, [2]uint64{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, [2]uint64{}, err
	}
	return fd, [2]uint64{st.Dev, st.Ino}, nil
}
