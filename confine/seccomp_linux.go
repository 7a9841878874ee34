//go:build linux

package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter closes what Landlock (ABI 4 to 7) leaves open. It
// refuses:
//
//   - socket(2) of every family but netlink, and, with the network
//     capability, IPv4 and IPv6 (EACCES, socket(2)'s own answer): Unix
//     sockets (the keyring's D-Bus, ssh-agent, the Docker daemon), UDP and
//     raw sockets, and Multipath TCP, which Landlock's TCP rules do not see;
//     a netlink socket only of NETLINK_ROUTE (what `ip addr`, glibc's
//     getaddrinfo and if_nameindex use): audit, netfilter, uevents and
//     the rest are other kernel interfaces, none a build or test needs;
//   - io_uring, which can open and connect sockets without socket(2);
//   - the ioctls that type into a terminal (TIOCSTI, TIOCLINUX), and those
//     that change an inherited terminal past the call: its line
//     discipline (TIOCSETD: N_NULL left the shell's terminal dead after
//     the launcher exited, and another number loads a module where the
//     kernel autoloads them) and its size (TIOCSWINSZ, which signals the
//     terminal's foreground process group, outside the jail: the
//     fifty-sixth attack run);
//   - socketpair(2) of datagrams (EACCES): a datagram socket sends to any
//     datagram socket's path the user may write (journald's /dev/log, a
//     service's notify socket), with descriptors, which Landlock does
//     not judge; stream and sequenced-packet pairs, which only ever
//     reach each other, are allowed (the fifty-sixth run);
//   - fanotify_init (EPERM): an unprivileged fanotify watch reports the
//     names and the opens of files in a directory Landlock hides
//     (~/.ssh), as inotify does (which stays: file watchers need it);
//   - the file ioctls that change a file's metadata through a descriptor
//     opened for reading, and btrfs's but cloning (ENOTTY, refusedIoctls);
//   - the kernel's key retention service (keyctl, add_key, request_key):
//     the user's keyrings hold what Kerberos, AFS and other tools keep
//     there, out of Landlock's reach;
//   - new namespaces (EPERM): unshare (whatever its flags: without a
//     namespace flag it is all but unused), setns, and clone with a
//     CLONE_NEW* flag. In a user namespace of its own a program holds
//     every capability over the namespaces it then makes, which reaches
//     kernel code an unprivileged user otherwise never does (netfilter,
//     traffic control, file systems: where most of the kernel bugs
//     unprivileged programs have used lie), and hides its processes in a
//     PID namespace. clone3 answers ENOSYS: its flags are in memory,
//     where a filter cannot read them, and ENOSYS is what makes glibc and
//     Go fall back to clone, whose flags it can read;
//   - every call that changes the mount tree (EPERM: mount, umount2,
//     pivot_root and the new mount API). Landlock refuses mount, umount,
//     pivot_root and move_mount to the process it restricts, but not the
//     steps that make a detached mount (fsopen, fsmount, open_tree); in
//     the launcher's own user namespace, where the program holds
//     CAP_SYS_ADMIN, they would reach file system code;
//   - bpf, perf_event_open and userfaultfd (EPERM): no build or test needs
//     them, and they are where unprivileged kernel exploits live (a
//     verifier, a PMU, a page fault held open to win a race);
//   - without sysvIPC, System V IPC (EPERM: shmget, shmat, semop, msgsnd
//     and the rest): its objects are named by a number any process of the
//     user (and of the IPC namespace) can guess, so a confined program
//     read and overwrote another process's shared memory (issue #35);
//   - with metadata, every call that changes a file's mode, owner, times
//     or extended attributes, by path or by descriptor (EPERM: the chmod,
//     chown and utime families; EOPNOTSUPP, as a file system without
//     them says, the setxattr family): Landlock does not handle them,
//     so a read-only file of the user's could be made writable by others,
//     executable, or older than what make compares it with. With broker
//     too, a mode change, and a change of times by path, go to the first
//     stage, which makes it for a file the program may write (chmod +x of
//     a script in the project, tar x) and refuses every other
//     (brokermode_linux.go).
//
// With broker (the filter alone under a capability that writes the
// project), every open for writing, and every call that makes or removes
// a name (openat with O_CREAT,
// mkdirat, mknodat, symlinkat, linkat, renameat2, unlinkat and amd64's
// older forms) goes to the launcher's first stage instead
// (SECCOMP_RET_USER_NOTIF, broker_linux.go), which makes new files at the
// project's top and refuses protected names; the rest it hands back to
// the kernel unchanged.
//
// ptrace and process_vm_readv/writev are not filtered: Landlock refuses
// them for any process outside the program's domain (since ABI 1;
// TestConfinementPtrace), and tracing a process of the same domain gives
// nothing the program does not have. Calls the kernel refuses anyway to a
// process without capabilities in the initial user namespace (kexec_load,
// init_module, reboot, swapon, iopl...) are not filtered either: no
// namespace the filter lets a program create gives those capabilities.
//
// A system call of another architecture than the one built for kills the
// process (its table would be unfiltered); amd64's x32 numbers are
// refused.
//
// The program is one comparison per refused number (72 to 128
// instructions by the options: TestFilterLength), but most calls never
// run it: since Linux 5.11 the
// kernel works out, when the filter is installed, which numbers it allows
// whatever their arguments and skips it for those. Only ioctl, socket and
// clone (and prlimit64), whose arguments it reads, run it, and they are
// tried first.

