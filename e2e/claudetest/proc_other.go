//go:build !unix

package claudetest

import "os/exec"

// lockFile is a no-op where flock is unavailable; Install still serialises
// within one process.
func lockFile(string) (func(), error) { return func() {}, nil }

// startGroup and killGroup kill the process itself: there are no process
// groups here.
func startGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
