//go:build linux

package confine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/loopguard/loopguard/fsx"
	"golang.org/x/sys/unix"
)

// isolate makes, in the second stage's own mount namespace, everything
// but the launch's write set read-only: the write set's trees (its
// private directories, and for a writing capability the project and a
// worktree's git directories) are cloned as they are, the whole tree is
// made read-only, the clones are put back on their paths, and each
// entry of the project the capability may not change (plan.Held) is
// mounted read-only over itself. A read-only mount refuses a change of
// mode, owner, times and extended attributes, which Landlock lets
// through. With every protected entry held so, a writing capability may
// write the project whole, its top included (plan.TopWritable): what it
// creates there is swept after the call. It also gives the launch a /dev/shm of its own (a tmpfs no
// other process sees), which plan then writes.
//
// It reports false, with nothing changed, when the kernel refuses the
// first step (the launch then refuses those changes by its filter); an
// error after that step leaves a half-made tree, and the program is not
// run. Either way it then mounts the PID namespace's own /proc (ownProc):
// that failing is an error.
func isolate(plan *Plan) (bool, error) {
	// The capabilities the namespace gave the second stage end with
	// this, whichever way it returns: ambient ones would outlive execve.
	defer dropCapabilities()
	mounted, err := isolateTree(plan)
	if err != nil {
		return false, err
	}
	return mounted, ownProc(plan)
}

// ownProc mounts over /proc a proc of the second stage's PID namespace
// (it is pid 1 there: launch.NS), read-only, and lets the jail read it
// whole instead of the second stage's /proc/self alone: each process of
// the jail then reads its own entries (a shell's children, ps, Go's
// cgroup-aware GOMAXPROCS, a JVM), and no process outside the jail is
// there to be read. What it shows beyond the jail's processes is the
// machine's (cpuinfo, meminfo, sysctl values, the network namespace's
// sockets, which /proc/self/net showed before), except the user's
// kernel keys' descriptions (/proc/keys, hidden under /dev/null: the
// filter keeps the keyring closed).
func ownProc(plan *Plan) error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			// The kernel lets a user namespace mount proc only where a
			// proc is fully visible: a container that hides parts of
			// /proc under other mounts refuses it. The jail then keeps
			// the rule for /proc/self, which in a PID namespace is the
			// second stage's own (not dumpable): its processes are
			// refused their own /proc entries, as with the filter
			// alone, and read no other's.
			return nil
		}
		return fmt.Errorf("mounting the jail's own /proc: %w", err)
	}
	if err := unix.Mount("/dev/null", "/proc/keys", "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("hiding /proc/keys: %w", err)
	}
	for i, d := range plan.ReadDirs {
		if d == "/proc/self" {
			plan.ReadDirs[i] = "/proc"
		}
	}
	plan.ReadFiles = slices.DeleteFunc(plan.ReadFiles, func(f string) bool { return isAncestorOrSelf("/proc", f) })
	return nil
}

// isolateTree is isolate's read-only tree.
func isolateTree(plan *Plan) (bool, error) {
	// Nothing done here reaches another namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return false, nil
	}
	var rw []string
	rw = append(rw, plan.Private...)
	if plan.GoStatDir != "" {
		rw = append(rw, plan.GoStatDir)
	}
	if plan.Project != "" {
		rw = append(rw, plan.Project)
		for _, d := range plan.WriteDirs {
			if !isAncestorOrSelf(plan.Project, d) {
				rw = append(rw, d)
			}
		}
	}
	type clone struct {
		fd   int
		path string
	}
	var clones []clone
	defer func() {
		for _, c := range clones {
			_ = unix.Close(c.fd)
		}
	}()
	for _, p := range rw {
		flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE)
		if slices.Contains(plan.Private, p) || slices.Contains(plan.NoFollow, p) {
			flags |= unix.AT_SYMLINK_NOFOLLOW
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, flags)
		if err != nil {
			if len(clones) == 0 && errors.Is(err, unix.ENOSYS) {
				return false, nil // a kernel older than the mount API
			}
			return false, fmt.Errorf("isolating %s: open_tree: %w", p, err)
		}
		clones = append(clones, clone{fd, p})
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
		if errors.Is(err, unix.ENOSYS) {
			return false, nil
		}
		return false, fmt.Errorf("isolating: making the tree read-only: %w", err)
	}
	for _, c := range clones {
		if err := unix.MoveMount(c.fd, "", unix.AT_FDCWD, c.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return false, fmt.Errorf("isolating %s: move_mount: %w", c.path, err)
		}
	}
	// Each directory of the project above a held entry is a mount point
	// of its own (a clone of itself, with what is mounted below it): the
	// kernel refuses to move a mount point (EBUSY) in this namespace, so
	// no program of the launch moves a held entry away from the path it
	// is mounted and checked at, whatever path its rename names and
	// whenever the broker read it (the nineteenth attack run flipped a
	// byte of the path between the broker's read and the kernel's, and
	// moved vendor/, holding the nested repository vendor/lib, into
	// g/vendor: a launch planned meanwhile saw a decoy at vendor and wrote
	// vendor/lib/.git/config whole). Shallowest first: a clone keeps the
	// mounts below it.
	for _, a := range heldAncestors(plan) {
		var st unix.Stat_t
		if err := unix.Lstat(a, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			plan.TopWritable = false // moved since the walk
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, a, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return false, fmt.Errorf("isolating %s: open_tree: %w", a, err)
		}
		err = unix.MoveMount(fd, "", unix.AT_FDCWD, a, unix.MOVE_MOUNT_F_EMPTY_PATH)
		_ = unix.Close(fd)
		if err != nil {
			return false, fmt.Errorf("isolating %s: move_mount: %w", a, err)
		}
	}
	pins := map[string]bool{}
	for _, p := range plan.GitPins {
		pins[p] = true
	}
	for _, h := range plan.Held {
		if bulkRoot(plan.RemoveDirs, h) != "" {
			continue // removed, never written: its rules say so
		}
		var st unix.Stat_t
		if err := unix.Lstat(h, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			// Gone, or a link: a change of mode through a link changes
			// its target, which has its own mount. An entry the walk
			// found that is gone may be elsewhere in the project now
			// (moved since the walk, by what no broker stops), where no
			// mount holds it: the project is then not written whole
			// (TopWritable). +git's pins are named whether they exist or
			// not (the broker refuses to make one).
			if err != nil && !pins[h] {
				plan.TopWritable = false
			}
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, h, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return false, fmt.Errorf("isolating %s: open_tree: %w", h, err)
		}
		err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, ro)
		if err == nil {
			err = unix.MoveMount(fd, "", unix.AT_FDCWD, h, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		_ = unix.Close(fd)
		if err != nil {
			return false, fmt.Errorf("isolating %s: %w", h, err)
		}
	}
	// A /dev/shm of the launch's own: POSIX shared memory and semaphores
	// (Python's multiprocessing) work, and no other process's segment is
	// reached.
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0700,size=64m"); err == nil {
		plan.WriteDirs = append(plan.WriteDirs, "/dev/shm")
	}
	if plan.Project != "" && plan.TopWritable && !plan.asWalked() {
		// A directory the walk judged is another now: the walk did not
		// judge what that one holds, which no mount holds then.
		plan.TopWritable = false
	}
	if plan.Project != "" && plan.TopWritable {
		plan.WriteDirs = append(plan.WriteDirs, plan.Project)
	}
	return true, nil
}

