//go:build unix && !race

package clitest

// Race is whether the test binary was built with -race (race.go).
const Race = false
