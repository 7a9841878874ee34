package fsx

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInherited closes every descriptor above the standard three that
// this process was given by its parent: those without close-on-exec,
// since every descriptor Go's runtime and packages open has it, and one
// that lacked it when the process was exec'd still lacks it. A process
// that outlives its parent's call (the key's holder, the project's undo
// watcher) calls it first: a pipe it kept open would keep whoever reads
// that pipe's other end (the agent's shell, a hook's runner) waiting for
// an end of file until it exits, minutes later. It returns how many it
// closed.
func CloseInherited() (int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	closed := 0
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 || fd == int(d.Fd()) {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		if unix.Close(fd) == nil {
			closed++
		}
	}
	return closed, nil
}