// heldAncestors are the directories of the project, below its top, that
// hold one of plan's held entries, shallowest first (but those in a
// bulk directory: Plan.RemoveDirs).
func heldAncestors(plan *Plan) []string {
	if plan.Project == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, h := range plan.Held {
		if !fsx.Within(h, plan.Project) || bulkRoot(plan.RemoveDirs, h) != "" {
			continue
		}
		for d := filepath.Dir(h); d != plan.Project && fsx.Within(d, plan.Project) && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
		}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")), strings.Compare(a, b))
	})
	return out
}

// asWalked reports whether every path a write rule names is still the
// directory or file the plan's walk read there (Plan.RuleIDs).
func (p *Plan) asWalked() bool {
	for path, id := range p.RuleIDs {
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil || [2]uint64{st.Dev, st.Ino} != id {
			return false
		}
	}
	return true
}

// dropCapabilities ends the capabilities the namespace gave the second
// stage: the ambient ones it was started with, the bounding set (a
// program run as root would keep the rest through execve), then every
// set it holds (the inheritable one kept the ambient ones' bits). On
// every thread: a thread's capabilities are its own, and the runtime's
// other threads, where the broker answers the program's calls, kept
// CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETPCAP in the namespace while
// the thread that runs the program had none (the fifty-fifth attack
// run). A binary with cgo cannot change every thread's (a test binary
// built with -race): there only this thread's change.
func dropCapabilities() {
	var none [2]unix.CapUserData
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	_, _, errno := syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	if errno == syscall.ENOTSUP {
		_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		}
		_ = unix.Capset(&hdr, &none[0])
		return
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		syscall.AllThreadsSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0)
	}
	syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&none)
}

// sandboxedOutside reports whether, in this mount namespace, everything
// but the project and the temp directory is on a read-only mount, as in
// Claude Code's sandbox (bubblewrap binds / read-only, then the project
// and its temp directory writable), where a launch cannot have a user
// namespace of its own. A change of mode, owner, times or extended
// attributes can then reach nothing outside those two, and
// project-write's own chmod (npm's bin links, tar x, cp -p) may run. A
// rw mount that is hidden under another (its device is not what its path
// now shows) does not count; the kernel's own file systems and a /dev of
// the sandbox's own (a tmpfs) do not either, their files being the
// kernel's or root's.
func sandboxedOutside(project, temp string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 6 || len(g) < 1 {
			return false
		}
		point, opts, fstype := unescapeMount(f[4]), f[5], g[0]
		if slices.Contains(strings.Split(opts, ","), "ro") {
			continue
		}
		switch fstype {
		case "proc", "sysfs", "devpts", "devtmpfs", "mqueue", "cgroup", "cgroup2", "securityfs", "debugfs", "tracefs", "bpf", "pstore", "configfs", "fusectl", "binfmt_misc", "hugetlbfs":
			continue
		}
		if fstype == "tmpfs" && point == "/dev" {
			continue
		}
		if isAncestorOrSelf(project, point) || temp != "" && isAncestorOrSelf(temp, point) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(point, &st); err != nil {
			continue // not reachable by that path
		}
		maj, min, ok := strings.Cut(f[2], ":")
		if !ok || strconv.FormatUint(uint64(unix.Major(st.Dev)), 10) != maj || strconv.FormatUint(uint64(unix.Minor(st.Dev)), 10) != min {
			continue // hidden under another mount
		}
		var sf unix.Statfs_t
		if err := unix.Statfs(point, &sf); err == nil && sf.Flags&unix.ST_RDONLY != 0 {
			continue // what the path shows is read-only
		}
		return false
	}
	return true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out = append(out, byte(n))
				i += 3
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}
