package confine

import "golang.org/x/sys/unix"

// legacyMetadataCalls are amd64's calls that change a file's mode, owner
// or times by path and that arm64 never had (the asm-generic table has
// only their *at forms, in metadataCalls).
var legacyMetadataCalls = []uint32{
	unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT,
}