// seccompData offsets (struct seccomp_data).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits of args[0] on a little-endian machine
	offArg1 = 24 // the low 32 bits of args[1]
	offArg2 = 32 // the low 32 bits of args[2]
)

// selfOnlyCalls set the scheduling of the process (or thread) their first
// argument names: allowed for the caller's own alone (0).
var selfOnlyCalls = []uint32{unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR, unix.SYS_SCHED_SETAFFINITY}

// ioprioWhoProcess is ioprio_set's which for one process (IOPRIO_WHO_PROCESS,
// linux/ioprio.h); x/sys names none.
const ioprioWhoProcess = 1

// Terminal ioctls that put input into a terminal, which a shell reading
// it then runs outside any confinement (TIOCSTI; TIOCLINUX's selection
// paste on a virtual console). Landlock's device-ioctl right covers
// terminals the program opens itself, not the ones it inherits (its
// standard input may be the user's terminal).
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// File ioctls by which a file's owner changes it through a descriptor
// opened for reading alone, out of Landlock's reach (it governs the
// ioctls of device files, and no ioctl's effect on a regular file or a
// directory). Their numbers are the same on amd64 and arm64 (the generic
// _IOC layout; each takes a long or a struct whose size is the same).
// x/sys names the rest.
const (
	ioctlSetVersion     = 0x40087602 // FS_IOC_SETVERSION, _IOW('v', 2, long)
	ioctlExt4SetVersion = 0x40086604 // EXT4_IOC_SETVERSION, _IOW('f', 4, long)
	ioctlExt4Migrate    = 0x6609     // EXT4_IOC_MIGRATE, _IO('f', 9)
	ioctlFSSetXattr     = 0x401c5820 // FS_IOC_FSSETXATTR, _IOW('X', 32, struct fsxattr)
	// ioctlBtrfsType is btrfs's ioctl type (the number's second byte),
	// which FICLONE and FICLONERANGE share.
	ioctlBtrfsType = 0x94
)

