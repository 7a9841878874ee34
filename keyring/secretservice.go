//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// quickGet reads the key's item the short way, on the hook's allow paths
// (see quickGetMany). It reads the same item go-keyring would read: the
// first result of the same search with the same attributes in the same
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
// Service. The first name's item must be there (else ok is false, as
// quickGet's); a later one that is not reads as "".
//
// It is one connection (the bus check's own: no second dial) and four
// round trips, where go-keyring dials again, negotiates fd passing and
// makes nine (two to authenticate, Hello, Collections, Unlock,
// SearchItems, OpenSession, Unlock, GetSecret), and godbus's own calls
// made seven for two names (two to authenticate, Hello, two
// SearchItems, OpenSession, GetSecrets):
//  1. EXTERNAL authentication, with its initial response (godbus first
//     asks which mechanisms the bus offers);
//  2. BEGIN, then Hello and a SearchItems on the "login" collection per
//     name, all in one write; D-Bus answers a connection's calls by
//     serial, so none waits for another;
//  3. OpenSession "plain";
//  4. GetSecrets for the items found.
//
// OpenSession waits for the searches' answers because gnome-keyring
// (42.1) knows a caller only once its main loop has run the callback its
// message filter queues for each message (ensure_client_for_sender), and
// a call it reaches first finds no client: a SearchItems then fails
// ("gkd_secret_service_get_pkcs11_session: assertion 'client' failed"),
// and this way falls back to the long one; an OpenSession goes on with
// no session ("gkd_secret_service_publish_dispatch: assertion 'client'
// failed", "plain_negotiate: assertion 'session' failed") and, with
// OpenSession sent in step 2's write, once left the daemon off the bus,
// so that every later read found no Secret Service, within 3,700 reads
// (TestRealQuickGetUnderLoad). A search that answered proves the client,
// which lasts until the connection ends. go-keyring's calls, one at a
// time, met neither in as many reads.
//
// Nothing but the AUTH line is written before the bus has said OK, and
// nothing after BEGIN is protocol beyond what every client sends: method
// calls, several in flight (sd-bus and libdbus send Hello right after
// BEGIN too). The session ends with the connection.
func quickGetMany(ctx context.Context, accounts ...string) (values []string, ok bool, err error) {
	c, err := dialBus(ctx)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	if d, has := ctx.Deadline(); has {
		_ = c.SetDeadline(d)
	}
	in := bufio.NewReader(c)
	uid := hex.EncodeToString([]byte(strconv.Itoa(os.Geteuid())))
	if _, err := io.WriteString(c, "\x00AUTH EXTERNAL "+uid+"\r\n"); err != nil {
		return nil, false, ctx.Err()
	}
	line, err := in.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "OK ") {
		return nil, false, ctx.Err()
	}
	var w wire
	w.out.WriteString("BEGIN\r\n")
	hello := w.call(busName, busPath, busName, "Hello")
	searches := make([]uint32, len(accounts))
	for i, a := range accounts {
		searches[i] = w.call(ssName, ssLoginPath, ssCollection, "SearchItems", map[string]string{"username": a, "service": Service})
	}
	replies, sent, err := w.exchange(c, in, append([]uint32{hello}, searches...))
	if !sent {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ctx.Err()
	}
	if replies[hello].Type != dbus.TypeMethodReply {
		return nil, false, nil
	}
	found := make([]dbus.ObjectPath, len(accounts))
	var paths []dbus.ObjectPath
	for i, serial := range searches {
		var items []dbus.ObjectPath
		if replies[serial].Type != dbus.TypeMethodReply || dbus.Store(replies[serial].Body, &items) != nil || (i == 0 && len(items) == 0) {
			return nil, false, nil
		}
		if len(items) > 0 {
			found[i] = items[0]
			paths = append(paths, items[0])
		}
	}
	// The searches answered: gnome-keyring knows this caller, so the
	// session it opens is this caller's.
	open := w.call(ssName, ssPath, ssService, "OpenSession", "plain", dbus.MakeVariant(""))
	replies, sent, err = w.exchange(c, in, []uint32{open})
	if !sent {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ctx.Err()
	}
	var out dbus.Variant
	var session dbus.ObjectPath
	if replies[open].Type != dbus.TypeMethodReply || dbus.Store(replies[open].Body, &out, &session) != nil {
		return nil, false, nil
	}
	// One GetSecrets for every item found. It leaves out an item it cannot
	// give (a locked one): then the long way decides.
	get := w.call(ssName, ssPath, ssService, "GetSecrets", paths, session)
	replies, sent, err = w.exchange(c, in, []uint32{get})
	if !sent {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ctx.Err()
	}
	var secs map[dbus.ObjectPath]secret
	if replies[get].Type != dbus.TypeMethodReply || dbus.Store(replies[get].Body, &secs) != nil {
		return nil, false, nil
	}
	values = make([]string, len(accounts))
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

