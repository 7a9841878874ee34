//go:build !unix

package hookmain

import "errors"

func sysExec(string, []string, []string) error {
	return errors.New("replacing the process is not supported on this system: register `loopguard hook`")
}
