//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	dbus "github.com/godbus/dbus/v5"
)

// The Secret Service names go-keyring uses.
const (
	ssName          = "org.freedesktop.secrets"
	ssPath          = "/org/freedesktop/secrets"
	ssService       = "org.freedesktop.Secret.Service"
	ssCollection    = "org.freedesktop.Secret.Collection"
	ssItem          = "org.freedesktop.Secret.Item"
	ssLoginPath     = "/org/freedesktop/secrets/collection/login"
	ssDefaultAlias  = "default"
	errUnlockPrefix = "failed to unlock correct collection"
)

const (
	hintNoService = "no Secret Service answers on the session bus: install gnome-keyring (Debian: apt-get install --no-install-recommends gnome-keyring) or turn on KeePassXC's Secret Service integration, in this session"
	hintLocked    = "the keyring collection loopguard uses (\"login\", else the default one) is locked or does not exist\n" +
		"on a desktop: log in again, or unlock or create the \"login\" keyring in Passwords and Keys (seahorse)\n" +
		"headless: `gnome-keyring-daemon --replace --unlock --components=secrets` reads a password on stdin, then unlocks (or creates) the login keyring with it"
)

// checkPlatform runs before every go-keyring call.
func checkPlatform(ctx context.Context) error {
	_, err := checkBus(ctx)
	return err
}

// secret is the Secret Service's Secret struct (signature (oayays)).
type secret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// quickGet reads the key's item the short way, on the hook's allow paths:
// one connection (the bus check's own, handed to godbus: no second dial),
// EXTERNAL authentication only, and three calls to the Secret Service
// (SearchItems on the "login" collection, OpenSession "plain", GetSecret),
// where go-keyring dials again, negotiates fd passing, and makes seven
// (Collections, Unlock, SearchItems, OpenSession, Unlock, GetSecret, Close).
// The session ends with the connection. It reads the same item go-keyring
// reads when the "login" collection exists and is unlocked: the first
// result of the same search with the same attributes in the same
// collection. ok is false, with no error, whenever the short way does not
// apply (no "login" collection, no item, a locked item, any D-Bus error):
// the caller then goes the long way, through go-keyring, which unlocks,
// falls back to the default collection and reports errors as before. A
// missing or unusable bus is an error (the long way would fail the same).
func quickGet(ctx context.Context) (value string, ok bool, err error) {
	vals, ok, err := quickGetMany(ctx, Account)
	if !ok || err != nil {
		return "", ok, err
	}
	return vals[0], true, nil
}

// quickGetMany is quickGet for the items of several user names under
// Service, in one connection and one session: a SearchItems per name and
// one GetSecrets for what they found (one call more than quickGet per
// name more). The first name's item must be there (else ok is false, as
// quickGet's); a later one that is not reads as "".
func quickGetMany(ctx context.Context, accounts ...string) (values []string, ok bool, err error) {
	c, err := dialBus(ctx)
	if err != nil {
		return nil, false, err
	}
	if d, has := ctx.Deadline(); has {
		_ = c.SetDeadline(d)
	}
	// godbus reads a message a few bytes at a time from a plain
	// io.ReadWriteCloser: buffer it (175 reads down to a handful).
	conn, err := dbus.NewConn(bufferedConn{bufio.NewReader(c), c}, dbus.WithContext(ctx))
	if err != nil {
		_ = c.Close()
		return nil, false, nil
	}
	defer conn.Close()
	if err := conn.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Geteuid()))}); err != nil {
		return nil, false, nil
	}
	if err := conn.Hello(); err != nil {
		return nil, false, nil
	}
	found := make([]dbus.ObjectPath, len(accounts))
	for i, a := range accounts {
		var items []dbus.ObjectPath
		attrs := map[string]string{"username": a, "service": Service}
		if err := conn.Object(ssName, ssLoginPath).CallWithContext(ctx, ssCollection+".SearchItems", 0, attrs).Store(&items); err != nil || (i == 0 && len(items) == 0) {
			return nil, false, ctx.Err()
		}
		if len(items) > 0 {
			found[i] = items[0]
		}
	}
	var out dbus.Variant
	var session dbus.ObjectPath
	if err := conn.Object(ssName, ssPath).CallWithContext(ctx, ssService+".OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session); err != nil {
		return nil, false, ctx.Err()
	}
	values = make([]string, len(accounts))
	if len(accounts) == 1 {
		var sec secret
		if err := conn.Object(ssName, found[0]).CallWithContext(ctx, ssItem+".GetSecret", 0, session).Store(&sec); err != nil {
			return nil, false, ctx.Err()
		}
		values[0] = string(sec.Value)
		return values, true, nil
	}
	// Several items: one GetSecrets for all of them. It leaves out an item
	// it cannot give (a locked one): then the long way decides.
	var paths []dbus.ObjectPath
	for _, item := range found {
		if item != "" {
			paths = append(paths, item)
		}
	}
	var secs map[dbus.ObjectPath]secret
	if err := conn.Object(ssName, ssPath).CallWithContext(ctx, ssService+".GetSecrets", 0, paths, session).Store(&secs); err != nil {
		return nil, false, ctx.Err()
	}
	for i, item := range found {
		if item == "" {
			continue
		}
		sec, ok := secs[item]
		if !ok {
			return nil, false, nil
		}
		values[i] = string(sec.Value)
	}
	return values, true, nil
}

