package fsx

import "fmt"

// UnsupportedError is a guarantee loopguard cannot keep on this operating
// system. Where one is missing the guard denies and says why rather than
// guess (Windows today: platform_windows.go).
type UnsupportedError struct {
	What string // the guarantee: "symlink resolution", "the state directory"...
	Why  string // what this OS does that loopguard does not model
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is not supported on %s yet: %s", e.What, osName, e.Why)
}

// Unsupported lists every guarantee loopguard cannot keep on this OS (for
// doctor); it is empty where all of them hold (Linux, macOS).
func Unsupported() []*UnsupportedError { return unsupported }
