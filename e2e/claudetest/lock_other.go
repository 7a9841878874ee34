//go:build !unix

package claudetest

// lockFile is a no-op where flock is unavailable; Install still serialises
// within one process.
func lockFile(string) (func(), error) { return func() {}, nil }
