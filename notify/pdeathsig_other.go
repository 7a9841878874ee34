//go:build unix && !linux

package notify

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
