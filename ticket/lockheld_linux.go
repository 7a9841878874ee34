//go:build linux

package ticket

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// flockHeld reports whether some process holds a flock on the file at
// path, from /proc/locks (read, not taken: a probe that took the lock,
// even for an instant, could make the wrapper's own lockNB fail).
func flockHeld(path string) bool {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return false
	}
	// /proc/locks names a file MAJOR:MINOR:INODE, the device numbers in
	// hexadecimal (fs/locks.c, lock_get_status).
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	id := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a waiter's
		// line has "->" after the number.
		fs := strings.Fields(sc.Text())
		if len(fs) >= 6 && fs[1] == "FLOCK" && fs[5] == id {
			return true
		}
	}
	return false
}
