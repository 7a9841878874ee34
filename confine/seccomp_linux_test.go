//go:build linux

package confine

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// seccompProbe is the probe's "seccomp" action: system calls the filter
// decides on, tried for real, one process for many (a process of the
// race-enabled test binary is slow to start). Its arguments are calls
// separated by "+"; it prints one line per call, "CALL: ok" or
// "CALL: error: ...". "filter OPTS PATH ARGS..." instead installs the
// filter alone (no Landlock, no launcher) with OPTS on this thread and
// execs PATH ("self": the probe) with ARGS.
func seccompProbe(args []string) error {
	if len(args) > 0 && args[0] == "filter" {
		if len(args) < 3 {
			return errors.New("filter OPTS PATH ARGS...")
		}
		o, err := parseFilterOpts(args[1])
		if err != nil {
			return err
		}
		path, argv := args[2], args[2:]
		if path == "self" {
			path, argv = "/proc/self/exe", append([]string{probeName}, args[3:]...)
		}
		runtime.LockOSThread() // the filter is this thread's; execve keeps it
		if err := installFilter(o); err != nil {
			return err
		}
		return syscall.Exec(path, argv, os.Environ())
	}
	for len(args) > 0 {
		call := args
		if i := slices.Index(args, "+"); i >= 0 {
			call, args = args[:i], args[i+1:]
		} else {
			args = nil
		}
		note, err := seccompCall(call)
		switch {
		case err != nil:
			fmt.Printf("%s: error: %v\n", strings.Join(call, " "), err)
		case note != "":
			fmt.Printf("%s: ok %s\n", strings.Join(call, " "), note)
		default:
			fmt.Printf("%s: ok\n", strings.Join(call, " "))
		}
	}
	return nil
}