// refusedIoctls change a file's or a directory's metadata, the file
// system's encryption keys, or make a file read-only for good, for its
// owner whatever the descriptor's mode. Confined code could set them on
// ~/.gitconfig and on every file of a project it may only read (the
// attack run after issue #35, on ext4: nodump, which backups honour,
// noatime, sync):
//   - FS_IOC_SETFLAGS (chattr: sync, nodump, noatime, casefold,
//     projinherit...);
//   - FS_IOC_FSSETXATTR (the same flags, a project quota ID, extent size
//     hints);
//   - FS_IOC_SETVERSION and ext4's own number for it (the inode's
//     generation, which NFS file handles carry);
//   - EXT4_IOC_MIGRATE (a file's block map rewritten as extents);
//   - FS_IOC_SET_ENCRYPTION_POLICY (an empty directory encrypted with a
//     key the program chose: what an unconfined process later writes
//     there is lost when the key goes);
//   - FS_IOC_ADD_ENCRYPTION_KEY and the two REMOVE_ENCRYPTION_KEY (the
//     user's keys of the file system: removing one locks the user's own
//     encrypted directories);
//   - FS_IOC_ENABLE_VERITY (fs-verity: the file can never be written
//     again, only deleted).
//
// Every btrfs ioctl is refused too, but FICLONE and FICLONERANGE (cp
// --reflink, which need a destination open for writing, which Landlock
// governs): a subvolume or a snapshot is made by an ioctl on its parent
// directory that Landlock never sees, so confined code under read-only
// made a directory named .git in the project, snapshots copy a whole
// tree under any name past the broker, and a subvolume's owner can make
// it read-only, defragment (unshare) its files, or with
// user_subvol_rm_allowed destroy it.
var refusedIoctls = []uint32{
	unix.FS_IOC_SETFLAGS, ioctlFSSetXattr, ioctlSetVersion, ioctlExt4SetVersion, ioctlExt4Migrate,
	unix.FS_IOC_SET_ENCRYPTION_POLICY, unix.FS_IOC_ADD_ENCRYPTION_KEY, unix.FS_IOC_REMOVE_ENCRYPTION_KEY,
	unix.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, unix.FS_IOC_ENABLE_VERITY,
}

// cloneNewNamespaces are the flags of clone(2) that create a namespace.
// Not CLONE_NEWTIME (0x80): clone takes the low byte of its flags
// (CSIGNAL) as the child's exit signal, never as flags (kernel/fork.c:
// .flags = lower_32_bits(clone_flags) & ~CSIGNAL), so only unshare and
// clone3 can ask for a time namespace, and both are refused; testing 0x80
// here would refuse an exit signal, not a namespace.
const cloneNewNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// The calls of each refusal. The numbers differ between amd64 and arm64
// (asm-generic) but the names exist on both; amd64's calls that arm64
// never had (chmod, chown, utimes...: there only the *at forms exist)
// are legacyMetadataCalls, in seccomp_linux_amd64.go.
var (
	// io_uring and the keyring: EACCES, as they always were.
	ioUringKeyringCalls = []uint32{
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	}
	// Namespaces, the mount tree, and the kernel's riskiest interfaces.
	alwaysRefusedCalls = []uint32{
		unix.SYS_UNSHARE, unix.SYS_SETNS,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
		unix.SYS_OPEN_TREE_ATTR, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOUNT_SETATTR,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
		unix.SYS_FANOTIFY_INIT,
	}
	sysvIPCCalls = []uint32{
		unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
		unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
		unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	}
	// firstUnreviewed is file_setattr (Linux 6.17, the same number on
	// amd64 and arm64), the first call this filter was not written for:
	// it sets a file's flags (chattr's nodump, noatime, immutable, sync)
	// by path, as FS_IOC_FSSETXATTR does by descriptor, which Landlock
	// does not see. Under read-only it set them on ~/.gitconfig,
	// ~/.ssh/id_rsa and .git/config. Every call from it on is refused, so
	// that the next kernel's new calls wait for a review (file_getattr,
	// 468, only reads them).
	firstUnreviewed uint32 = unix.SYS_FILE_SETATTR
	// modeCalls change a file's mode; with broker they go to the first
	// stage, which changes the mode of a file in the write set itself
	// (brokermode_linux.go) and refuses every other.
	modeCalls = []uint32{unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2}
	// refusedModeBits are the bits no mode change of a launch sets: set-id,
	// sticky, and other users' write (changeMode refuses the same).
	refusedModeBits uint32 = unix.S_ISUID | unix.S_ISGID | unix.S_ISVTX | unix.S_IWOTH
	metadataCalls          = []uint32{unix.SYS_FCHOWN, unix.SYS_FCHOWNAT}
	// xattrCalls are refused as a file system without extended attributes
	// refuses them (EOPNOTSUPP): cp -p, cp -a and install -m then set the
	// mode alone (which the broker serves), where EPERM made them fail
	// ("preserving permissions").
	xattrCalls = []uint32{
		unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_SETXATTRAT,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_REMOVEXATTRAT,
	}
)

