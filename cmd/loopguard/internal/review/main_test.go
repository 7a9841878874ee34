//go:build unix

package review

import (
	"os"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// TestMain puts loopguard on PATH: the pty tests run review as a human
// does, on a terminal of its own.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }
