package keyring

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	gokeyring "github.com/zalando/go-keyring"
)

// fakeStore is an in-memory backend whose items are a list per (service,
// user), so duplicates can be modelled, with hooks to fail, block or race.
type fakeStore struct {
	mu       sync.Mutex
	items    map[string][]string
	gets     int
	sets     int
	err      error         // returned by every call when set
	block    chan struct{} // every call waits for it when set
	afterSet func(f *fakeStore)
}

func newFake() *fakeStore { return &fakeStore{items: map[string][]string{}} }

func (f *fakeStore) wait() error {
	if f.block != nil {
		<-f.block
	}
	return f.err
}

func (f *fakeStore) Get(service, user string) (string, error) {
	if err := f.wait(); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	v := f.items[service+"/"+user]
	if len(v) == 0 {
		return "", gokeyring.ErrNotFound
	}
	return v[0], nil
}

func (f *fakeStore) Set(service, user, password string) error {
	if err := f.wait(); err != nil {
		return err
	}
	f.mu.Lock()
	f.sets++
	k := service + "/" + user
	if len(f.items[k]) == 0 {
		f.items[k] = []string{password}
	} else {
		f.items[k][0] = password // the Secret Service replaces on equal attributes
	}
	hook := f.afterSet
	f.mu.Unlock()
	if hook != nil {
		hook(f)
	}
	return nil
}

func (f *fakeStore) Delete(service, user string) error {
	if err := f.wait(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := service + "/" + user
	if len(f.items[k]) == 0 {
		return gokeyring.ErrNotFound
	}
	f.items[k] = f.items[k][1:]
	return nil
}

func (f *fakeStore) put(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items[Service+"/"+Account] = append(f.items[Service+"/"+Account], v)
}

func (f *fakeStore) stored() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.items[Service+"/"+Account]...)
}

// useFake installs f as the backend (no bus check) for one test.
func useFake(t *testing.T, f *fakeStore) {
	t.Helper()
	mu.Lock()
	oldStore, oldMocked := store, mocked
	store, mocked = f, true
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		store, mocked = oldStore, oldMocked
		mu.Unlock()
	})
}

func wantKind(t *testing.T, err, kind error, op string) *Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want kind %v", err, kind)
	}
	var ke *Error
	if !errors.As(err, &ke) {
		t.Fatalf("err %T is not *Error", err)
	}
	if ke.Op != op {
		t.Errorf("Op = %q, want %q", ke.Op, op)
	}
	for _, other := range []error{ErrNoKey, ErrUnavailable, ErrTimeout, ErrCorrupt} {
		if other != kind && errors.Is(err, other) {
			t.Errorf("err %v also matches %v", err, other)
		}
	}
	if strings.TrimSpace(ke.Hint()) == "" {
		t.Errorf("empty hint for %v", err)
	}
	if !strings.HasPrefix(err.Error(), "keyring "+op+": ") {
		t.Errorf("message %q lacks the op prefix", err)
	}
	return ke
}

func TestLifecycle(t *testing.T) {
	f := newFake()
	useFake(t, f)
	ctx := context.Background()

	_, err := Load(ctx)
	wantKind(t, err, ErrNoKey, "load")
	wantKind(t, Rotate(ctx), ErrNoKey, "rotate")
	wantKind(t, Delete(ctx), ErrNoKey, "delete")

	created, err := Create(ctx)
	if err != nil || !created {
		t.Fatalf("first Create = %v, %v; want true, nil", created, err)
	}
	k1, err := Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != KeySize {
		t.Fatalf("key is %d bytes", len(k1))
	}
	if got := f.stored(); len(got) != 1 || got[0] != base64.StdEncoding.EncodeToString(k1) {
		t.Fatalf("stored %d items, not the std base64 of the key", len(got))
	}

	created, err = Create(ctx)
	if err != nil || created {
		t.Fatalf("second Create = %v, %v; want false, nil", created, err)
	}
	k1b, err := Load(ctx)
	if err != nil || !bytes.Equal(k1, k1b) {
		t.Fatalf("key changed after second Create (err %v)", err)
	}

	if err := Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	k2, err := Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(k1, k2) || len(k2) != KeySize {
		t.Fatal("Rotate did not replace the key")
	}
	if n := len(f.stored()); n != 1 {
		t.Fatalf("%d items after rotate", n)
	}

	if err := Delete(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = Load(ctx)
	wantKind(t, err, ErrNoKey, "load")
}

func TestCreateKeysDiffer(t *testing.T) {
	// Two fresh keyrings get different keys: the key is random.
	seen := map[string]bool{}
	for range 8 {
		useFake(t, newFake())
		if _, err := Create(context.Background()); err != nil {
			t.Fatal(err)
		}
		k, err := Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(k)] {
			t.Fatal("two keyrings got the same key")
		}
		seen[string(k)] = true
	}
}