// insn is one BPF instruction whose jump targets are labels ("" is the
// next instruction).
type insn struct {
	label  string // this instruction's own label
	code   uint16
	k      uint32
	jt, jf string
}

// assemble resolves the labels into relative jumps.
func assemble(prog []insn) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		f := unix.SockFilter{Code: in.code, K: in.k}
		for _, j := range []struct {
			to  string
			off *uint8
		}{{in.jt, &f.Jt}, {in.jf, &f.Jf}} {
			if j.to == "" {
				continue
			}
			t, ok := at[j.to]
			if !ok || t <= i || t-i-1 > 255 {
				return nil, fmt.Errorf("bad jump to %q", j.to)
			}
			*j.off = uint8(t - i - 1)
		}
		out[i] = f
	}
	return out, nil
}

// filterOpts choose what the filter lets through beyond its fixed
// refusals.
type filterOpts struct {
	// network: IPv4 and IPv6 sockets (the network capability, or a launch
	// in a network namespace of its own: its loopback alone).
	network bool
	// tcpUDP: of the IPv4 and IPv6 sockets, only TCP's and UDP's (a
	// stream or a datagram socket, protocol 0, TCP or UDP). Landlock's
	// port rules hold TCP alone: +network to named ports must not open
	// SCTP or Multipath TCP, which would connect to any port.
	tcpUDP bool
	// metadata: refuse every call that changes a file's mode, owner, times
	// or extended attributes (chmod, chown, utimensat, setxattr and their
	// families), by path or by descriptor. Landlock does not cover them;
	// a launch that cannot make everything outside its write set
	// read-only by a mount namespace refuses them all.
	metadata bool
	// sysvIPC: System V IPC is allowed (the launch has an IPC namespace of
	// its own); otherwise refused.
	sysvIPC bool
	// broker: the launch's child hands the filter's listener to the first
	// stage (fork_linux.go), which makes the metadata changes the program
	// may make (with metadata: a mode or times in its write set,
	// brokermode_linux.go) and refuses the others.
	broker bool
	// opens: with broker, every open with O_CREAT or for writing, every
	// unlink, rename and new name goes to the first stage too, which
	// makes new files at the project's top (broker_linux.go): a capability
	// that writes the project.
	opens bool
	// namesOnly: with opens, the first stage serves no directory (the
	// second stage's, whose mounts hold the rest): a call that makes a
	// name or writes a file goes to it, no unlink.
	namesOnly bool
}

