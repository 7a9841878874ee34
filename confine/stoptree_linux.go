//go:build linux

package confine

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// stopTree stops every process the call left (SIGSTOP), walking the
// launcher's tree of descendants until a walk finds none it had not
// stopped, and then kills them all. It is what ends a fork bomb where
// the call has neither a PID namespace (whose end kills every process in
// it) nor a cgroup (cgroup.kill): killing the launcher's children round
// by round (reapRest) peels one generation of the bomb at a time while
// the deeper ones fork again. A stopped process forks no more (a fork
// with a signal pending is restarted after it), so each walk can only
// find fewer new processes, and the last finds none. The launcher is
// every orphan's sub-reaper, so no process of the call is outside its
// tree. pids are read from the kernel's lists of children just before
// they are signalled.
func stopTree() {
	stopped := map[int]bool{}
	for {
		found := false
		queue := children()
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if !stopped[pid] {
				stopped[pid] = true
				found = true
				signalProc(pid, unix.SIGSTOP)
			}
			queue = append(queue, childrenOf(pid)...)
		}
		if !found {
			break
		}
	}
	for pid := range stopped {
		signalProc(pid, unix.SIGKILL)
	}
}

// childrenOf lists the children of every thread of pid.
func childrenOf(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
