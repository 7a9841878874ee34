package doctor

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/internal/seccomptest"
)

// listenerAboveEnv makes the test binary, run as the launcher, install a
// seccomp filter with a listener first, as a container runtime's may
// (TestDoctorTellsOfNoBroker).
const listenerAboveEnv = "LG_DOCTOR_LISTENER_ABOVE"

// TestMain makes the test binary, run as loopguard, the launcher
// (`loopguard exec`, as the CLI's Main dispatches it): doctor's
// confinement check tries a launch through it (TestDoctorTriesTheLauncher).
func TestMain(m *testing.M) {
	// The launchers beside it are the same binary under their names.
	launch := func() {
		if len(os.Args) > 1 && os.Args[1] == confine.Subcommand {
			if os.Getenv(listenerAboveEnv) == "1" {
				seccomptest.ListenerAbove() // confine_linux_test.go
			}
			os.Exit(confine.Main(os.Args[2:], os.Stderr))
		}
		os.Stderr.WriteString("loopguard: this test binary runs only " + confine.Subcommand + "\n")
		os.Exit(1)
	}
	testscript.Main(m, map[string]func(){
		"loopguard":         launch,
		"loopguard-exec":    launch,
		"loopguard-confine": launch,
	})
}
