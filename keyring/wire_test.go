//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	dbus "github.com/godbus/dbus/v5"
)

// TestWireCalls: the calls quickGetMany writes ahead decode as D-Bus
// method calls, numbered 1, 2, 3 in the order written, each with its
// destination, path, member and body.
func TestWireCalls(t *testing.T) {
	var w wire
	w.call(busName, busPath, busName, "Hello")
	w.call(ssName, ssLoginPath, ssCollection, "SearchItems", map[string]string{"username": Account, "service": Service})
	w.call(ssName, ssPath, ssService, "OpenSession", "plain", dbus.MakeVariant(""))
	if w.err != nil {
		t.Fatal(w.err)
	}
	members := []string{"Hello", "SearchItems", "OpenSession"}
	for i, want := range members {
		m, err := dbus.DecodeMessage(&w.out)
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if m.Serial() != uint32(i+1) || m.Type != dbus.TypeMethodCall || m.Headers[dbus.FieldMember].Value() != want {
			t.Fatalf("call %d: %s", i+1, m)
		}
	}
	var attrs map[string]string
	w.out.Reset()
	w.call(ssName, ssLoginPath, ssCollection, "SearchItems", map[string]string{"username": "u", "service": Service})
	m, err := dbus.DecodeMessage(&w.out)
	if err != nil || dbus.Store(m.Body, &attrs) != nil || attrs["username"] != "u" || m.Serial() != 4 {
		t.Fatalf("a fourth call: %v %v", m, err)
	}
	// An invalid call is not written, and the error is kept.
	w.out.Reset()
	w.call(ssName, "not a path", ssService, "OpenSession")
	if w.err == nil || w.out.Len() != 0 {
		t.Fatalf("an invalid path: err %v, %d bytes written", w.err, w.out.Len())
	}
}

// reply encodes a message answering serial (a method return, an error, or
// with serial 0 a signal) with its own serial n.
func reply(t *testing.T, typ dbus.Type, serial, n uint32, body ...any) []byte {
	t.Helper()
	m := &dbus.Message{Type: typ, Headers: map[dbus.HeaderField]dbus.Variant{}, Body: body}
	switch typ {
	case dbus.TypeSignal:
		m.Headers[dbus.FieldPath] = dbus.MakeVariant(dbus.ObjectPath(busPath))
		m.Headers[dbus.FieldInterface] = dbus.MakeVariant(busName)
		m.Headers[dbus.FieldMember] = dbus.MakeVariant("NameAcquired")
	case dbus.TypeError:
		m.Headers[dbus.FieldErrorName] = dbus.MakeVariant("org.freedesktop.DBus.Error.Failed")
		m.Headers[dbus.FieldReplySerial] = dbus.MakeVariant(serial)
	default:
		m.Headers[dbus.FieldReplySerial] = dbus.MakeVariant(serial)
	}
	if len(body) > 0 {
		m.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(body...))
	}
	var b bytes.Buffer
	if err := m.EncodeTo(&b, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b.Bytes()[8:], n)
	return b.Bytes()
}

// TestWireReplies: replies are matched by serial in any order, an error
// reply is a reply, and what answers nothing asked (a signal, a reply to
// another serial, a second reply to one already answered) is passed over,
// up to maxUnasked; past that, or on a stream cut short, it fails.
func TestWireReplies(t *testing.T) {
	var w wire
	var in bytes.Buffer
	in.Write(reply(t, dbus.TypeSignal, 0, 1, ":1.7"))
	in.Write(reply(t, dbus.TypeMethodReply, 3, 2, "session"))
	in.Write(reply(t, dbus.TypeMethodReply, 9, 3, "not asked"))
	in.Write(reply(t, dbus.TypeError, 1, 4, "no"))
	in.Write(reply(t, dbus.TypeMethodReply, 3, 5, "again"))
	in.Write(reply(t, dbus.TypeMethodReply, 2, 6, ":1.7"))
	got, err := w.replies(&in, []uint32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Type != dbus.TypeError || got[2].Type != dbus.TypeMethodReply || got[3].Body[0] != "session" {
		t.Fatalf("replies: %v", got)
	}
	if in.Len() != 0 {
		t.Fatalf("%d bytes left unread", in.Len())
	}

	// The control for the bound: maxUnasked signals, then the reply.
	in.Reset()
	for i := range maxUnasked {
		in.Write(reply(t, dbus.TypeSignal, 0, uint32(i+1), ":1.7"))
	}
	in.Write(reply(t, dbus.TypeMethodReply, 1, 99, "ok"))
	if _, err := w.replies(&in, []uint32{1}); err != nil {
		t.Fatalf("%d signals, then the reply: %v", maxUnasked, err)
	}
	in.Reset()
	for i := range maxUnasked + 1 {
		in.Write(reply(t, dbus.TypeSignal, 0, uint32(i+1), ":1.7"))
	}
	in.Write(reply(t, dbus.TypeMethodReply, 1, 99, "ok"))
	if _, err := w.replies(&in, []uint32{1}); err == nil || !strings.Contains(err.Error(), "too many") {
		t.Fatalf("%d signals, then the reply: %v", maxUnasked+1, err)
	}

	whole := reply(t, dbus.TypeMethodReply, 1, 1, "ok")
	if _, err := w.replies(bytes.NewReader(whole[:len(whole)-1]), []uint32{1}); err == nil {
		t.Fatal("a reply cut short was read as whole")
	}
}