// seccompCall makes one call; note is what it read, if anything.
func seccompCall(args []string) (note string, err error) {
	if len(args) == 0 {
		return "", errors.New("no call named")
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	errnoOf := func(e syscall.Errno) error {
		if e != 0 {
			return e
		}
		return nil
	}
	switch args[0] {
	case "run": // run PATH ARGS...: a child process (Go's os/exec)
		cmd := exec.Command(arg(1), args[2:]...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))
		}
		return "", nil
	case "clone", "unshare": // clone|unshare FLAG: start /bin/true in a new namespace
		flag, ok := namespaceFlags[arg(1)]
		if !ok {
			return "", fmt.Errorf("no namespace %q", arg(1))
		}
		cmd := exec.Command("/bin/true")
		if args[0] == "clone" {
			// In clone's flags (clone3's for CLONE_NEWTIME, which clone
			// cannot take).
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flag}
		} else {
			// The child calls unshare, single-threaded, as a user
			// namespace needs (Go's own threads would make it EINVAL).
			cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: flag}
		}
		return "", cmd.Run()
	case "fanotify": // an unprivileged fanotify group that reports names
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY|unix.O_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return "", err
	case "socketpair": // socketpair dgram|stream|seqpacket
		typ := map[string]int{"dgram": unix.SOCK_DGRAM, "stream": unix.SOCK_STREAM, "seqpacket": unix.SOCK_SEQPACKET}[arg(1)]
		fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return "", err
	case "clone3": // clone3 with no arguments: EINVAL when the kernel reads them
		_, _, e := syscall.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		return "", errnoOf(e)
	case "setns": // rejoin this process's own UTS namespace
		fd, err := unix.Open("/proc/self/ns/uts", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("open: %w", err)
		}
		defer unix.Close(fd)
		return "", unix.Setns(fd, unix.CLONE_NEWUTS)
	case "mount": // mount DIR: a tmpfs on DIR
		if err := unix.Mount("lg-probe", arg(1), "tmpfs", 0, ""); err != nil {
			return "", err
		}
		return "", unix.Unmount(arg(1), 0)
	case "fsopen": // the new mount API's first step
		fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return "", err
	case "netlink": // netlink PROTOCOL
		p, err := strconv.Atoi(arg(1))
		if err != nil {
			return "", err
		}
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, p)
		if err == nil {
			unix.Close(fd)
		}
		return "", err
	case "interfaces": // what `ip addr` asks (NETLINK_ROUTE)
		_, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
		return "", err
	case "bpf": // BPF_MAP_CREATE of no type: EINVAL when the kernel reads it
		attr := make([]byte, 128)
		_, _, e := syscall.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr[0])), uintptr(len(attr)))
		return "", errnoOf(e)
	case "perf": // count this process's own CPU time, user space only
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
			Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		return "", err
	case "userfaultfd": // user-mode faults only, which needs no capability
		const uffdUserModeOnly = 1
		fd, _, e := syscall.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		return "", errnoOf(e)
	case "ptrace": // ptrace PID: seize it (exiting detaches)
		pid, err := strconv.Atoi(arg(1))
		if err != nil {
			return "", err
		}
		return "", unix.PtraceSeize(pid)
	case "ptrace-child": // seize a child of its own
		cmd := exec.Command("/bin/sleep", "10")
		if err := cmd.Start(); err != nil {
			return "", err
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		return "", unix.PtraceSeize(cmd.Process.Pid)
	case "vmread": // vmread PID ADDR LEN: read another process's memory
		pid, err1 := strconv.Atoi(arg(1))
		addr, err2 := strconv.ParseUint(arg(2), 0, 64)
		n, err3 := strconv.Atoi(arg(3))
		if err := errors.Join(err1, err2, err3); err != nil {
			return "", err
		}
		buf := make([]byte, n)
		if _, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0); err != nil {
			return "", err
		}
		return fmt.Sprintf("read %q", buf), nil
	case "shmget": // create and remove a System V shared memory segment
		id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		if err != nil {
			return "", err
		}
		_, err = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		return "", err
	case "shmwrite": // shmwrite ID TEXT: overwrite another process's segment
		id, err := strconv.Atoi(arg(1))
		if err != nil {
			return "", err
		}
		// shmat itself (x/sys's SysvShmAttach asks shmctl for the size
		// first).
		addr, _, e := syscall.Syscall(unix.SYS_SHMAT, uintptr(id), 0, 0)
		if e != 0 {
			return "", e
		}
		copy(unsafe.Slice((*byte)(unsafe.Add(nil, addr)), len(arg(2))), arg(2)) // memory outside Go's heap
		_, _, e = syscall.Syscall(unix.SYS_SHMDT, addr, 0, 0)
		return "", errnoOf(e)
	case "semget": // create and remove a System V semaphore set
		id, _, e := syscall.Syscall(unix.SYS_SEMGET, unix.IPC_PRIVATE, 1, unix.IPC_CREAT|0o600)
		if e != 0 {
			return "", e
		}
		_, _, e = syscall.Syscall6(unix.SYS_SEMCTL, id, 0, unix.IPC_RMID, 0, 0, 0)
		return "", errnoOf(e)
	case "msgget": // create and remove a System V message queue
		id, _, e := syscall.Syscall(unix.SYS_MSGGET, unix.IPC_PRIVATE, unix.IPC_CREAT|0o600, 0)
		if e != 0 {
			return "", e
		}
		_, _, e = syscall.Syscall(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0)
		return "", errnoOf(e)
	case "chmod", "fchmodat2", "fchmod", "chown", "fchown", "utimes", "futimes", "setxattr", "fsetxattr", "removexattr":
		return "", metadataProbe(args[0], arg(1))
	case "setflags", "setflags-high", "getflags", "fssetxattr", "subvol", "subvol-ro", "reflink", "rawioctl":
		return "", ioctlProbe(args[0], args[1:])
	case "file_getattr", "file_setattr": // PATH: its flags read, then (set) nodump added by path
		return "", fileAttrProbe(args[0], arg(1))
	case "legacy": // legacy NR PATH: one of amd64's path calls of legacyMetadataCalls
		nr, err := strconv.Atoi(arg(1))
		if err != nil {
			return "", err
		}
		p, err := unix.BytePtrFromString(arg(2))
		if err != nil {
			return "", err
		}
		a := [3]uintptr{uintptr(unsafe.Pointer(p)), 0o644, 0}
		switch nr {
		case 92, 94: // chown, lchown: no change (-1, -1)
			a[1], a[2] = ^uintptr(0), ^uintptr(0)
		case 132, 235: // utime, utimes: now
			a[1] = 0
		case 261: // futimesat(AT_FDCWD, path, now)
			a = [3]uintptr{uintptr(fdcwd), uintptr(unsafe.Pointer(p)), 0}
		}
		_, _, e := syscall.Syscall(uintptr(nr), a[0], a[1], a[2])
		runtime.KeepAlive(p)
		return "", errnoOf(e)
	}
	return "", fmt.Errorf("seccomp: unknown call %q", args[0])
}

