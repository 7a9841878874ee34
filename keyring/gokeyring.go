package keyring

import (
	"errors"

	gokeyring "github.com/zalando/go-keyring"
)

// goKeyring is the real backend.
type goKeyring struct{}

func (goKeyring) Get(service, user string) (string, error) { return gokeyring.Get(service, user) }
func (goKeyring) Set(service, user, password string) error {
	return gokeyring.Set(service, user, password)
}
func (goKeyring) Delete(service, user string) error { return gokeyring.Delete(service, user) }

func isNotFound(err error) bool { return errors.Is(err, gokeyring.ErrNotFound) }

// UseMock replaces the OS keyring with go-keyring's in-memory mock for the
// rest of the process, and skips the session bus check. For tests only:
// other packages' tests call it (in TestMain, or before the first keyring
// call) to run without a real keyring. It must not run concurrently with
// other calls of this package.
func UseMock() {
	mu.Lock()
	defer mu.Unlock()
	gokeyring.MockInit()
	store = goKeyring{}
	mocked = true
}

// UseMockWithError is UseMock with a mock whose every call fails with err,
// which this package reports as ErrUnavailable (or ErrNoKey for go-keyring's
// ErrNotFound). For tests only: it lets a caller's test show that a keyring
// failure denies.
func UseMockWithError(err error) {
	mu.Lock()
	defer mu.Unlock()
	gokeyring.MockInitWithError(err)
	store = goKeyring{}
	mocked = true
}