// filter builds the BPF program.
func filter(o filterOpts) ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("no socket filter for %s", runtime.GOARCH)
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	errno := func(e unix.Errno) uint32 { return uint32(unix.SECCOMP_RET_ERRNO) | uint32(e) }
	p := []insn{
		{code: ld, k: offArch},
		{code: jeq, k: arch, jt: "nr", jf: "kill"},
		{label: "nr", code: ld, k: offNr},
	}
	if runtime.GOARCH == "amd64" {
		p = append(p, insn{code: jge, k: 0x40000000, jt: "eacces"})
	}
	// file_setattr and every call newer than it: ENOSYS, what a kernel
	// without them answers (programs that try them fall back to what the
	// rest of the filter judges).
	p = append(p, insn{code: jge, k: firstUnreviewed, jt: "enosys"})
	// The calls whose arguments the filter reads come first: the kernel
	// skips the filter for every other allowed call.
	p = append(p,
		insn{code: jeq, k: unix.SYS_IOCTL, jt: "ioctl"},
		insn{code: jeq, k: unix.SYS_SOCKET, jt: "family"},
		insn{code: jeq, k: unix.SYS_SOCKETPAIR, jt: "pair"},
		insn{code: jeq, k: unix.SYS_CLONE, jt: "clone"},
		insn{code: jeq, k: unix.SYS_CLONE3, jt: "enosys"},
		insn{code: jeq, k: unix.SYS_PRLIMIT64, jt: "prlimit"},
		insn{code: jeq, k: unix.SYS_SETPRIORITY, jt: "setpriority"},
		insn{code: jeq, k: unix.SYS_IOPRIO_SET, jt: "ioprio"},
	)
	for _, nr := range selfOnlyCalls {
		p = append(p, insn{code: jeq, k: nr, jt: "self"})
	}
	if !o.metadata {
		// Mode changes are the kernel's here (the launch's mounts, or
		// the sandbox's, keep them to its write set), but none sets a
		// set-id or sticky bit or lets other users write, as the broker
		// refuses them where it makes them (brokermode_linux.go): the
		// nineteenth attack run left a set-uid copy of id, which another
		// user ran as the agent's user, and world-writable directories.
		// The mode is an argument, which a filter reads. With the
		// broker the rest go to it, which refuses a file with a second
		// name (a hard link into pnpm's store: brokermode_linux.go).
		p = append(p,
			insn{code: jeq, k: unix.SYS_FCHMOD, jt: "mode1"},
			insn{code: jeq, k: unix.SYS_FCHMODAT, jt: "mode2"},
			insn{code: jeq, k: unix.SYS_FCHMODAT2, jt: "mode2"},
		)
		for _, nr := range legacyModeCalls {
			p = append(p, insn{code: jeq, k: nr, jt: "mode1"})
		}
	}
	if o.broker && o.opens {
		p = append(p,
			// openat2's flags are in memory, where a filter cannot read
			// them, and it made src/.envrc past the first stage: ENOSYS,
			// as a kernel before 5.6 answers (programs fall back to
			// openat, which the first stage judges).
			insn{code: jeq, k: unix.SYS_OPENAT2, jt: "enosys"},
			insn{code: jeq, k: unix.SYS_OPENAT, jt: "openat"},
			// truncate(2) by path writes a file as an open for writing
			// does (writeExisting).
			insn{code: jeq, k: unix.SYS_TRUNCATE, jt: "notify"},
		)
		if !o.namesOnly {
			p = append(p, insn{code: jeq, k: unix.SYS_UNLINKAT, jt: "notify"})
		}
		p = append(p,
			insn{code: jeq, k: unix.SYS_RENAMEAT2, jt: "notify"},
			insn{code: jeq, k: unix.SYS_MKDIRAT, jt: "notify"},
			insn{code: jeq, k: unix.SYS_MKNODAT, jt: "notify"},
			insn{code: jeq, k: unix.SYS_SYMLINKAT, jt: "notify"},
			insn{code: jeq, k: unix.SYS_LINKAT, jt: "notify"},
			// The first stage keeps the umask it read of a thread
			// until the program sets one (broker_linux.go, umaskOf).
			insn{code: jeq, k: unix.SYS_UMASK, jt: "notify"},
		)
		if legacyOpen != 0 {
			p = append(p, insn{code: jeq, k: legacyOpen, jt: "open"})
		}
		for _, nr := range legacyBrokeredCalls {
			if nr != legacyOpen && !(o.namesOnly && legacyRemoval(nr)) {
				p = append(p, insn{code: jeq, k: nr, jt: "notify"})
			}
		}
	}
	refuse := func(calls []uint32, label string) {
		for _, nr := range calls {
			p = append(p, insn{code: jeq, k: nr, jt: label})
		}
	}
	refuse(ioUringKeyringCalls, "eacces")
	refuse(alwaysRefusedCalls, "eperm")
	if !o.sysvIPC {
		refuse(sysvIPCCalls, "eperm")
	}
	if o.metadata {
		// With the broker, a mode change goes to the first stage, which
		// makes it only where the program may write (brokermode_linux.go).
		mode := "eperm"
		if o.broker {
			mode = "notify"
		}
		refuse(modeCalls, mode)
		refuse(legacyModeCalls, mode)
		refuse(metadataCalls, "eperm")
		refuse(xattrCalls, "enotsup")
		refuse(legacyMetadataCalls, "eperm")
		// utimensat, by path or by a descriptor (its path NULL: futimens,
		// what touch does to the file it just opened, and what a
		// descriptor opened for reading does to ~/.gitconfig), goes to
		// the first stage with the broker, which sets the times of a file
		// the program may write; without it, it is refused.
		refuse([]uint32{unix.SYS_UTIMENSAT}, mode)
	} else if o.broker && o.opens {
		// Where the mounts keep these changes to the write set, a file
		// of the project may still have a second name outside it (a
		// hard link into pnpm's store): its times go to the broker,
		// which checks that it has one (the mode's go there below);
		// owners and extended attributes are refused as above. An
		// access ACL (system.posix_acl_access) set a mode that let
		// other users write past the check of chmod's mode, on the
		// store's file, and a default ACL on the project's top made the
		// user's next files world-writable (the twenty-first attack
		// run).
		refuse(metadataCalls, "eperm")
		refuse(xattrCalls, "enotsup")
		refuse(legacyMetadataCalls, "eperm")
		refuse([]uint32{unix.SYS_UTIMENSAT}, "notify")
	}
	p[len(p)-1].jf = "allow" // a number none of the lists holds
	if o.broker && o.opens {
		// An open that creates, or that writes or truncates (O_TRUNC
		// truncates a file opened for reading too): the program has no
		// right to write a file of the project but by the broker, which
		// refuses one with a second name (writeExisting).
		const flags = uint32(unix.O_CREAT | unix.O_WRONLY | unix.O_RDWR | unix.O_TRUNC)
		p = append(p,
			insn{label: "openat", code: ld, k: offArg2}, // the flags
			insn{code: jset, k: flags, jt: "notify", jf: "allow"},
		)
		if legacyOpen != 0 {
			p = append(p,
				insn{label: "open", code: ld, k: offArg1},
				insn{code: jset, k: flags, jt: "notify", jf: "allow"},
			)
		}
	}
	if o.broker {
		p = append(p, insn{label: "notify", code: ret, k: uint32(unix.SECCOMP_RET_USER_NOTIF)})
	}
	// The ioctls: the terminal's two, then the file ones, whatever the
	// options (refused as a file system without them answers, ENOTTY:
	// programs that probe for them fall back). The number is the low 32
	// bits of the argument, as the kernel reads it (unsigned int).
	p = append(p,
		insn{label: "ioctl", code: ld, k: offArg1},
		insn{code: jeq, k: ioctlTIOCSTI, jt: "eacces"},
		insn{code: jeq, k: ioctlTIOCLINUX, jt: "eacces"},
		insn{code: jeq, k: unix.TIOCSETD, jt: "eacces"},
		insn{code: jeq, k: unix.TIOCSWINSZ, jt: "eacces"},
		insn{code: jeq, k: unix.FICLONE, jt: "allow"},
		insn{code: jeq, k: unix.FICLONERANGE, jt: "allow"},
	)
	refuse(refusedIoctls, "enotty")
	p = append(p,
		insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: 0xff00},
		insn{code: jeq, k: ioctlBtrfsType << 8, jt: "enotty", jf: "allow"},
		insn{label: "clone", code: ld, k: offArg0}, // its flags on amd64 and arm64 (s390 swaps them)
		insn{code: jset, k: cloneNewNamespaces, jt: "eperm", jf: "allow"},
		// prlimit64 of another process: a limit is the owner's to set
		// on any process of the same user, and Landlock does not scope
		// it. A program lowered the first stage's open files to none
		// (its parent, with the filter alone), and the sweep after the
		// call looked at nothing; a CPU limit would end it. Its own (pid
		// 0, what setrlimit and ulimit call) is allowed.
		insn{label: "prlimit", code: ld, k: offArg0},
		insn{code: jeq, k: 0, jt: "allow", jf: "eperm"},
		// The scheduling of another process, the same way: a priority,
		// a policy, a CPU set or an I/O class is the owner's to set on
		// any process of the same user, and neither Landlock nor the
		// kernel's ptrace check judges it. The thirty-first attack run
		// set the namespace's init to SCHED_IDLE and nice 19; without
		// namespaces, renice -u and ionice -p reach every process of
		// the user (the agent's client, the editor, the desktop). Its
		// own (pid 0: nice, ionice and taskset of a command they start,
		// setpriority(PRIO_PROCESS, 0)) is allowed; a thread's own by its
		// id is not (pthread_setaffinity_np: EPERM, which the runtimes
		// that try it pass over).
		insn{label: "self", code: ld, k: offArg0},
		insn{code: jeq, k: 0, jt: "allow", jf: "eperm"},
		insn{label: "setpriority", code: ld, k: offArg0}, // which
		insn{code: jeq, k: unix.PRIO_PROCESS, jf: "eperm"},
		insn{code: ld, k: offArg1}, // who
		insn{code: jeq, k: 0, jt: "allow", jf: "eperm"},
		insn{label: "ioprio", code: ld, k: offArg0}, // which
		insn{code: jeq, k: ioprioWhoProcess, jf: "eperm"},
		insn{code: ld, k: offArg1}, // who
		insn{code: jeq, k: 0, jt: "allow", jf: "eperm"},
	)
	if !o.metadata {
		mode := "allow"
		if o.broker && o.opens {
			mode = "modenotify"
		}
		p = append(p,
			insn{label: "mode1", code: ld, k: offArg1}, // fchmod's and chmod's mode
			insn{code: jset, k: refusedModeBits, jt: "eperm", jf: mode},
			insn{label: "mode2", code: ld, k: offArg2}, // fchmodat's and fchmodat2's
			insn{code: jset, k: refusedModeBits, jt: "eperm", jf: mode},
		)
		if mode != "allow" {
			p = append(p, insn{label: mode, code: ret, k: uint32(unix.SECCOMP_RET_USER_NOTIF)})
		}
	}
	p = append(p,
		// socketpair: a pair that reaches only itself (stream, sequenced
		// packets), never datagrams, whatever the flags.
		insn{label: "pair", code: ld, k: offArg1},
		insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: ^uint32(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)},
		insn{code: jeq, k: unix.SOCK_STREAM, jt: "allow"},
		insn{code: jeq, k: unix.SOCK_SEQPACKET, jt: "allow", jf: "eacces"},
		insn{label: "family", code: ld, k: offArg0},
	)
	inet := "allow"
	if o.tcpUDP {
		inet = "inet"
	}
	if o.network {
		p = append(p,
			insn{code: jeq, k: unix.AF_INET, jt: inet},
			insn{code: jeq, k: unix.AF_INET6, jt: inet},
		)
	}
	p = append(p,
		insn{code: jeq, k: unix.AF_NETLINK, jf: "eacces"},
		insn{code: ld, k: offArg2}, // the protocol
		insn{code: jeq, k: unix.NETLINK_ROUTE, jt: "allow", jf: "eacces"},
	)
	if o.network && o.tcpUDP {
		p = append(p,
			insn{label: "inet", code: ld, k: offArg2}, // the protocol
			insn{code: jeq, k: 0, jt: "inettype"},
			insn{code: jeq, k: unix.IPPROTO_TCP, jt: "inettype"},
			insn{code: jeq, k: unix.IPPROTO_UDP, jf: "eacces"},
			insn{label: "inettype", code: ld, k: offArg1}, // the type, less its flags
			insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: ^uint32(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)},
			insn{code: jeq, k: unix.SOCK_STREAM, jt: "allow"},
			insn{code: jeq, k: unix.SOCK_DGRAM, jt: "allow", jf: "eacces"},
		)
	}
	p = append(p,
		insn{label: "eacces", code: ret, k: errno(unix.EACCES)},
		insn{label: "eperm", code: ret, k: errno(unix.EPERM)},
		insn{label: "enosys", code: ret, k: errno(unix.ENOSYS)},
		insn{label: "enotsup", code: ret, k: errno(unix.EOPNOTSUPP)},
		insn{label: "enotty", code: ret, k: errno(unix.ENOTTY)},
		insn{label: "allow", code: ret, k: uint32(unix.SECCOMP_RET_ALLOW)},
		insn{label: "kill", code: ret, k: uint32(unix.SECCOMP_RET_KILL_PROCESS)},
	)
	return assemble(p)
}

// installFilter installs the filter on the calling thread (locked to the
// goroutine that execs: execve keeps that thread's filter). The filter
// with the broker is forkJailed's child's (fork_linux.go).
func installFilter(o filterOpts) error {
	prog, err := filter(o)
	if err != nil {
		return err
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fp)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}
