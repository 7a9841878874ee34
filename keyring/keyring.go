// Package keyring keeps loopguard's master key in the OS keyring (macOS
// Keychain, Windows Credential Manager, the Secret Service on Linux and the
// BSDs) through github.com/zalando/go-keyring.
//
// The key is 32 random bytes, stored as one item (service "loopguard",
// user "master-key") in strict standard base64. There is no fallback to an
// environment variable or a plain file: when the keyring cannot be used, every
// call fails with a typed *Error whose Hint tells a person what to do.
//
// Load, the hook's one keyring call on an allow, first tries a shorter way on
// Linux: one private D-Bus connection and three Secret Service calls for the
// item go-keyring would read (see quickGet); whenever that way does not apply
// (no "login" collection, a locked item, no item) it goes through go-keyring
// as every other call does.
//
// Every call is bounded: it uses the context's deadline, or DefaultTimeout
// when the context has none, and a keyring that does not answer in time (a
// desktop unlock prompt nobody sees, a wedged daemon) yields ErrTimeout. On
// Linux the D-Bus session bus is checked before go-keyring is called, because
// without DBUS_SESSION_BUS_ADDRESS godbus would try to autolaunch a bus with
// dbus-launch.
//
// Beside the key, one more item per state directory holds its anchor
// (anchor.go): a short record package audit makes and checks, so that a
// removed, replaced or rolled-back state directory is seen from outside it.
// LoadWithAnchor reads both in the hook's one keyring read.
//
// The key never appears in an error, a hint or anything else this package
// returns apart from Load's result.
//
// What go-keyring v0.2.8 does with gnome-keyring 42 (Debian 12), measured by
// the tests in keyring_real_test.go and nobus_test.go:
//   - With DBUS_SESSION_BUS_ADDRESS unset, godbus runs dbus-launch to start
//     a bus. This package refuses before that, in well under a millisecond.
//   - A daemon started by D-Bus activation (or --start) in a fresh HOME has
//     no "login" collection and no default alias. go-keyring neither creates
//     one nor prompts: every call fails at once ("failed to unlock correct
//     collection"), reported as ErrUnavailable.
//   - `gnome-keyring-daemon --unlock` with a password on stdin creates the
//     "login" keyring with that password and unlocks it; --replace does the
//     same for a daemon already running.
//   - A locked collection: go-keyring asks the service to unlock it, which
//     shows a prompt. With no display the prompt fails and go-keyring returns
//     "failed to unlock" in a few milliseconds (ErrUnavailable); on a
//     desktop it waits for the person without limit, which the deadline
//     turns into ErrTimeout.
//   - A client that calls the service before the daemon owns
//     org.freedesktop.secrets makes the bus activate a second daemon, not
//     unlocked, with the bus's own environment (HOME): scripts/with-keyring
//     waits for the owner first.
//   - Two processes that Create at the same moment both find no key; the
//     Secret Service replaces an item with equal attributes, so one item
//     remains, holding the key of the last writer. A key is never replaced
//     by Create once a Load could have seen it.
package keyring

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"
)

const (
	// Service is the Secret Service attribute "service" of the key's item
	// (the service name on macOS and Windows).
	Service = "loopguard"
	// Account is the item's user name (the "username" attribute on Linux).
	Account = "master-key"
	// KeySize is the length of the master key in bytes.
	KeySize = 32
	// DefaultTimeout bounds a call whose context has no deadline: the
	// hook's and the wrappers' reads, which run on every tool call.
	DefaultTimeout = 2 * time.Second
	// CommandTimeout bounds a call made by a command a human runs (init,
	// approve, grant, key rotate, uninstall): long enough for a desktop
	// unlock prompt, or a daemon on a loaded machine writing its file,
	// which a CI run once found taking more than DefaultTimeout.
	CommandTimeout = 30 * time.Second
)

// maxStoredLen bounds what is decoded from the keyring: a valid key is 44
// base64 characters.
const maxStoredLen = 4096

// maxDuplicates bounds how many items Delete removes when a foreign tool
// stored more than one item under the same attributes.
const maxDuplicates = 16

