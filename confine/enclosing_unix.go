//go:build unix

package confine

import "syscall"

// pathOwnedBy reports whether p itself (not what a link leads to) is uid's.
func pathOwnedBy(p string, uid int) bool {
	var st syscall.Stat_t
	return syscall.Lstat(p, &st) == nil && int(st.Uid) == uid
}
