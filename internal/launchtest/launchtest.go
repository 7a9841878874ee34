// Package launchtest builds the small launcher (cmd/loopguard-launch, C)
// for tests, with the flags make build uses: the one place a test compiles
// it.
package launchtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Source is the small launcher's source, relative to the module's root.
const Source = "cmd/loopguard-launch/loopguard-launch.c"

// Build compiles the small launcher of the module at repo into out.
func Build(ctx context.Context, repo, out string) error {
	cmd := exec.CommandContext(ctx, "cc", "-O2", "-Wall", "-Wextra", "-static", "-o", out, filepath.Join(repo, Source))
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("failed to build %s: %w: %s", Source, err, bytes.TrimSpace(b))
	}
	return nil
}

// Require skips t when there is no C compiler, and fails it instead under
// make test (LOOPGUARD_REQUIRE_TABLED=1: scripts/deps installs gcc and
// libc6-dev).
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		if os.Getenv("LOOPGUARD_REQUIRE_TABLED") == "1" {
			t.Fatal("no C compiler (scripts/deps installs gcc and libc6-dev)")
		}
		t.Skip("no C compiler")
	}
}
