//go:build !linux

package keyring

import (
	"context"
	"fmt"
	"os"
	"time"
)

// LoadHeld: the key's holder runs on Linux only; elsewhere every read is
// the keyring's.
func LoadHeld(context.Context, string) ([]byte, string, bool) { return nil, "", false }

// StartHolder does nothing here.
func StartHolder(string, string) error { return nil }

// StopHolder does nothing here: no holder runs.
func StopHolder(context.Context, string) error { return nil }

// HoldMain is unsupported here.
func HoldMain([]string) int {
	fmt.Fprintln(os.Stderr, "loopguard: "+HolderSubcommand+" runs on Linux only")
	return 2
}

// HolderFailure: no holder runs here, none fails.
func HolderFailure(string) (string, time.Time, bool) { return "", time.Time{}, false }
