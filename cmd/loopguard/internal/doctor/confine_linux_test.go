//go:build linux

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
)

// TestDoctorTriesTheLauncher: doctor's confinement check runs a read-only
// launch through the launcher the hook runs (here the binary itself: no
// loopguard-exec beside it) and passes; a loopguard-launch an earlier
// release left beside it (the retired small launcher, here a stand-in
// that confines nothing) is not run: the check and its result are the
// same. Control: the stand-in, as the launcher, fails the check.
func TestDoctorTriesTheLauncher(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	dir := t.TempDir()
	// The test binary is loopguard by its name (TestMain's commands).
	bin := filepath.Join(dir, "loopguard")
	linkSelf(t, bin)
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	alone := checkConfinement(ctx, bin)
	if alone.status != statusOK || !strings.Contains(alone.detail, "confined to their capability by "+bin) {
		t.Fatalf("the binary alone: %s %s (%s)", alone.status, alone.detail, alone.fix)
	}
	// Runs the program after the launcher's -- as it is: were it run, the
	// read outside the project would pass and the check would fail.
	stand := "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift; p=$1; shift; shift; exec \"$p\" \"$@\"\n"
	stale := filepath.Join(dir, "loopguard-launch")
	if err := os.WriteFile(stale, []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := checkConfinement(ctx, bin); r != alone {
		t.Errorf("with a stale loopguard-launch beside it: %s %s (%s), want %s %s", r.status, r.detail, r.fix, alone.status, alone.detail)
	}
	// Control: the stand-in, were it the launcher, fails the check.
	if r := checkConfinement(ctx, stale); r.status != statusFail || !strings.Contains(r.detail, "did not refuse") {
		t.Errorf("control, the stand-in as the launcher: %s %s (%s)", r.status, r.detail, r.fix)
	}
}

// TestDoctorTellsOfNoBroker: where a seccomp filter above the launcher
// holds the one listener a process may have, a launch runs without the
// broker, so the jail refuses every change of a file's mode or times;
// doctor's confinement check warns of it and names what breaks. Control:
// without that filter the same check passes, having touched a file in the
// launch's own TMPDIR.
func TestDoctorTellsOfNoBroker(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "loopguard")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	if r := checkConfinement(ctx, bin); r.status != statusOK || !strings.Contains(r.detail, "touched a file in its own TMPDIR") {
		t.Fatalf("control, no filter above: %s %s (%s)", r.status, r.detail, r.fix)
	}
	t.Setenv(listenerAboveEnv, "1")
	r := checkConfinement(ctx, bin)
	if r.status != statusWarn || !strings.Contains(r.detail, "without its broker (a seccomp filter above") || !strings.Contains(r.detail, "chmod +x") {
		t.Errorf("with a listener above: %s %s (%s)", r.status, r.detail, r.fix)
	}
}

// TestDoctorTriesTheConfiner: with loopguard-exec and loopguard-confine
// beside the binary, the check runs its launch through loopguard-confine,
// the launcher the hook names for a call that stays where it runs; a
// loopguard-confine of another build (here a script, whose build cannot be
// read) fails the check, as the hook would confine with other rules.
// Control: loopguard-exec alone beside it is the one tried.
func TestDoctorTriesTheConfiner(t *testing.T) {
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "loopguard")
	linkSelf(t, bin, filepath.Join(dir, "loopguard-exec"))
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	if r := checkConfinement(ctx, bin); r.status != statusOK || !strings.Contains(r.detail, "by "+filepath.Join(dir, "loopguard-exec")) {
		t.Fatalf("control, loopguard-exec alone beside it: %s %s (%s)", r.status, r.detail, r.fix)
	}
	c := filepath.Join(dir, "loopguard-confine")
	linkSelf(t, c)
	if r := checkConfinement(ctx, bin); r.status != statusOK || !strings.Contains(r.detail, "by "+c) {
		t.Errorf("with loopguard-confine beside it: %s %s (%s)", r.status, r.detail, r.fix)
	}
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := checkConfinement(ctx, bin); r.status != statusFail || !strings.Contains(r.detail, c+" is not of this build") {
		t.Errorf("with a loopguard-confine of another build: %s %s (%s)", r.status, r.detail, r.fix)
	}
}

// linkSelf makes each of paths a symbolic link to the test binary, which
// runs as the binary its name says (TestMain).
func linkSelf(t *testing.T, paths ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if err := os.Symlink(self, p); err != nil {
			t.Fatal(err)
		}
	}
}