// The bus itself, as the destination of Hello.
const (
	busName = "org.freedesktop.DBus"
	busPath = "/org/freedesktop/DBus"
)

// wire is quickGetMany's side of the conversation: method calls encoded
// ahead, with serials of its own, and their replies read back by serial.
// The first error encoding a call is kept in err.
type wire struct {
	out    bytes.Buffer
	serial uint32
	err    error
}

// call appends a method call to out and returns its serial.
func (w *wire) call(dest string, path dbus.ObjectPath, iface, member string, args ...any) uint32 {
	m := &dbus.Message{Type: dbus.TypeMethodCall, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldDestination: dbus.MakeVariant(dest),
		dbus.FieldPath:        dbus.MakeVariant(path),
		dbus.FieldInterface:   dbus.MakeVariant(iface),
		dbus.FieldMember:      dbus.MakeVariant(member),
	}, Body: args}
	if len(args) > 0 {
		m.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(args...))
	}
	start := w.out.Len()
	if err := m.EncodeTo(&w.out, binary.LittleEndian); err != nil {
		if w.err == nil {
			w.err = err
		}
		w.out.Truncate(start)
		return 0
	}
	// godbus numbers only what its own Conn sends: the serial is the
	// fixed header's third field, bytes 8 to 11 (D-Bus specification,
	// "Message Format").
	w.serial++
	binary.LittleEndian.PutUint32(w.out.Bytes()[start+8:], w.serial)
	return w.serial
}

// exchange writes the calls encoded since the last exchange and reads
// the replies to want. sent is false, with nothing written and no error,
// when a call could not be encoded (w.err); err is the connection's.
func (w *wire) exchange(c io.Writer, in io.Reader, want []uint32) (replies map[uint32]*dbus.Message, sent bool, err error) {
	defer w.out.Reset()
	if w.err != nil {
		return nil, false, nil
	}
	if _, err := c.Write(w.out.Bytes()); err != nil {
		return nil, true, err
	}
	replies, err = w.replies(in, want)
	return replies, true, err
}

// maxUnasked bounds the messages replies reads that answer nothing it
// asked (the bus's NameAcquired signal after Hello, say).
const maxUnasked = 16

// replies reads messages from in until each serial in want has its reply
// (a method return or an error), keyed by serial.
func (w *wire) replies(in io.Reader, want []uint32) (map[uint32]*dbus.Message, error) {
	got := make(map[uint32]*dbus.Message, len(want))
	for _, s := range want {
		got[s] = nil
	}
	for left, unasked := len(want), 0; left > 0; {
		m, err := dbus.DecodeMessage(in)
		if err != nil {
			return nil, err
		}
		s, _ := m.Headers[dbus.FieldReplySerial].Value().(uint32)
		if r, asked := got[s]; !asked || r != nil || (m.Type != dbus.TypeMethodReply && m.Type != dbus.TypeError) {
			if unasked++; unasked > maxUnasked {
				return nil, errors.New("too many messages that answer nothing asked")
			}
			continue
		}
		got[s] = m
		left--
	}
	return got, nil
}

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