// The error kinds callers branch on with errors.Is. Every error this package
// returns is an *Error whose Kind is one of these.
var (
	// ErrNoKey: the keyring answered, and holds no loopguard key.
	ErrNoKey = errors.New("no loopguard key in the OS keyring")
	// ErrUnavailable: the keyring cannot be used: no session bus, no Secret
	// Service, the collection is locked or missing, or a D-Bus error.
	ErrUnavailable = errors.New("the OS keyring is unavailable")
	// ErrTimeout: the keyring did not answer before the deadline.
	ErrTimeout = errors.New("the OS keyring did not answer in time")
	// ErrCorrupt: the stored item is not a valid loopguard key.
	ErrCorrupt = errors.New("the stored loopguard key is not valid")
)

// Error is the error every function of this package returns.
type Error struct {
	Op   string // "load", "create", "rotate", "delete" or "probe"
	Kind error  // ErrNoKey, ErrUnavailable, ErrTimeout or ErrCorrupt
	Err  error  // the underlying cause, if any; never contains the key

	hint string
}

func (e *Error) Error() string {
	msg := "keyring " + e.Op + ": "
	if e.Err != nil {
		return msg + e.Err.Error()
	}
	return msg + e.Kind.Error()
}

// Unwrap returns the underlying cause; errors.Is also matches Kind (see Is).
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.Kind }

// Hint returns one or more lines, separated by "\n", that tell a person what
// to do about the error. It never contains the key.
func (e *Error) Hint() string {
	if e.hint != "" {
		return e.hint
	}
	switch e.Kind {
	case ErrNoKey:
		return "run `loopguard init` in your own terminal to create the key"
	case ErrTimeout:
		return "the keyring may be waiting for an unlock prompt: unlock it (log in to the desktop, or open Passwords and Keys), then retry\n" +
			"run `loopguard doctor` to check the keyring"
	case ErrCorrupt:
		return "the keyring item service=" + Service + " username=" + Account + " was not written by loopguard or was damaged\n" +
			"run `loopguard key rotate` to replace it (every existing approval becomes invalid)"
	default:
		return "run `loopguard doctor` to check the keyring"
	}
}

func newError(op string, kind error, err error, hint string) *Error {
	return &Error{Op: op, Kind: kind, Err: err, hint: hint}
}

// backend is the subset of go-keyring this package uses; tests replace it.
type backend interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

var (
	// mu serialises every backend call (go-keyring's mock is not safe for
	// concurrent use, and Create's read-then-write must not interleave
	// within one process). A call stuck in the backend keeps mu; later calls
	// then time out too, which is the truth: the keyring is not answering.
	mu sync.Mutex
	// store is the backend; mocked makes the session bus check a no-op.
	store  backend = goKeyring{}
	mocked bool
)

// run runs fn against the backend in a goroutine, bounded by ctx (or by
// DefaultTimeout when ctx has no deadline). The session bus is checked first.
func run(ctx context.Context, op string, fn func(b backend) error) error {
	return runQuick(ctx, op, nil, fn)
}

// runQuick is run with a short way tried first (not with the mock): when
// quick reports done, or fails, fn is not called.
func runQuick(ctx context.Context, op string, quick func(ctx context.Context) (done bool, err error), fn func(b backend) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	done := make(chan error, 1)
	go func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			done <- ctx.Err()
			return
		}
		if !mocked && quick != nil {
			if ok, err := quick(ctx); ok || err != nil {
				done <- err
				return
			}
		}
		if !mocked {
			if err := checkPlatform(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- fn(store)
	}()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		var ke *Error
		if errors.As(err, &ke) {
			ke.Op = op
			return ke
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return ctxError(op, err)
		}
		return classify(op, err)
	case <-ctx.Done():
		return ctxError(op, ctx.Err())
	}
}

func ctxError(op string, err error) *Error {
	if errors.Is(err, context.Canceled) {
		return newError(op, ErrTimeout, fmt.Errorf("%w: call canceled", ErrTimeout), "")
	}
	return newError(op, ErrTimeout, fmt.Errorf("%w: %w", ErrTimeout, err), "")
}

