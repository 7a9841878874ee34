//go:build windows

package state

import (
	"errors"
	"testing"

	"github.com/loopguard/loopguard/fsx"
)

// On Windows the state directory is refused with the reason, so the hook
// denies every call instead of guessing.
func TestOpenRefusedOnWindows(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, fsx.ErrStateUnsupported) {
		t.Fatalf("Open = %v; want %v", err, fsx.ErrStateUnsupported)
	}
}
