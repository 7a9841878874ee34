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
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "loopguard-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "clitest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator),
		"github.com/loopguard/loopguard/cmd/loopguard", "github.com/loopguard/loopguard/cmd/loopguard-hook")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "clitest: go build: %v\n%s", err, out)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return m.Run()
}
