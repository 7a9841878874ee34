//go:build unix

package clitest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Main runs the tests of a verb family's package with loopguard and
// loopguard-hook, built from this module, first on PATH, where the root
// command's TestMain puts the test binary itself: the pty tests drive
// the binary (LoopguardBinary), and its package cannot be imported.
// Under -race (Race) they are built with -race, as the root command's
// test binary is.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "loopguard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "clitest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", BuildArgs(dir+string(os.PathSeparator),
		"github.com/loopguard/loopguard/cmd/loopguard", "github.com/loopguard/loopguard/cmd/loopguard-hook")...)
	build.Env = append(os.Environ(), BuildEnv()...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "clitest: go build: %v\n%s", err, out)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, set := os.LookupEnv("GORACE"); Race && !set {
		// The race runtime otherwise sleeps a second at each exit: a
		// race still ends the binary with status 66, which the tests see.
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	return m.Run()
}

// BuildArgs are go's arguments to build pkgs into out as this test binary
// was built: with -race when it was (Race).
func BuildArgs(out string, pkgs ...string) []string {
	args := []string{"build"}
	if Race {
		args = append(args, "-race")
	}
	return append(append(args, "-o", out), pkgs...)
}

// BuildEnv is what BuildArgs' build adds to the environment: -race needs
// cgo; without it, the binaries are built as make build builds them.
func BuildEnv() []string {
	if Race {
		return []string{"CGO_ENABLED=1"}
	}
	return []string{"CGO_ENABLED=0"}
}
