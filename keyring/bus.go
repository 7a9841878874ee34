package keyring

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// busEnv is the variable godbus reads the session bus address from.
const busEnv = "DBUS_SESSION_BUS_ADDRESS"

// maxBusAddressLen bounds the address taken from the environment.
const maxBusAddressLen = 4096

// errNoBus starts every message about a missing or unusable session bus.
const errNoBus = "no D-Bus session bus: the OS keyring is unavailable"

// busEndpoint is one client address from DBUS_SESSION_BUS_ADDRESS that can be
// dialled: network is "unix" or "tcp".
type busEndpoint struct {
	network, address string
}

// parseBusAddress splits a D-Bus address list ("a;b", each
// "transport:key=value,...", values %-escaped) into the endpoints this
// package can test for reachability. It refuses "autolaunch:" (godbus would
// run dbus-launch) and reports, for a list with nothing dialable, why.
func parseBusAddress(s string) ([]busEndpoint, error) {
	if s == "" {
		return nil, errors.New(busEnv + " is not set")
	}
	if len(s) > maxBusAddressLen {
		return nil, fmt.Errorf("%s is %d bytes long", busEnv, len(s))
	}
	var eps []busEndpoint
	var why []string
	for _, entry := range strings.Split(s, ";") {
		if entry == "" {
			continue
		}
		transport, rest, ok := strings.Cut(entry, ":")
		if !ok {
			why = append(why, fmt.Sprintf("%q has no transport", entry))
			continue
		}
		keys := map[string]string{}
		for _, kv := range strings.Split(rest, ",") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			uv, err := url.PathUnescape(v)
			if err != nil {
				continue
			}
			keys[k] = uv
		}
		switch transport {
		case "autolaunch":
			why = append(why, "autolaunch addresses are refused (they would start a bus with dbus-launch)")
		case "unix":
			switch {
			case keys["path"] != "" && keys["abstract"] == "":
				eps = append(eps, busEndpoint{"unix", keys["path"]})
			case keys["abstract"] != "" && keys["path"] == "":
				eps = append(eps, busEndpoint{"unix", "@" + keys["abstract"]})
			default:
				why = append(why, fmt.Sprintf("unix address %q has neither path= nor abstract= (or both)", entry))
			}
		case "tcp", "nonce-tcp":
			if keys["host"] == "" || keys["port"] == "" {
				why = append(why, fmt.Sprintf("%s address %q lacks host= or port=", transport, entry))
				continue
			}
			eps = append(eps, busEndpoint{"tcp", net.JoinHostPort(keys["host"], keys["port"])})
		default:
			why = append(why, fmt.Sprintf("transport %q is not supported", transport))
		}
	}
	if len(eps) == 0 {
		if len(why) == 0 {
			why = append(why, "it lists no address")
		}
		return nil, fmt.Errorf("%s is not usable: %s", busEnv, strings.Join(why, "; "))
	}
	return eps, nil
}

// checkBus verifies, without starting anything, that the session bus named by
// DBUS_SESSION_BUS_ADDRESS accepts connections. It must pass before any
// godbus call: with the variable unset godbus would run dbus-launch.
func checkBus(ctx context.Context) (string, error) {
	c, err := dialBus(ctx)
	if err != nil {
		return "", err
	}
	_ = c.Close()
	return os.Getenv(busEnv), nil
}

// dialBus connects to the first endpoint of DBUS_SESSION_BUS_ADDRESS that
// accepts, without starting anything.
func dialBus(ctx context.Context) (net.Conn, error) {
	eps, err := parseBusAddress(os.Getenv(busEnv))
	if err != nil {
		return nil, newError("", ErrUnavailable, fmt.Errorf("%s; %w", errNoBus, err), noBusHint())
	}
	var d net.Dialer
	var last error
	for _, ep := range eps {
		c, err := d.DialContext(ctx, ep.network, ep.address)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
	}
	return nil, newError("", ErrUnavailable, fmt.Errorf("%s; cannot connect to %s: %w", errNoBus, busEnv, last), noBusHint())
}

// noBusHint tells a person how to get a session bus with a Secret Service.
func noBusHint() string {
	lines := []string{
		"loopguard keeps its key in the Secret Service (gnome-keyring, KeePassXC) on the D-Bus session bus, and starts no bus itself",
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		sock := filepath.Join(dir, "bus")
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			lines = append(lines, "a session bus socket exists: export "+busEnv+"=unix:path="+sock+" and retry")
		}
	}
	lines = append(lines,
		"run loopguard from your desktop session's terminal, where "+busEnv+" is set",
		"over SSH or in a container: start a bus and an unlocked keyring, e.g. `dbus-run-session -- $SHELL`, then `gnome-keyring-daemon --replace --unlock --components=secrets` (it reads the keyring password on stdin, up to end of file)",
	)
	return strings.Join(lines, "\n")
}

// SessionBus returns the session bus address (DBUS_SESSION_BUS_ADDRESS) once
// it accepts connections, for loopguard's other D-Bus clients (the desktop
// notification): the same checks as the keyring's, so nothing ever starts a
// bus with dbus-launch.
func SessionBus(ctx context.Context) (string, error) { return checkBus(ctx) }
