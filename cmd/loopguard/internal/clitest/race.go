//go:build unix && race

package clitest

// Race is whether the test binary was built with -race: Main then builds
// loopguard and loopguard-hook with -race too, so the paths the pty tests
// drive through them keep the race detector's coverage.
const Race = true
