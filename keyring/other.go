//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package keyring

import (
	"context"
	"errors"
	"fmt"
)

// checkPlatform: macOS Keychain and Windows Credential Manager need no bus.
func checkPlatform(context.Context) error { return nil }

// quickGet: there is no shorter way than go-keyring's here.
func quickGet(context.Context) (string, bool, error) { return "", false, nil }

// quickGetMany: nor for several items.
func quickGetMany(context.Context, ...string) ([]string, bool, error) { return nil, false, nil }

// probePlatform reads the key's item and counts "not found" as reachable.
func probePlatform(_ context.Context, b backend) error {
	_, err := b.Get(Service, Account)
	if err == nil || isNotFound(err) {
		return nil
	}
	return err
}

// classify turns an error from go-keyring into an *Error.
func classify(op string, err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return newError(op, ErrTimeout, fmt.Errorf("%w: %w", ErrTimeout, err), "")
	}
	return newError(op, ErrUnavailable, fmt.Errorf("%w: %w", ErrUnavailable, err), "")
}
