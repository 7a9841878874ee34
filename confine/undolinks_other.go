//go:build !linux

package confine

// HoldLinksOut: nothing is launched here, so no scratch directory for a
// link to lead into (undolinks_linux.go).
func HoldLinksOut(string, int) []string { return nil }