// metadataProbe changes a file's mode, owner, times or extended
// attributes, each the way its call does.
func metadataProbe(call, path string) error {
	withFile := func(f func(fd int) error) error {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		defer unix.Close(fd)
		return f(fd)
	}
	now := []unix.Timespec{unix.NsecToTimespec(time.Now().UnixNano()), unix.NsecToTimespec(time.Now().UnixNano())}
	switch call {
	case "chmod":
		return os.Chmod(path, 0o644)
	case "fchmodat2":
		p, err := unix.BytePtrFromString(path)
		if err != nil {
			return err
		}
		_, _, e := syscall.Syscall6(unix.SYS_FCHMODAT2, uintptr(fdcwd), uintptr(unsafe.Pointer(p)), 0o644, 0, 0, 0)
		runtime.KeepAlive(p)
		if e != 0 {
			return e
		}
		return nil
	case "fchmod":
		return withFile(func(fd int) error { return unix.Fchmod(fd, 0o644) })
	case "chown":
		return os.Chown(path, os.Getuid(), os.Getgid())
	case "fchown":
		return withFile(func(fd int) error { return unix.Fchown(fd, os.Getuid(), os.Getgid()) })
	case "utimes":
		return unix.UtimesNanoAt(unix.AT_FDCWD, path, now, 0)
	case "futimes":
		return withFile(func(fd int) error { return unix.Futimes(fd, []unix.Timeval{{Sec: 1}, {Sec: 1}}) })
	case "setxattr":
		return unix.Setxattr(path, "user.loopguard", []byte("x"), 0)
	case "fsetxattr":
		return withFile(func(fd int) error { return unix.Fsetxattr(fd, "user.loopguard", []byte("x"), 0) })
	case "removexattr":
		err := unix.Removexattr(path, "user.loopguard")
		if errors.Is(err, unix.ENODATA) { // the call ran: there was nothing to remove
			return nil
		}
		return err
	}
	return fmt.Errorf("no metadata call %q", call)
}

// fileAttrProbe reads the file attributes of path with file_getattr
// (Linux 6.17) and, for file_setattr, sets nodump with file_setattr: by
// path, no descriptor.
func fileAttrProbe(call, path string) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	var attr [24]byte // struct file_attr, FILE_ATTR_SIZE_VER0
	cwd := unix.AT_FDCWD
	_, _, e := syscall.Syscall6(unix.SYS_FILE_GETATTR, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&attr)), 24, 0, 0)
	if e != 0 {
		return e
	}
	if call == "file_getattr" {
		return nil
	}
	attr[0] |= 0x80 // fa_xflags: FS_XFLAG_NODUMP
	_, _, e = syscall.Syscall6(unix.SYS_FILE_SETATTR, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&attr)), 24, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// ioctlProbe makes the file ioctls of refusedIoctls, each through a
