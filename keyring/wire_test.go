//go:build linux || freebsd || openbsd || netbsd || dragonfly

package keyring

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestQuickOpensSessionAfterSearches: gnome-keyring knows a caller only
// once its main loop has run the callback its filter queues for the
// caller's messages, and an OpenSession it reaches before that opens no
// session for anyone (quickGetMany's comment). So quickGetMany sends
// OpenSession only once the searches have answered, which proves the
// caller known. A fake bus holds the searches' answers until no call has
// come for 300 ms: an OpenSession that comes while they are held was sent
// without waiting for them (as quickGetMany did when it wrote it with the
// searches). The control: the read completes, with the values the fake
// gives.
func TestQuickOpensSessionAfterSearches(t *testing.T) {
	dir := t.TempDir()
	sock := dir + "/bus"
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv(busEnv, "unix:path="+sock)
	early := make(chan string, 1)
	go fakeKeyringBus(ln, early)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	vals, ok, err := quickGetMany(ctx, Account, "anchor")
	if err != nil || !ok || len(vals) != 2 || vals[0] != "secret-0" || vals[1] != "secret-1" {
		t.Fatalf("control: the read gave %q, %v, %v", vals, ok, err)
	}
	select {
	case why := <-early:
		t.Fatal(why)
	default:
	}
}

// fakeKeyringBus answers one connection as the bus and gnome-keyring
// would for quickGetMany, holding SearchItems' answers as
// TestQuickOpensSessionAfterSearches says; early gets what came too soon.
func fakeKeyringBus(ln net.Listener, early chan<- string) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	in := bufio.NewReader(c)
	if _, err := in.ReadString('\n'); err != nil { // AUTH EXTERNAL
		return
	}
	if _, err := io.WriteString(c, "OK 0123456789abcdef0123456789abcdef\r\n"); err != nil {
		return
	}
	if _, err := in.ReadString('\n'); err != nil { // BEGIN
		return
	}
	msgs := make(chan *dbus.Message)
	go func() {
		defer close(msgs)
		for {
			m, err := dbus.DecodeMessage(in)
			if err != nil {
				return
			}
			msgs <- m
		}
	}()
	var n uint32
	send := func(to *dbus.Message, body ...any) {
		n++
		r := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldReplySerial: dbus.MakeVariant(to.Serial())}, Body: body}
		if len(body) > 0 {
			r.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(body...))
		}
		var b bytes.Buffer
		if r.EncodeTo(&b, binary.LittleEndian) == nil {
			binary.LittleEndian.PutUint32(b.Bytes()[8:], n)
			_, _ = c.Write(b.Bytes())
		}
	}
	var held []*dbus.Message
	items := 0
	for {
		var m *dbus.Message
		var more bool
		select {
		case m, more = <-msgs:
			if !more {
				return
			}
		case <-time.After(300 * time.Millisecond):
			for _, s := range held {
				send(s, []dbus.ObjectPath{dbus.ObjectPath(ssLoginPath + "/" + strconv.Itoa(items))})
				items++
			}
			held = nil
			continue
		}
		switch m.Headers[dbus.FieldMember].Value() {
		case "Hello":
			send(m, ":1.1")
		case "SearchItems":
			held = append(held, m)
		case "OpenSession":
			if len(held) > 0 {
				select {
				case early <- "OpenSession came before the searches were answered":
				default:
				}
			}
			send(m, dbus.MakeVariant(""), dbus.ObjectPath("/org/freedesktop/secrets/session/s1"))
		case "GetSecrets":
			var paths []dbus.ObjectPath
			var session dbus.ObjectPath
			_ = dbus.Store(m.Body, &paths, &session)
			secs := map[dbus.ObjectPath]secret{}
			for i, p := range paths {
				secs[p] = secret{Session: session, Value: []byte("secret-" + strconv.Itoa(i))}
			}
			send(m, secs)
		}
	}
}
