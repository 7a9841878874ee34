//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A call runs in a cgroup (v2) of its own where the user may make one
// without privilege: the second stage is started in it (clone3's
// CLONE_INTO_CGROUP), so every process of the call is in it from its
// first instruction, and no process of the call can leave it (its
// cgroup.procs files are outside the write set). When the call ends,
// cgroup.kill kills everything in it at once (a fork bomb cannot outrun
// a loop of kill(2)), and it is removed. Where the parent of the
// launcher's cgroup enables the pids and memory controllers for its
// children, the call's also gets pids.max (jailTasks) and memory.max.
//
// Where may a user make one? In a cgroup whose cgroup.procs the user may
// write: the kernel's delegation (the directory and its cgroup.procs,
// cgroup.subtree_control and cgroup.threads given to the user). The
// launcher looks at two places: beside its own cgroup (in its parent,
// where controllers can be enabled, the launcher's own holding
// processes), then below its own (cgroup.kill only: a cgroup with
// processes cannot enable controllers for its children). On a systemd
// desktop the user's session processes are in scopes under
// user@UID.service, which systemd delegates to the user's manager: the
// launcher's parent (app.slice or the terminal's slice) is the user's
// own. Elsewhere (a container, a CI runner, a root-owned cgroup) there is
// none, and the launcher stays the sub-reaper of the call's processes and
// bounds them by RLIMIT_NPROC (tasks_linux.go).

// callCgroup is the call's own cgroup.
type callCgroup struct {
	dir     string
	fd      int // the directory, O_PATH: clone3's cgroup
	pidsMax bool
}

// cgroupPrefix names the call's cgroups: loopguard-PIDNS-PID-RANDOM,
// PIDNS the inode of the launcher's PID namespace (its pid means nothing
// in another).
const cgroupPrefix = "loopguard-"

// newCallCgroup makes the call's cgroup; nil, nil where the user may make
// none. An error is a cgroup the user may make that could not be set up:
// the call is not run.
func newCallCgroup() (*callCgroup, error) {
	mnt, own, ok := ownCgroup()
	if !ok {
		return nil, nil
	}
	parent := ""
	if own != mnt && writable(filepath.Dir(own)) {
		parent = filepath.Dir(own)
	} else if writable(own) {
		parent = own
	}
	if parent == "" {
		return nil, nil
	}
	removeStale(parent)
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, cgroupPrefix+pidNS()+"-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(r[:]))
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the call's cgroup %s: %w", dir, err)
	}
	cg := &callCgroup{dir: dir, fd: -1}
	fail := func(err error) (*callCgroup, error) {
		cg.remove()
		return nil, fmt.Errorf("setting up the call's cgroup %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pids.max")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatUint(jailTasks(), 10)), 0); err != nil {
			return fail(err)
		}
		cg.pidsMax = true
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.max")); err == nil {
		if m := memoryMax(); m > 0 {
			if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatUint(m, 10)), 0); err != nil {
				return fail(err)
			}
		}
		// No swap past it: the bound is what the call holds.
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return fail(fmt.Errorf("no cgroup.kill (Linux 5.14): %w", err))
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	cg.fd = fd
	return cg, nil
}

// ownCgroup is the path of this process's cgroup v2 directory, and where
// the unified hierarchy is mounted whole (not a cgroup namespace's view
// of another's).
func ownCgroup() (mnt, own string, ok bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", false
	}
	rel := ""
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = r, true
		}
	}
	if !found || !strings.HasPrefix(rel, "/") || strings.Contains(rel, "(deleted)") {
		return "", "", false // no unified hierarchy, or a removed cgroup
	}
	if mnt = cgroup2Mount(); mnt == "" {
		return "", "", false
	}
	return mnt, filepath.Join(mnt, rel), true
}

// cgroup2Mount is where this mount namespace has the unified hierarchy
// mounted from its root: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
// hybrid system.
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fs := strings.Fields(pre)
		if len(fs) >= 5 && fs[3] == "/" {
			return unescapeMount(fs[4])
		}
	}
	return ""
}

// writable reports whether this user may create a cgroup in dir and move
// its own processes into it.
func writable(dir string) bool {
	return unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK, unix.AT_EACCESS) == nil &&
		unix.Faccessat(unix.AT_FDCWD, filepath.Join(dir, "cgroup.procs"), unix.W_OK, unix.AT_EACCESS) == nil
}

// memoryMax is the call's memory.max: three quarters of the machine's
// memory, so that what a call holds leaves the rest usable.
func memoryMax() uint64 {
	v, ok := procField("/proc/meminfo", "MemTotal")
	kb, err := strconv.ParseUint(strings.TrimSuffix(v, " kB"), 10, 64)
	if !ok || err != nil {
		return 0
	}
	return kb * 1024 / 4 * 3
}

// kill kills every process in the cgroup and waits, a second at most,
// until it holds none.
func (cg *callCgroup) kill() error {
	if err := os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(cg.dir, "cgroup.events"))
		if err != nil || bytes.Contains(b, []byte("populated 0")) {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("processes left in the call's cgroup")
		}
		// Killed processes end once their parent (the launcher, as
		// their sub-reaper) has reaped them.
		reapNow()
		time.Sleep(time.Millisecond)
	}
}

// remove removes the cgroup (empty by then).
func (cg *callCgroup) remove() {
	if cg.fd >= 0 {
		_ = unix.Close(cg.fd)
		cg.fd = -1
	}
	_ = unix.Rmdir(cg.dir)
}

// removeStale kills and removes the cgroups of launches that ended
// without removing theirs (a launcher killed by SIGKILL): their
// launcher's pid is gone.
func removeStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	ns := pidNS()
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix+ns+"-")
		if !ok || !e.IsDir() {
			continue
		}
		p, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		_ = unix.Rmdir(dir) // fails while its processes are ending: a later launch removes it
	}
}

// pidNS is the inode of this process's PID namespace.
func pidNS() string {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return "0"
	}
	return strconv.FormatUint(st.Ino, 10)
}

// reapNow reaps every child that has ended, without waiting.
func reapNow() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