// descriptor opened for reading, as the file's owner may:
//
//	setflags PATH       chattr +A (noatime)
//	setflags-high PATH  the same, the number's high 32 bits set (the
//	                    kernel reads the low ones)
//	getflags PATH       lsattr (the control: a file ioctl that changes
//	                    nothing)
//	fssetxattr PATH     the fsxattr read back and set unchanged
//	subvol DIR NAME     a btrfs subvolume DIR/NAME
//	subvol-ro DIR       btrfs subvolume DIR made read-only
//	reflink SRC DST     DST made a clone of SRC (FICLONE, cp --reflink)
//	rawioctl HEX PATH   the number HEX with a zeroed 4 KiB argument
func ioctlProbe(call string, args []string) error {
	if len(args) == 0 {
		return errors.New("no path")
	}
	path, flags := args[0], unix.O_RDONLY|unix.O_CLOEXEC
	switch call {
	case "subvol", "subvol-ro":
		flags |= unix.O_DIRECTORY
	case "rawioctl":
		if len(args) < 2 {
			return errors.New("rawioctl HEX PATH")
		}
		path = args[1]
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(fd)
	ioctl := func(req uint64, arg unsafe.Pointer) error {
		_, _, e := syscall.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e != 0 {
			return e
		}
		return nil
	}
	switch call {
	case "getflags", "setflags", "setflags-high":
		var v int64
		if err := ioctl(unix.FS_IOC_GETFLAGS, unsafe.Pointer(&v)); err != nil || call == "getflags" {
			return err
		}
		v |= 0x80 // FS_NOATIME_FL
		req := uint64(unix.FS_IOC_SETFLAGS)
		if call == "setflags-high" {
			req |= 1 << 32
		}
		return ioctl(req, unsafe.Pointer(&v))
	case "fssetxattr":
		// struct fsxattr, by FS_IOC_FSGETXATTR
		var x [28]byte
		if err := ioctl(0x801c581f, unsafe.Pointer(&x)); err != nil {
			return fmt.Errorf("FS_IOC_FSGETXATTR: %w", err)
		}
		return ioctl(ioctlFSSetXattr, unsafe.Pointer(&x))
	case "subvol":
		var a [4096]byte // struct btrfs_ioctl_vol_args: fd, then the name
		if len(args) < 2 || len(args[1]) >= len(a)-8 {
			return errors.New("subvol DIR NAME")
		}
		copy(a[8:], args[1])
		return ioctl(0x5000940e, unsafe.Pointer(&a)) // BTRFS_IOC_SUBVOL_CREATE
	case "subvol-ro":
		// BTRFS_IOC_SUBVOL_SETFLAGS, BTRFS_SUBVOL_RDONLY
		v := uint64(2)
		return ioctl(0x4008941a, unsafe.Pointer(&v))
	case "reflink":
		if len(args) < 2 {
			return errors.New("reflink SRC DST")
		}
		dst, err := unix.Open(args[1], unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return fmt.Errorf("open %s: %w", args[1], err)
		}
		defer unix.Close(dst)
		return unix.IoctlFileClone(dst, fd)
	case "rawioctl":
		req, err := strconv.ParseUint(args[0], 16, 64)
		if err != nil {
			return err
		}
		var a [4096]byte
		return ioctl(req, unsafe.Pointer(&a))
	}
	return fmt.Errorf("no ioctl call %q", call)
}

// fdcwd is AT_FDCWD as a variable (a negative constant does not convert
// to uintptr).
var fdcwd = unix.AT_FDCWD

var namespaceFlags = map[string]uintptr{
	"user": unix.CLONE_NEWUSER, "mnt": unix.CLONE_NEWNS, "net": unix.CLONE_NEWNET, "ipc": unix.CLONE_NEWIPC,
	"uts": unix.CLONE_NEWUTS, "pid": unix.CLONE_NEWPID, "cgroup": unix.CLONE_NEWCGROUP, "time": unix.CLONE_NEWTIME,
}

// parseFilterOpts reads "network,metadata,sysv,broker,opens" ("-": none).
func parseFilterOpts(s string) (filterOpts, error) {
	var o filterOpts
	for _, w := range strings.Split(s, ",") {
		switch w {
		case "-", "":
		case "network":
			o.network = true
		case "metadata":
			o.metadata = true
		case "sysv":
			o.sysvIPC = true
		case "broker":
			o.broker = true
		case "opens":
			o.opens = true
		default:
			return o, fmt.Errorf("no filter option %q", w)
		}
	}
	return o, nil
}

// call is one call of the seccomp probe and what it must meet: errno 0
// is allowed.
type call struct {
	args  []string
	errno syscall.Errno
}

func callOf(errno syscall.Errno, args ...string) call { return call{args, errno} }

// seccompArgs are the probe's arguments that make calls in one process.
func seccompArgs(calls []call) []string {
	args := []string{"seccomp"}
	for i, c := range calls {
		if i > 0 {
			args = append(args, "+")
		}
		args = append(args, c.args...)
	}
	return args
}

// results are the probe's results, one per call: "ok", "ok NOTE" or
// "error: ...".
func results(t *testing.T, what, out string, code int, calls []call) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != len(calls)+1 {
		t.Fatalf("%s: exit %d, %q", what, code, out)
	}
	res := make([]string, len(calls))
	for i, c := range calls {
		r, ok := strings.CutPrefix(lines[i], strings.Join(c.args, " ")+": ")
		if !ok {
			t.Fatalf("%s: line %d is %q, for %v", what, i, lines[i], c.args)
		}
		res[i] = r
	}
	return res
}

// checkCalls: each call was allowed or refused with its errno.
func checkCalls(t *testing.T, what, out string, code int, calls []call) {
	t.Helper()
	for i, r := range results(t, what, out, code, calls) {
		c := calls[i]
		switch {
		case c.errno == 0 && r != "ok" && !strings.HasPrefix(r, "ok "):
			t.Errorf("%s: %s: %q; want it allowed", what, strings.Join(c.args, " "), r)
		case c.errno != 0 && (!strings.HasPrefix(r, "error: ") || !strings.HasSuffix(r, c.errno.Error())):
			t.Errorf("%s: %s: %q; want %q (%s)", what, strings.Join(c.args, " "), r, c.errno.Error(), unix.ErrnoName(c.errno))
		}
	}
}

// refused is calls, each expected refused with errno.
func refused(errno syscall.Errno, calls []call) []call {
	out := make([]call, len(calls))
	for i, c := range calls {
		out[i] = call{c.args, errno}
	}
	return out
}

