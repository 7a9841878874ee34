//go:build unix

package review

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// TestMain puts loopguard on PATH: the pty tests run review as a human
// does, on a terminal of its own.
func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// TestBinariesBuiltAsThisOne: the loopguard and loopguard-hook the pty
// tests drive are built with -race when this test binary is (make test),
// so the race detector still watches the paths they run; without -race,
// they are built as make build builds them (no cgo).
func TestBinariesBuiltAsThisOne(t *testing.T) {
	want := map[string]string{"-race": "", "CGO_ENABLED": "0"}
	if clitest.Race {
		want = map[string]string{"-race": "true", "CGO_ENABLED": "1"}
	}
	for _, name := range []string{"loopguard", "loopguard-hook"} {
		bin, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range info.Settings {
			got[s.Key] = s.Value
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s (%s) built with %s=%q, want %q", name, bin, k, got[k], v)
			}
		}
	}
}
