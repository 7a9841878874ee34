//go:build linux && !amd64

package confine

import "golang.org/x/sys/unix"

// legacyMetadataCalls: arm64 (asm-generic) has only the *at forms of
// chmod, chown and utimes, all in metadataCalls.
var legacyMetadataCalls []uint32

// legacyModeCalls: arm64 has no chmod(2), only fchmodat (modeCalls).
var legacyModeCalls []uint32

// legacyBrokeredCalls: arm64 has renameat alone beside renameat2 (no
// open, creat, unlink or rename).
var legacyBrokeredCalls = []uint32{unix.SYS_RENAMEAT}

func legacyBrokeredCall(n *seccompNotif) (brokered, bool) {
	if n.nr != unix.SYS_RENAMEAT {
		return brokered{}, false
	}
	a := n.args
	return brokered{rename: true, fromDirfd: int32(a[0]), fromPath: a[1], dirfd: int32(a[2]), path: a[3]}, true
}

const legacyOpen = 0

// legacyRemoval: arm64 has no legacy call that removes a name.
func legacyRemoval(uint32) bool { return false }