// TestFilterLength: the program stays small, and its jumps fit (assemble
// fails on a jump past 255 instructions).
func TestFilterLength(t *testing.T) {
	longest := 0
	for _, s := range []string{"-", "network", "sysv", "metadata", "network,metadata", "network,metadata,sysv",
		"metadata,broker", "network,metadata,broker,opens", "network,broker,opens"} {
		o, _ := parseFilterOpts(s)
		prog, err := filter(o)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		t.Logf("%s: %d instructions", s, len(prog))
		longest = max(longest, len(prog))
	}
	// 144 since the scheduling of another process is judged by its
	// arguments (six calls, four of them one check); 152 since
	// socketpair's type, a terminal's line discipline and size and
	// fanotify_init are (the fifty-sixth attack run).
	if longest > 160 {
		t.Errorf("the filter has grown to %d instructions: look at its shape", longest)
	}
}

// TestFilterTables: every number the filter refuses is one call's, once;
// amd64's legacy calls are the numbers its table gives them.
func TestFilterTables(t *testing.T) {
	all := slices.Concat(ioUringKeyringCalls, alwaysRefusedCalls, sysvIPCCalls, modeCalls, legacyModeCalls, metadataCalls, xattrCalls, legacyMetadataCalls,
		[]uint32{unix.SYS_IOCTL, unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_CLONE, unix.SYS_CLONE3})
	seen := map[uint32]bool{}
	for _, nr := range all {
		if seen[nr] {
			t.Errorf("system call %d is listed twice", nr)
		}
		seen[nr] = true
	}
	if runtime.GOARCH == "amd64" && (!slices.Equal(legacyMetadataCalls, []uint32{92, 94, 132, 235, 261}) || !slices.Equal(legacyModeCalls, []uint32{90})) {
		t.Errorf("amd64's legacy metadata calls are %v, mode calls %v", legacyMetadataCalls, legacyModeCalls)
	}
	if cloneNewNamespaces&unix.CSIGNAL != 0 {
		t.Errorf("the clone mask %#x tests the exit signal's byte", cloneNewNamespaces)
	}
}

// filtered is a probe under the filter alone, run as uid (-1: this
// process's) from exe, a copy of the test binary that uid can run.
type filtered struct {
	exe string
	uid int
	env []string
}

// calls makes calls in one probe process under the filter with opts ("":
// none, the control) and checks each result.
func (f filtered) calls(t *testing.T, opts string, calls []call) {
	t.Helper()
	out, code := f.run(t, nil, opts, calls)
	checkCalls(t, f.name()+" filter "+cmp.Or(opts, "off"), out, code, calls)
}

func (f filtered) run(t *testing.T, attr *syscall.SysProcAttr, opts string, calls []call) (string, int) {
	t.Helper()
	argv := append([]string{probeName}, seccompArgs(calls)...)
	if opts != "" {
		argv = append([]string{probeName, "seccomp", "filter", opts, "self"}, argv[1:]...)
	}
	cmd := exec.Command(f.exe)
	cmd.Args = argv
	cmd.Env = f.env
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	if f.uid >= 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(f.uid), Gid: uint32(f.uid)}
	}
	cmd.SysProcAttr = attr
	return combined(t, cmd)
}