// bufferedConn reads through a buffer and writes and closes directly.
type bufferedConn struct {
	r *bufio.Reader
	net.Conn
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// probePlatform asks the Secret Service, over a private connection, what
// go-keyring's calls would depend on, and names the first thing missing.
func probePlatform(ctx context.Context, _ backend) error {
	addr, err := checkBus(ctx)
	if err != nil {
		return err
	}
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return classify("", err)
	}
	defer conn.Close()

	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, ssName).Store(&owned); err != nil {
		return classify("", err)
	}
	if !owned {
		var names []string
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
			return classify("", err)
		}
		if !slices.Contains(names, ssName) {
			return newError("", ErrUnavailable, fmt.Errorf("%w: no Secret Service (%s) on the session bus", ErrUnavailable, ssName), hintNoService)
		}
	}

	svc := conn.Object(ssName, ssPath)
	v, err := getProperty(ctx, svc, ssService+".Collections")
	if err != nil {
		return classify("", err)
	}
	collections, _ := v.Value().([]dbus.ObjectPath)
	// go-keyring uses the "login" collection when it exists, else the
	// default alias.
	col := dbus.ObjectPath(ssLoginPath)
	if !slices.Contains(collections, col) {
		var alias dbus.ObjectPath
		if err := svc.CallWithContext(ctx, ssService+".ReadAlias", 0, ssDefaultAlias).Store(&alias); err != nil {
			return classify("", err)
		}
		if alias == "/" || alias == "" {
			return newError("", ErrUnavailable, fmt.Errorf("%w: the Secret Service has no \"login\" and no default collection", ErrUnavailable), hintLocked)
		}
		col = alias
	}
	lv, err := getProperty(ctx, conn.Object(ssName, col), ssCollection+".Locked")
	if err != nil {
		return classify("", err)
	}
	if locked, ok := lv.Value().(bool); !ok || locked {
		return newError("", ErrUnavailable, fmt.Errorf("%w: the keyring collection %s is locked", ErrUnavailable, col), hintLocked)
	}
	return nil
}

// getProperty reads "interface.member" from obj, bounded by ctx.
func getProperty(ctx context.Context, obj dbus.BusObject, prop string) (dbus.Variant, error) {
	var v dbus.Variant
	i := strings.LastIndexByte(prop, '.')
	err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, prop[:i], prop[i+1:]).Store(&v)
	return v, err
}

// classify turns an error from go-keyring or godbus into an *Error.
func classify(op string, err error) *Error {
	var de dbus.Error
	var dep *dbus.Error
	name := ""
	if errors.As(err, &de) {
		name = de.Name
	} else if errors.As(err, &dep) && dep != nil {
		name = dep.Name
	}
	switch {
	case name == "org.freedesktop.DBus.Error.ServiceUnknown",
		name == "org.freedesktop.DBus.Error.NameHasNoOwner",
		strings.HasPrefix(name, "org.freedesktop.DBus.Error.Spawn"):
		return newError(op, ErrUnavailable, fmt.Errorf("%w: no Secret Service on the session bus: %w", ErrUnavailable, err), hintNoService)
	case name == "org.freedesktop.DBus.Error.NoReply", name == "org.freedesktop.DBus.Error.Timeout":
		return newError(op, ErrTimeout, fmt.Errorf("%w: %w", ErrTimeout, err), "")
	case name == "org.freedesktop.Secret.Error.IsLocked",
		strings.HasPrefix(err.Error(), errUnlockPrefix):
		return newError(op, ErrUnavailable, fmt.Errorf("%w: the keyring collection is locked or missing: %w", ErrUnavailable, err), hintLocked)
	case name != "":
		return newError(op, ErrUnavailable, fmt.Errorf("%w: D-Bus error %s: %w", ErrUnavailable, name, err), "")
	}
	return newError(op, ErrUnavailable, fmt.Errorf("%w: %w", ErrUnavailable, err), "")
}
