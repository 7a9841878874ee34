package hookmain

import (
	"fmt"
	"os"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/register"
)

// execFull replaces this process with the full loopguard binary beside
// self, as `loopguard hook ARGS`, with the same environment and stdin
// unread. It returns only when that cannot be done; the hook then denies.
func execFull(self string, args []string, exec func(string, []string, []string) error) error {
	if self == "" {
		return fmt.Errorf("%w: this binary's path is unknown", ErrNoFullBinary)
	}
	full, _ := policy.Binaries(self)
	if exec == nil {
		exec = sysExec
	}
	argv := append([]string{full, register.Word}, args...)
	if err := exec(full, argv, os.Environ()); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNoFullBinary, full, err)
	}
	return nil
}