func TestCreateLosesRace(t *testing.T) {
	// Another process's Create writes between our write and our read-back:
	// one key remains (theirs) and we report that we did not create it.
	f := newFake()
	useFake(t, f)
	theirs := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, KeySize))
	f.afterSet = func(f *fakeStore) {
		f.afterSet = nil
		f.mu.Lock()
		f.items[Service+"/"+Account][0] = theirs
		f.mu.Unlock()
	}
	created, err := Create(context.Background())
	if err != nil || created {
		t.Fatalf("Create = %v, %v; want false, nil", created, err)
	}
	k, err := Load(context.Background())
	if err != nil || !bytes.Equal(k, bytes.Repeat([]byte{7}, KeySize)) {
		t.Fatalf("Load after lost race = %v", err)
	}
	// Control: without the racing writer, Create reports true.
	useFake(t, newFake())
	if created, err := Create(context.Background()); err != nil || !created {
		t.Fatalf("control Create = %v, %v", created, err)
	}
}

func TestRotateReadBackMismatch(t *testing.T) {
	f := newFake()
	useFake(t, f)
	if _, err := Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.afterSet = func(f *fakeStore) {
		f.mu.Lock()
		f.items[Service+"/"+Account][0] = base64.StdEncoding.EncodeToString(make([]byte, KeySize))
		f.mu.Unlock()
	}
	wantKind(t, Rotate(context.Background()), ErrUnavailable, "rotate")
}

// corruptValues are stored values that are not a valid key.
func corruptValues() map[string]string {
	valid := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA5}, KeySize))
	return map[string]string{
		"empty":            "",
		"short":            base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, KeySize-1)),
		"long":             base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, KeySize+1)),
		"raw bytes":        string(bytes.Repeat([]byte{1}, KeySize)),
		"trailing newline": valid + "\n",
		"inner newline":    valid[:20] + "\n" + valid[20:],
		"crlf":             valid[:20] + "\r\n" + valid[20:],
		"no padding":       strings.TrimRight(valid, "="),
		"url alphabet":     base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xFB}, KeySize)),
		"space":            " " + valid,
		"padding bits":     valid[:42] + "R=", // 'R' has low bits set where the canonical form has zero
		"huge":             strings.Repeat("A", maxStoredLen+4),
		"hex":              strings.Repeat("ab", KeySize),
	}
}

func TestCorruptItem(t *testing.T) {
	valid := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xA5}, KeySize))
	if k, err := decode(valid); err != nil || len(k) != KeySize {
		t.Fatalf("control: valid value rejected: %v", err)
	}
	for name, v := range corruptValues() {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.put(v)
			useFake(t, f)
			ctx := context.Background()

			_, err := Load(ctx)
			ke := wantKind(t, err, ErrCorrupt, "load")
			if len(v) >= 8 && (strings.Contains(ke.Error(), v[:8]) || strings.Contains(ke.Hint(), v[:8])) {
				t.Fatalf("error or hint shows the stored value: %q / %q", ke.Error(), ke.Hint())
			}

			// Create never replaces an item, not even a corrupt one.
			created, err := Create(ctx)
			wantKind(t, err, ErrCorrupt, "create")
			if created || f.stored()[0] != v {
				t.Fatal("Create replaced a corrupt item")
			}

			// Rotate is the way out.
			if err := Rotate(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(ctx); err != nil {
				t.Fatalf("Load after Rotate: %v", err)
			}
		})
	}
}

func TestDeleteRemovesDuplicates(t *testing.T) {
	f := newFake()
	for range 3 {
		f.put(base64.StdEncoding.EncodeToString(make([]byte, KeySize)))
	}
	useFake(t, f)
	if err := Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.stored()); n != 0 {
		t.Fatalf("%d items left", n)
	}

	f = newFake()
	for range maxDuplicates + 1 {
		f.put("x")
	}
	useFake(t, f)
	wantKind(t, Delete(context.Background()), ErrUnavailable, "delete")
}

func TestBackendErrorIsUnavailable(t *testing.T) {
	f := newFake()
	f.err = errors.New("org.freedesktop.DBus.Error.AccessDenied: nope")
	useFake(t, f)
	_, err := Load(context.Background())
	wantKind(t, err, ErrUnavailable, "load")
	_, err = Create(context.Background())
	wantKind(t, err, ErrUnavailable, "create")
	wantKind(t, Rotate(context.Background()), ErrUnavailable, "rotate")
	wantKind(t, Delete(context.Background()), ErrUnavailable, "delete")
}

