//go:build lgtest

package testknobs

import (
	"os"
	"strings"
)

// Build is true in a test build (the lgtest tag), whatever the knobs.
const Build = true

// On reports whether the knob is named in LOOPGUARD_TEST_KNOBS.
func On(name string) bool {
	for _, k := range strings.Split(os.Getenv("LOOPGUARD_TEST_KNOBS"), ",") {
		if strings.TrimSpace(k) == name {
			return true
		}
	}
	return false
}