// ownFile is a file of f's user (mode 0600) in a directory of its own
// that every user can search, removed after the test.
func (f filtered) ownFile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lg-own-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "own")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.uid >= 0 {
		for _, p := range []string{dir, file} {
			if err := os.Chown(p, f.uid, f.uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return file
}

// nobody is uid and gid 65534.
const nobody = 65534

// filterUsers are the users the direct filter tests run as: this one,
// and, when this one is root (whom the kernel lets past some checks), an
// unprivileged one, from a copy of the test binary it can run.
func filterUsers(t *testing.T) []filtered {
	t.Helper()
	// A race-enabled binary sleeps a second on exit unless told not to.
	env := []string{"PATH=/usr/bin:/bin", "HOME=/", "LANG=C", "GORACE=atexit_sleep_ms=0"}
	users := []filtered{{exe: testBinary(t), uid: -1, env: env}}
	if os.Getuid() == 0 {
		users = append(users, filtered{exe: sharedTestBinary(t), uid: nobody, env: env})
	}
	return users
}

// sharedTestBinary is a copy of the test binary in a directory every user
// can reach (go test builds it in a private one).
func sharedTestBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lg-seccomp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "confine.test")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func (f filtered) name() string {
	if f.uid < 0 {
		return fmt.Sprintf("uid %d", os.Getuid())
	}
	return fmt.Sprintf("uid %d", f.uid)
}

// childrenAndThreads start children and threads the ways programs do:
// Go's os/exec, the shell's fork, and glibc's pthread_create, which tries
// clone3 first (sort's four threads).
var childrenAndThreads = []call{
	callOf(0, "run", "/bin/true"),
	callOf(0, "run", "/bin/sh", "-c", "/bin/true; /bin/true"),
	callOf(0, "run", "/bin/sh", "-c", "seq 1 300000 | sort -n --parallel=4 -S 100M | tail -n 1 | grep -qx 300000"),
}

var namespaces = []string{"user", "mnt", "net", "ipc", "uts", "pid", "cgroup"}

// TestFilterNamespaces: under the filter alone, as root and as an
// unprivileged user, no new namespace by clone, unshare or setns, clone3
// answers ENOSYS, and programs still start children and threads.
// Controls: the same calls unfiltered.
func TestFilterNamespaces(t *testing.T) {
	t.Parallel()
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			var control, calls []call
			for _, ns := range namespaces {
				for _, how := range []string{"clone", "unshare"} {
					if ns == "user" || f.uid != nobody {
						// Unprivileged, only a user namespace is the
						// user's to make.
						control = append(control, callOf(0, how, ns))
					}
					calls = append(calls, callOf(unix.EPERM, how, ns))
				}
			}
			control = append(control, callOf(unix.EINVAL, "clone3")) // the kernel read its arguments
			if f.uid != nobody {
				control = append(control, callOf(0, "setns"))
			}
			f.calls(t, "", control)
			calls = append(calls,
				// A time namespace comes only through clone3 (Go
				// asks clone3 for it) or unshare.
				callOf(unix.ENOSYS, "clone", "time"),
				callOf(unix.EPERM, "unshare", "time"),
				callOf(unix.ENOSYS, "clone3"),
				callOf(unix.EPERM, "setns"),
			)
			f.calls(t, "-", append(calls, childrenAndThreads...))
		})
	}
}

// TestFilterMount: the filter refuses the mount calls itself, not only
// Landlock: root, in a mount namespace of its own made before the filter,
// mounts a tmpfs unfiltered (control) and not filtered.
func TestFilterMount(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	t.Parallel()
	f := filterUsers(t)[0]
	calls := []call{callOf(0, "mount", t.TempDir()), callOf(0, "fsopen")}
	for _, opts := range []string{"", "-"} {
		want := calls
		if opts != "" {
			want = refused(unix.EPERM, calls)
		}
		out, code := f.run(t, &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}, opts, want)
		checkCalls(t, "filter "+cmp.Or(opts, "off"), out, code, want)
	}
}

// TestFilterKernelInterfaces: bpf, perf_event_open and userfaultfd are
// refused; a netlink socket is NETLINK_ROUTE's only. Controls: the same
// calls unfiltered (bpf, perf_event_open and userfaultfd where the kernel
// lets this user have them).
func TestFilterKernelInterfaces(t *testing.T) {
	t.Parallel()
	risky := []call{callOf(0, "bpf"), callOf(0, "perf"), callOf(0, "userfaultfd"), callOf(0, "fanotify")}
	pairs := []call{callOf(0, "socketpair", "stream"), callOf(0, "socketpair", "seqpacket")}
	dgram := callOf(0, "socketpair", "dgram")
	var netlink []call
	for _, p := range []int{unix.NETLINK_AUDIT, unix.NETLINK_NETFILTER, unix.NETLINK_KOBJECT_UEVENT, unix.NETLINK_GENERIC, unix.NETLINK_SOCK_DIAG} {
		netlink = append(netlink, callOf(0, "netlink", strconv.Itoa(p)))
	}
	route := []call{callOf(0, "interfaces"), callOf(0, "netlink", "0")}
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			out, code := f.run(t, nil, "", risky)
			for i, r := range results(t, "unfiltered", out, code, risky) {
				// bpf: EINVAL is the kernel reading the empty map's type.
				if r != "ok" && r != "error: "+unix.EINVAL.Error() {
					t.Logf("%s unfiltered (control) fails here: %s", risky[i].args[0], r)
				}
			}
			f.calls(t, "", slices.Concat(route, netlink, pairs, []call{dgram}))
			for _, opts := range []string{"-", "network,metadata,sysv"} {
				f.calls(t, opts, slices.Concat(route, refused(unix.EACCES, netlink), refused(unix.EPERM, risky), pairs, refused(unix.EACCES, []call{dgram})))
			}
		})
	}
}

