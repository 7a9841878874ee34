package fsx

import (
	"runtime"
	"strings"
	"testing"
)

// Linux and macOS keep every guarantee; Windows lists each one it breaks,
// and says which OS in the message.
func TestUnsupported(t *testing.T) {
	u := Unsupported()
	if runtime.GOOS != "windows" {
		if len(u) != 0 {
			t.Fatalf("Unsupported() on %s = %v; want none", runtime.GOOS, u)
		}
		return
	}
	if len(u) != 3 {
		t.Fatalf("Unsupported() = %v; want symlink resolution, the state directory and the sandbox", u)
	}
	for _, e := range u {
		if !strings.Contains(e.Error(), "not supported on Windows yet: ") {
			t.Errorf("%q does not say it is Windows", e.Error())
		}
	}
}
