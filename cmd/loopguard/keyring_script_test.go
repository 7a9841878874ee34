package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	dbus "github.com/godbus/dbus/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/internal/keyringtest"
)

// cmdPrivateKeyring is the script command `private-keyring`: it starts a
// dbus-daemon and an unlocked gnome-keyring-daemon of the script's own (HOME
// is the script's), and points DBUS_SESSION_BUS_ADDRESS at it. Scripts that
// replace or delete the key (key rotate, uninstall --purge-key) use it so
// that they never touch the keyring other scripts share. Both daemons are
// killed when the script ends.
func cmdPrivateKeyring(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: private-keyring")
	}
	for _, c := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(c); err != nil {
			ts.Fatalf("%s not found (make deps installs it): %v", c, err)
		}
	}
	dir := ts.MkAbs("private-bus")
	ts.Check(os.MkdirAll(dir, 0o700))
	addr, stop, err := keyringtest.PrivateBus(dir)
	ts.Check(err)
	ts.Defer(stop)

	home := ts.Getenv("HOME")
	run := filepath.Join(dir, "run")
	ts.Check(os.MkdirAll(run, 0o700))
	daemon := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	daemon.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR=" + run,
		"DBUS_SESSION_BUS_ADDRESS=" + addr,
	}
	daemon.Stdin = strings.NewReader("throwaway-script-password")
	logPath := filepath.Join(dir, "gnome-keyring.log")
	logf, err := os.Create(logPath)
	ts.Check(err)
	defer logf.Close()
	daemon.Stdout, daemon.Stderr = logf, logf
	ts.Check(daemon.Start())
	ts.Defer(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })

	conn, err := dbus.Connect(addr)
	ts.Check(err)
	defer conn.Close()
	start := time.Now()
	for {
		var owned bool
		ts.Check(conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&owned))
		if owned {
			var v dbus.Variant
			err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login").
				Call("org.freedesktop.DBus.Properties.Get", 0, "org.freedesktop.Secret.Collection", "Locked").Store(&v)
			if locked, ok := v.Value().(bool); err == nil && ok && !locked {
				break
			}
		}
		if time.Since(start) > 5*time.Second {
			b, _ := os.ReadFile(logPath)
			ts.Fatalf("gnome-keyring-daemon not ready with an unlocked login keyring after 5s; its log:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	ts.Setenv("XDG_RUNTIME_DIR", run)
}
