// Package keyringtest holds what the real-keyring tests share: whether the
// run has a real Secret Service session (scripts/with-keyring) and whether
// it must have one, and a private D-Bus bus. It is for tests only.
package keyringtest

import (
	"os"
	"testing"
)

// Real reports whether the process runs inside scripts/with-keyring: a
// Secret Service session of its own on the session bus.
func Real() bool {
	return os.Getenv("LOOPGUARD_REAL_KEYRING") == "1" && os.Getenv("DBUS_SESSION_BUS_ADDRESS") != ""
}

// Want is Real for a test that needs the session, and fails the test when
// `make test` demanded one (LOOPGUARD_REQUIRE_REAL_KEYRING=1) but it is
// missing: a skipped real-keyring test must not pass as a run.
func Want(t testing.TB) bool {
	t.Helper()
	if Real() {
		return true
	}
	if os.Getenv("LOOPGUARD_REQUIRE_REAL_KEYRING") == "1" {
		t.Fatal("LOOPGUARD_REQUIRE_REAL_KEYRING=1 but there is no real keyring session: run through scripts/with-keyring (make test)")
	}
	return false
}

// Require skips a test without the session (Want).
func Require(t testing.TB) {
	t.Helper()
	if !Want(t) {
		t.Skip("needs the OS keyring: run through scripts/with-keyring (make test)")
	}
}