// blockedFake returns a fake whose calls hang until the test ends; the test's
// cleanup releases them and waits until the package lock is free again.
func blockedFake(t *testing.T) *fakeStore {
	f := newFake()
	f.block = make(chan struct{})
	useFake(t, f)
	t.Cleanup(func() {
		close(f.block)
		// Wait until the released calls have finished and let go of mu.
		func() {
			mu.Lock()
			defer mu.Unlock()
		}()
	})
	return f
}

func TestTimeout(t *testing.T) {
	blockedFake(t)
	// start before the deadline is set: on a loaded machine the gap between
	// the two would otherwise make Load look early.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Load(ctx)
	el := time.Since(start)
	wantKind(t, err, ErrTimeout, "load")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout error does not wrap context.DeadlineExceeded: %v", err)
	}
	if el < 90*time.Millisecond || el > time.Second {
		t.Fatalf("Load returned after %v, want about 100ms", el)
	}
	// A later call waits behind the hung one, and times out too.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = Create(ctx2)
	wantKind(t, err, ErrTimeout, "create")
}

func TestDefaultTimeout(t *testing.T) {
	blockedFake(t)
	start := time.Now()
	err := Delete(context.Background())
	el := time.Since(start)
	wantKind(t, err, ErrTimeout, "delete")
	if el < DefaultTimeout-50*time.Millisecond || el > DefaultTimeout+time.Second {
		t.Fatalf("Delete without deadline returned after %v, want about %v", el, DefaultTimeout)
	}
}

func TestCanceledContextDoesNotCallBackend(t *testing.T) {
	f := newFake()
	useFake(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx)
	wantKind(t, err, ErrTimeout, "load")
	if f.gets != 0 {
		t.Fatal("backend called with a canceled context")
	}
	// Control: a live context reaches the backend.
	_, _ = Load(context.Background())
	if f.gets != 1 {
		t.Fatalf("backend called %d times", f.gets)
	}
}

func TestErrorShape(t *testing.T) {
	cause := errors.New("cause")
	for _, kind := range []error{ErrNoKey, ErrUnavailable, ErrTimeout, ErrCorrupt} {
		e := &Error{Op: "load", Kind: kind, Err: cause}
		if !errors.Is(e, kind) || !errors.Is(e, cause) {
			t.Errorf("%v: errors.Is fails for kind or cause", kind)
		}
		if errors.Unwrap(e) != cause {
			t.Errorf("%v: Unwrap does not return the cause", kind)
		}
		if e.Hint() == "" {
			t.Errorf("%v: no default hint", kind)
		}
		if got := (&Error{Op: "load", Kind: kind}).Error(); got != "keyring load: "+kind.Error() {
			t.Errorf("message without cause = %q", got)
		}
		if msg := kind.Error(); msg != strings.ToLower(msg[:1])+msg[1:] || strings.HasSuffix(msg, ".") {
			t.Errorf("kind message %q is not lowercase without final period", msg)
		}
	}
}

func TestParseBusAddress(t *testing.T) {
	ok := []struct {
		in   string
		want []busEndpoint
	}{
		{"unix:path=/run/user/1000/bus", []busEndpoint{{"unix", "/run/user/1000/bus"}}},
		{"unix:path=/tmp/dbus-x,guid=abc", []busEndpoint{{"unix", "/tmp/dbus-x"}}},
		{"unix:abstract=/tmp/dbus-Y,guid=1", []busEndpoint{{"unix", "@/tmp/dbus-Y"}}},
		{"unix:path=/tmp/a%20b", []busEndpoint{{"unix", "/tmp/a b"}}},
		{"tcp:host=127.0.0.1,port=4000", []busEndpoint{{"tcp", "127.0.0.1:4000"}}},
		{"autolaunch:;unix:path=/x", []busEndpoint{{"unix", "/x"}}},
		{"unix:path=/a;unix:abstract=b", []busEndpoint{{"unix", "/a"}, {"unix", "@b"}}},
	}
	for _, c := range ok {
		got, err := parseBusAddress(c.in)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v, %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: got %v, want %v", c.in, got, c.want)
			}
		}
	}
	for _, in := range []string{
		"", "autolaunch:", "autolaunch:scope=x", "unix:", "unix:dir=/tmp", "unix:tmpdir=/tmp",
		"unix:path=/a,abstract=b", "launchd:env=X", "nonsense", "tcp:host=x", ";;",
		"unix:path=" + strings.Repeat("a", maxBusAddressLen),
	} {
		if got, err := parseBusAddress(in); err == nil {
			t.Errorf("%q accepted: %v", in, got)
		}
	}
}
