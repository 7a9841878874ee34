//go:build !lgtest

package testknobs

// Build is false outside a test build.
const Build = false

// On is always false outside a test build.
func On(string) bool { return false }
