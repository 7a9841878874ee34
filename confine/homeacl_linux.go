package confine

import "golang.org/x/sys/unix"

// hasACL reports whether p (not followed if a link) carries a POSIX access
// ACL: a file some named user or group may read is not one every other
// user may, whatever its mode says, so it counts as private. A file
// system without extended attributes has none.
func hasACL(p string) bool {
	n, err := unix.Lgetxattr(p, "system.posix_acl_access", nil)
	return err == nil && n > 0
}
