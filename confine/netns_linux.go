//go:build linux

package confine

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// loopbackUp brings up the loopback interface of the second stage's new
// network namespace (it starts down): the program's own servers then
// answer on 127.0.0.1 and ::1, and nothing else is there to reach.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the jail's loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("the jail's loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("the jail's loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing the jail's loopback up: %w", err)
	}
	return nil
}
