//go:build linux

package confine

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// chmodBeneath sets the mode of the directory rel below root, following
// no link on the way (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, an
// O_PATH descriptor, changed through /proc/self/fd). removeRun's chmod
// by path followed one: a confined call that swapped a directory of its
// cache for a link between the walk's Lstat and the chmod had the prune
// of a later launch chmod the user's ~/.netrc to 0777 (the
// thirty-eighth attack run).
func chmodBeneath(root, rel string, mode uint32) error {
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(rfd)
	fd, err := unix.Openat2(rfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV})
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode)
}
