//go:build !lgtest

package testknobs

// On is always false outside a test build.
func On(string) bool { return false }
