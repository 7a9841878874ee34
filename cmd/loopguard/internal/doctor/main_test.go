package doctor

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/loopguard/loopguard/confine"
)

// TestMain makes the test binary, run as loopguard, the launcher
// (`loopguard exec`, as the CLI's Main dispatches it): doctor's
// confinement check tries a launch through it (TestDoctorTriesTheLauncher).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"loopguard": func() {
			if len(os.Args) > 1 && os.Args[1] == confine.Subcommand {
				os.Exit(confine.Main(os.Args[2:], os.Stderr))
			}
			os.Stderr.WriteString("loopguard: this test binary runs only " + confine.Subcommand + "\n")
			os.Exit(1)
		},
	})
}