// Load returns the master key. It fails with ErrNoKey when the keyring holds
// none, and with ErrCorrupt when the stored item is not a valid key.
func Load(ctx context.Context) ([]byte, error) {
	var key []byte
	quick := func(ctx context.Context) (bool, error) {
		s, ok, err := quickGet(ctx)
		if !ok || err != nil {
			return false, err
		}
		key, err = decode(s)
		return true, err
	}
	err := runQuick(ctx, "load", quick, func(b backend) error {
		k, err := get(b)
		key = k
		return err
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}

// Create stores a fresh random key if the keyring holds none, and reports
// whether it did. It never replaces a key: an existing valid key gives
// (false, nil), an existing invalid one ErrCorrupt.
func Create(ctx context.Context) (created bool, err error) {
	err = run(ctx, "create", func(b backend) error {
		_, err := get(b)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrNoKey) {
			return err
		}
		// Whether ours is what is stored now tells whether another
		// process's Create won a race between our read and write.
		created, err = writeFresh(b)
		return err
	})
	if err != nil {
		return false, err
	}
	return created, nil
}

// Rotate replaces the key with a fresh random one. It fails with ErrNoKey when
// there is no key to replace; a corrupt item is replaced.
func Rotate(ctx context.Context) error {
	return run(ctx, "rotate", func(b backend) error {
		if _, err := get(b); err != nil && !errors.Is(err, ErrCorrupt) {
			return err
		}
		same, err := writeFresh(b)
		if err != nil {
			return err
		}
		if !same {
			return newError("", ErrUnavailable, errors.New("the key read back after rotation differs from the one written (another process changed it)"),
				"another loopguard process changed the key at the same time: run `loopguard key rotate` again")
		}
		return nil
	})
}

// writeFresh stores a fresh random key and reads it back, which proves the
// item is retrievable; same reports whether the stored key is the one just
// written (false: another process wrote in between).
func writeFresh(b backend) (same bool, err error) {
	key, encoded, err := fresh()
	if err != nil {
		return false, err
	}
	defer clear(key)
	if err := b.Set(Service, Account, encoded); err != nil {
		return false, err
	}
	got, err := get(b)
	if err != nil {
		return false, err
	}
	defer clear(got)
	return bytes.Equal(got, key), nil
}

// Delete removes the key (and any duplicate items under the same service and
// user). It fails with ErrNoKey when there is none.
func Delete(ctx context.Context) error {
	return run(ctx, "delete", func(b backend) error {
		for i := 0; i < maxDuplicates; i++ {
			err := b.Delete(Service, Account)
			if isNotFound(err) {
				if i == 0 {
					return newError("", ErrNoKey, nil, "there is no key to delete")
				}
				return nil
			}
			if err != nil {
				return err
			}
		}
		return newError("", ErrUnavailable, fmt.Errorf("more than %d items named service=%s username=%s: some remain", maxDuplicates, Service, Account),
			"remove them with: secret-tool clear service "+Service+" username "+Account)
	})
}

// Probe checks that the keyring can be reached, without reading the key: on
// Linux, that the session bus is there, a Secret Service answers on it, and
// the collection go-keyring uses exists and is unlocked. It is for
// `loopguard doctor`.
func Probe(ctx context.Context) error {
	return run(ctx, "probe", func(b backend) error {
		if mocked {
			return nil
		}
		return probePlatform(ctx, b)
	})
}

// get reads and decodes the stored key.
func get(b backend) ([]byte, error) {
	s, err := b.Get(Service, Account)
	if isNotFound(err) {
		return nil, newError("", ErrNoKey, nil, "")
	}
	if err != nil {
		return nil, err
	}
	return decode(s)
}

// decode parses a stored value: canonical strict standard base64 of exactly
// KeySize bytes. The value is never echoed into the error.
func decode(s string) ([]byte, error) {
	if len(s) > maxStoredLen {
		return nil, newError("", ErrCorrupt, fmt.Errorf("%w: stored value is %d bytes long", ErrCorrupt, len(s)), "")
	}
	enc := base64.StdEncoding.Strict()
	key, err := enc.DecodeString(s)
	if err != nil {
		return nil, newError("", ErrCorrupt, fmt.Errorf("%w: stored value is not base64", ErrCorrupt), "")
	}
	// The decoder skips '\r' and '\n'; the canonical re-encoding rejects
	// them and any other second spelling of the same bytes.
	if len(key) != KeySize || enc.EncodeToString(key) != s {
		clear(key)
		if len(key) != KeySize {
			return nil, newError("", ErrCorrupt, fmt.Errorf("%w: stored key is %d bytes, want %d", ErrCorrupt, len(key), KeySize), "")
		}
		return nil, newError("", ErrCorrupt, fmt.Errorf("%w: stored value is not canonical base64", ErrCorrupt), "")
	}
	return key, nil
}

// fresh returns a new random key and its stored encoding.
func fresh() ([]byte, string, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, "", newError("", ErrUnavailable, fmt.Errorf("failed to read random bytes: %w", err), "the operating system's random source failed; nothing was stored")
	}
	return key, base64.StdEncoding.EncodeToString(key), nil
}
