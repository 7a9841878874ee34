//go:build linux

package keyring

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDBusLaunch puts a dbus-launch first in PATH that records each call
// and fails. It returns the PATH value and the record file.
func fakeDBusLaunch(t *testing.T) (path, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "dbus-launch.calls")
	script := "#!/bin/sh\necho called >> '" + record + "'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "dbus-launch"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

func launched(t *testing.T, record string) bool {
	t.Helper()
	_, err := os.Stat(record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// noBusLimit is a generous bound; the measured figure is logged (-v).
const noBusLimitMs = 3000

func TestNoSessionBus(t *testing.T) {
	// A socket that exists but is not listening, for the "stale address" row.
	dead := filepath.Join(t.TempDir(), "dead.sock")
	l, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	rows := []struct {
		name string
		env  []string // DBUS_SESSION_BUS_ADDRESS is dropped, then these are set
	}{
		{"unset", nil},
		{"empty", []string{busEnv + "="}},
		{"autolaunch", []string{busEnv + "=autolaunch:"}},
		{"missing socket", []string{busEnv + "=unix:path=" + filepath.Join(t.TempDir(), "nope")}},
		{"dead socket", []string{busEnv + "=unix:path=" + dead}},
		{"missing abstract", []string{busEnv + "=unix:abstract=loopguard-test-no-such-bus-" + fmt.Sprint(os.Getpid())}},
		{"server-only address", []string{busEnv + "=unix:tmpdir=/tmp"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			path, record := fakeDBusLaunch(t)
			env := append([]string{"PATH=" + path, "XDG_RUNTIME_DIR=" + t.TempDir()}, row.env...)
			res := runHelper(t, []string{busEnv, "PATH", "XDG_RUNTIME_DIR"}, env, "load", "create", "rotate", "delete", "probe")
			for _, r := range res {
				if r.Kind != "unavailable" {
					t.Errorf("%s: kind %q (%s), want unavailable", r.Op, r.Kind, r.Err)
				}
				if !strings.HasPrefix(r.Err, "keyring "+r.Op+": no D-Bus session bus: the OS keyring is unavailable; ") {
					t.Errorf("%s: message %q", r.Op, r.Err)
				}
				if !strings.Contains(r.Hint, "dbus-run-session") {
					t.Errorf("%s: hint %q does not say how to get a bus", r.Op, r.Hint)
				}
				if r.Ms > noBusLimitMs {
					t.Errorf("%s took %.1f ms", r.Op, r.Ms)
				}
				t.Logf("%s: %.2f ms: %s", r.Op, r.Ms, r.Err)
			}
			if launched(t, record) {
				t.Error("dbus-launch was run")
			}
		})
	}
}

func TestNoBusHintNamesExistingSocket(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res := runHelper(t, []string{busEnv, "XDG_RUNTIME_DIR"}, []string{"XDG_RUNTIME_DIR=" + dir}, "load")
	want := "export " + busEnv + "=unix:path=" + filepath.Join(dir, "bus")
	if res[0].Kind != "unavailable" || !strings.Contains(res[0].Hint, want) {
		t.Fatalf("kind %q hint %q, want it to contain %q", res[0].Kind, res[0].Hint, want)
	}
	// Control: with no socket there, the hint does not invent one.
	res = runHelper(t, []string{busEnv, "XDG_RUNTIME_DIR"}, []string{"XDG_RUNTIME_DIR=" + t.TempDir()}, "load")
	if strings.Contains(res[0].Hint, "export "+busEnv) {
		t.Fatalf("hint names a socket that does not exist: %q", res[0].Hint)
	}
}

// TestGoKeyringAutolaunches is the control for TestNoSessionBus: go-keyring
// on its own, with DBUS_SESSION_BUS_ADDRESS unset, does run dbus-launch
// (through godbus), which is why this package checks the bus first.
func TestGoKeyringAutolaunches(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	// godbus first tries /run/user/<uid>/bus, which the test cannot redirect.
	if _, err := os.Stat(filepath.Join("/run/user", u.Uid, "bus")); err == nil {
		t.Logf("/run/user/%s/bus exists: godbus would use it rather than dbus-launch; control not applicable", u.Uid)
		return
	}
	path, record := fakeDBusLaunch(t)
	res := runHelper(t, []string{busEnv, "PATH"}, []string{"PATH=" + path}, "raw-get")
	if !launched(t, record) {
		t.Fatalf("go-keyring did not run dbus-launch (result: %+v); the control no longer shows the danger", res[0])
	}
	t.Logf("raw go-keyring with no bus ran dbus-launch, then: %s", res[0].Err)
}
