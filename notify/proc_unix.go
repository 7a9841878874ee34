//go:build unix

package notify

import (
	"os/exec"
	"syscall"
)

// detach puts the command in its own process group, so that a kill reaches
// whatever it started, and on Linux has the kernel kill it if the hook
// dies first (the hook exits as soon as the human decides).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