// TestFilterSysVIPC: without sysvIPC no System V IPC at all: no segment,
// semaphore set or message queue made, and no attaching to another
// process's segment (which a confined program read and overwrote,
// issue #35); with it, allowed.
func TestFilterSysVIPC(t *testing.T) {
	t.Parallel()
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o666)
	if err != nil {
		t.Skipf("no System V shared memory here: %v", err)
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	seg, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmDetach(seg)
	calls := []call{callOf(0, "shmget"), callOf(0, "semget"), callOf(0, "msgget")}
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			f.calls(t, "", calls)
			for _, opts := range []string{"-", "network,metadata"} {
				copy(seg, "ORIGINAL")
				f.calls(t, opts, append(refused(unix.EPERM, calls), callOf(unix.EPERM, "shmwrite", strconv.Itoa(id), "PWNED")))
				if string(seg[:8]) != "ORIGINAL" {
					t.Errorf("%s: the segment was overwritten: %q", opts, seg[:8])
				}
			}
			f.calls(t, "network,sysv", append(calls, callOf(0, "shmwrite", strconv.Itoa(id), "CONTROL")))
			if string(seg[:7]) != "CONTROL" {
				t.Errorf("with sysvIPC, the control did not write the segment: %q", seg[:8])
			}
		})
	}
}

// TestFilterMetadata: with metadata, no change of a file's mode, owner,
// times or extended attributes, by path or by descriptor, even of the
// program's own file; without it, each change is made (control).
func TestFilterMetadata(t *testing.T) {
	t.Parallel()
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			file := f.ownFile(t)
			var calls []call
			for _, c := range []string{"chmod", "fchmodat2", "fchmod", "chown", "fchown", "utimes", "futimes", "setxattr", "fsetxattr", "removexattr"} {
				calls = append(calls, callOf(0, c, file))
			}
			if runtime.GOARCH == "amd64" {
				for _, nr := range legacyMetadataCalls {
					calls = append(calls, callOf(0, "legacy", strconv.Itoa(int(nr)), file))
				}
			}
			f.calls(t, "network,sysv", calls)
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o644 {
				t.Fatalf("the control's chmod did not take: %v %v", fi, err)
			}
			for _, opts := range []string{"metadata", "network,metadata,sysv"} {
				var eperm, enotsup []call
				for _, c := range calls {
					if strings.Contains(c.args[0], "xattr") {
						enotsup = append(enotsup, c)
					} else {
						eperm = append(eperm, c)
					}
				}
				f.calls(t, opts, append(refused(unix.EPERM, eperm), refused(unix.EOPNOTSUPP, enotsup)...))
			}
		})
	}
}

// TestFilterIoctls: whatever the options, no file ioctl that changes a
// file's metadata through a descriptor opened for reading (chattr, the
// fsxattr), its number's high bits set or not, and every number of
// refusedIoctls answers ENOTTY; reading a file's flags still runs.
// Controls: unfiltered, the owner makes each change.
func TestFilterIoctls(t *testing.T) {
	t.Parallel()
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			file := f.ownFile(t)
			changes := []call{callOf(0, "setflags", file), callOf(0, "setflags-high", file), callOf(0, "fssetxattr", file)}
			read := callOf(0, "getflags", file)
			f.calls(t, "", append(changes, read))
			// file_setattr (Linux 6.17) makes the same change by path:
			// refused as a kernel without it refuses it (ENOSYS), as is
			// every newer call; file_getattr, just below it, runs.
			byPath, readByPath := callOf(0, "file_setattr", file), callOf(0, "file_getattr", file)
			if err := fileAttrProbe("file_getattr", file); errors.Is(err, unix.ENOSYS) {
				t.Logf("no file_getattr in this kernel: file_setattr's refusal is not told from its absence")
			} else {
				f.calls(t, "", []call{byPath, readByPath})
				for _, opts := range []string{"-", "metadata", "network,metadata,sysv", "network,metadata,broker,opens"} {
					f.calls(t, opts, []call{callOf(unix.ENOSYS, "file_setattr", file), readByPath})
				}
			}
			var raw []call
			for _, n := range refusedIoctls {
				raw = append(raw, callOf(unix.ENOTTY, "rawioctl", strconv.FormatUint(uint64(n), 16), file))
			}
			for _, opts := range []string{"-", "metadata", "network,metadata,sysv"} {
				f.calls(t, opts, slices.Concat(refused(unix.ENOTTY, changes), []call{read}, raw))
			}
		})
	}
}

// vmSecret is what TestConfinementPtrace's probe tries to read out of
// this process.
var vmSecret = [16]byte{'V', 'M', '-', 'S', 'E', 'C', 'R', 'E', 'T'}

