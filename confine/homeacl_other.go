//go:build !linux

package confine

// hasACL: only Linux's POSIX ACLs are read; elsewhere the mode decides.
func hasACL(string) bool { return false }
