//go:build !unix

package claudetest

import "os/exec"

// lockFile is a no-op where flock is unavailable; Install still serialises
// within one process.
func lockFile(string) (func(), error) { return func() {}, nil }

// killGroupOnCancel keeps exec's default: kill the process itself.
func killGroupOnCancel(*exec.Cmd) {}
