package confine

import "golang.org/x/sys/unix"

// legacyMetadataCalls are amd64's calls that change a file's owner or
// times by path and that arm64 never had (the asm-generic table has
// only their *at forms, in metadataCalls).
var legacyMetadataCalls = []uint32{
	unix.SYS_CHOWN, unix.SYS_LCHOWN,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT,
}

// legacyModeCalls is amd64's chmod(2), which arm64 never had (modeCalls
// holds the *at forms).
var legacyModeCalls = []uint32{unix.SYS_CHMOD}

// legacyBrokeredCalls are amd64's calls that create or remove a file by
// path and that arm64 never had: the filter sends them to the broker too
// (broker_linux.go).
var legacyBrokeredCalls = []uint32{unix.SYS_OPEN, unix.SYS_CREAT, unix.SYS_UNLINK, unix.SYS_RENAME, unix.SYS_RENAMEAT,
	unix.SYS_MKDIR, unix.SYS_MKNOD, unix.SYS_SYMLINK, unix.SYS_LINK, unix.SYS_RMDIR}

// legacyBrokeredCall reads amd64's legacy calls for the broker.
func legacyBrokeredCall(n *seccompNotif) (brokered, bool) {
	a := n.args
	switch n.nr {
	case unix.SYS_OPEN:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], flags: int(int32(a[1])), mode: uint32(a[2])}, true
	case unix.SYS_CREAT:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: uint32(a[1])}, true
	case unix.SYS_UNLINK:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], unlink: true}, true
	case unix.SYS_MKDIR:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], mode: uint32(a[1]), name: true, mkdir: true}, true
	case unix.SYS_RMDIR:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], rmdir: true}, true
	case unix.SYS_MKNOD:
		return brokered{dirfd: unix.AT_FDCWD, path: a[0], name: true, mknod: true, mode: uint32(a[1]), dev: a[2]}, true
	case unix.SYS_SYMLINK:
		return brokered{dirfd: unix.AT_FDCWD, path: a[1], name: true, symlink: true, target: a[0]}, true
	case unix.SYS_LINK:
		return brokered{dirfd: unix.AT_FDCWD, path: a[1], name: true, link: true, fromDirfd: unix.AT_FDCWD, fromPath: a[0]}, true
	case unix.SYS_RENAME:
		return brokered{rename: true, fromDirfd: unix.AT_FDCWD, fromPath: a[0], dirfd: unix.AT_FDCWD, path: a[1]}, true
	case unix.SYS_RENAMEAT:
		return brokered{rename: true, fromDirfd: int32(a[0]), fromPath: a[1], dirfd: int32(a[2]), path: a[3]}, true
	}
	return brokered{}, false
}

// legacyOpen is open(2), whose flags the filter reads (0: none).
const legacyOpen = unix.SYS_OPEN

// legacyRemoval reports whether the legacy call nr removes a name
// (unlink, rmdir): none goes to a first stage that serves no directory.
func legacyRemoval(nr uint32) bool { return nr == unix.SYS_UNLINK || nr == unix.SYS_RMDIR }
