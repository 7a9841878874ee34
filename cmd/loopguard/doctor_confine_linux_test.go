//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/internal/launchtest"
)

// TestDoctorTriesTheSmallLauncher: with loopguard-launch beside the
// binary, doctor's confinement check runs its read-only launch through it
// too, and fails when it does not confine (a stand-in that execs the
// program as it is); without it, the check is loopguard's own launcher's
// (control).
func TestDoctorTriesTheSmallLauncher(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	launchtest.Require(t)
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary is loopguard by its name (TestMain's commands).
	bin := filepath.Join(dir, "loopguard")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	if r := checkConfinement(ctx, bin); r.status != statusOK || strings.Contains(r.detail, "loopguard-launch") {
		t.Fatalf("control, no small launcher: %s %s (%s)", r.status, r.detail, r.fix)
	}
	fast := filepath.Join(dir, "loopguard-launch")
	if err := launchtest.Build(ctx, filepath.Join("..", ".."), fast); err != nil {
		t.Fatal(err)
	}
	if r := checkConfinement(ctx, bin); r.status != statusOK || !strings.Contains(r.detail, "start through "+fast) {
		t.Fatalf("with the small launcher: %s %s (%s)", r.status, r.detail, r.fix)
	}
	// A small launcher that confines nothing: it runs the program after
	// the launcher's -- as it is.
	stand := "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift; p=$1; shift; shift; exec \"$p\" \"$@\"\n"
	if err := os.WriteFile(fast, []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	r := checkConfinement(ctx, bin)
	if r.status != statusFail || !strings.Contains(r.detail, "did not refuse") || !strings.Contains(r.fix, "remove "+fast) {
		t.Fatalf("an unconfining small launcher: %s %s (%s)", r.status, r.detail, r.fix)
	}
}