// TestConfinementPtrace: the filter leaves ptrace and process_vm_readv to
// Landlock, which refuses them for every process outside the program's
// domain (this test process, a process it started), root's included, and
// allows them inside it (a child of the program's own, which it could
// change anyway). Controls: the same calls, not launched, reach the
// processes outside.
func TestConfinementPtrace(t *testing.T) {
	w := newWorld(t)
	target := exec.Command("/bin/sleep", "60")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer target.Wait()
	defer target.Process.Kill()
	pid := strconv.Itoa(target.Process.Pid)
	self, addr := strconv.Itoa(os.Getpid()), fmt.Sprint(uintptr(unsafe.Pointer(&vmSecret[0])))

	outside := []call{callOf(0, "ptrace", pid), callOf(0, "vmread", self, addr, "9")}
	out, code := w.run(t, nil, append([]string{probeName}, seccompArgs(outside)...)...)
	checkCalls(t, "unconfined", out, code, outside)
	if !strings.Contains(out, "VM-SECRET") {
		t.Errorf("process_vm_readv unconfined (control) did not read the secret: %q", out)
	}
	calls := append(refused(unix.EPERM, outside), callOf(0, "ptrace-child"))
	for _, m := range launchModes(w) {
		for _, c := range []policy.Capability{readOnly, projectWrite} {
			calls := calls
			if m.name == "namespaces" && c.Write && namespacesAllowed() {
				// A PID namespace of its own: no process outside it
				// has a pid there.
				calls = append(refused(unix.ESRCH, outside), callOf(0, "ptrace-child"))
			}
			out, code := m.w.launch(t, c, nil, seccompArgs(calls)...)
			checkCalls(t, m.name+" "+c.String(), out, code, calls)
		}
	}
}

// launchMode is a world whose launches take namespaces where they can,
// or one whose launches run under the filter alone.
type launchMode struct {
	name string
	w    world
}

func launchModes(w world) []launchMode {
	alone := w
	alone.env = append(slices.Clone(w.env), "LG_CONFINE_NO_NS=1")
	return []launchMode{{"namespaces", w}, {"filter-only", alone}}
}

// launcherCalls are the filter's fixed refusals (namespaces, clone3, the
// mount calls, bpf, perf_event_open, userfaultfd, netlink but
// NETLINK_ROUTE), and a program's children and threads, tried through
// the launcher.
func launcherCalls(dir string) []call {
	return append([]call{
		callOf(unix.EPERM, "clone", "user"),
		callOf(unix.EPERM, "clone", "net"),
		callOf(unix.EPERM, "unshare", "user"),
		callOf(unix.EPERM, "unshare", "mnt"),
		callOf(unix.ENOSYS, "clone", "time"),
		callOf(unix.ENOSYS, "clone3"),
		callOf(unix.EPERM, "setns"),
		callOf(unix.EPERM, "mount", dir),
		callOf(unix.EPERM, "fsopen"),
		callOf(unix.EPERM, "bpf"),
		callOf(unix.EPERM, "perf"),
		callOf(unix.EPERM, "userfaultfd"),
		callOf(unix.EPERM, "fanotify"),
		callOf(unix.EACCES, "socketpair", "dgram"),
		callOf(0, "socketpair", "stream"),
		callOf(0, "socketpair", "seqpacket"),
		callOf(0, "interfaces"),
		callOf(unix.EACCES, "netlink", strconv.Itoa(unix.NETLINK_NETFILTER)),
		callOf(unix.EACCES, "netlink", strconv.Itoa(unix.NETLINK_AUDIT)),
	}, childrenAndThreads...)
}

// TestConfinementSeccomp: through the launcher, as this user (root, whom
// the kernel lets past every check but Landlock's and the filter's, when
// the tests run as root), with namespaces and with the filter alone,
// under read-only and project-write: the filter's fixed refusals hold,
// and a program still starts children and threads.
func TestConfinementSeccomp(t *testing.T) {
	w := newWorld(t)
	calls := launcherCalls(w.tmp)
	for _, m := range launchModes(w) {
		for _, c := range []policy.Capability{readOnly, projectWrite} {
			out, code := m.w.launch(t, c, nil, seccompArgs(calls)...)
			checkCalls(t, m.name+" "+c.String(), out, code, calls)
		}
	}
}

// TestJailSeccomp: the same as the jail's unprivileged user.
func TestJailSeccomp(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		calls := launcherCalls(j.tmp)
		for _, c := range []policy.Capability{readOnly, projectWrite} {
			out, code := j.launch(t, c, seccompArgs(calls)...)
			checkCalls(t, c.String(), out, code, calls)
		}
	})
}
