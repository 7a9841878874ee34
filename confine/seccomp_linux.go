//go:build linux

package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The socket filter closes what Landlock (ABI 4 to 7) leaves open: Unix
// sockets (the keyring's D-Bus, ssh-agent, the Docker daemon), UDP and
// raw sockets, and Multipath TCP, which Landlock's TCP rules do not see.
// socket(2) is refused for every family but netlink, and, with the
// network capability, IPv4 and IPv6; io_uring, which can open and connect
// sockets without socket(2), is refused; so are the ioctls that type into
// a terminal (TIOCSTI, TIOCLINUX), and the kernel's key retention service
// (keyctl, add_key, request_key): the user's keyrings hold what Kerberos,
// AFS and other tools keep there, out of Landlock's reach. A system call of another
// architecture than the one built for kills the process (its table would
// be unfiltered); amd64's x32 numbers are refused.

// seccompData offsets (struct seccomp_data).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits of args[0] on a little-endian machine
	offArg1 = 24 // the low 32 bits of args[1]
)

// Terminal ioctls that put input into a terminal, which a shell reading
// it then runs outside any confinement (TIOCSTI; TIOCLINUX's selection
// paste on a virtual console). Landlock's device-ioctl right covers
// terminals the program opens itself, not the ones it inherits (its
// standard input may be the user's terminal).
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// io_uring's system calls have the same numbers on amd64 and arm64.
const (
	sysIoUringSetup    = 425
	sysIoUringEnter    = 426
	sysIoUringRegister = 427
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
	// network: IPv4 and IPv6 sockets (the network capability).
	network bool
	// metadata: refuse every call that changes a file's mode, owner, times
	// or extended attributes (chmod, chown, utimensat, setxattr and their
	// families), by path or by descriptor. Landlock does not cover them;
	// a launch that cannot make everything outside its write set
	// read-only by a mount namespace refuses them all.
	metadata bool
	// sysvIPC: System V IPC is allowed (the launch has an IPC namespace of
	// its own); otherwise refused.
	sysvIPC bool
}

// filter builds the BPF program.
func filter(o filterOpts) ([]unix.SockFilter, error) {
	network := o.network
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
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	refuse := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EACCES)
	p := []insn{
		{code: ld, k: offArch},
		{code: jeq, k: arch, jt: "nr", jf: "kill"},
		{label: "nr", code: ld, k: offNr},
	}
	if runtime.GOARCH == "amd64" {
		p = append(p, insn{code: jge, k: 0x40000000, jt: "refuse", jf: "calls"})
	}
	p = append(p,
		insn{label: "calls", code: jeq, k: sysIoUringSetup, jt: "refuse"},
		insn{code: jeq, k: sysIoUringEnter, jt: "refuse"},
		insn{code: jeq, k: sysIoUringRegister, jt: "refuse"},
		insn{code: jeq, k: unix.SYS_KEYCTL, jt: "refuse"},
		insn{code: jeq, k: unix.SYS_ADD_KEY, jt: "refuse"},
		insn{code: jeq, k: unix.SYS_REQUEST_KEY, jt: "refuse"},
		insn{code: jeq, k: unix.SYS_IOCTL, jt: "ioctl"},
		insn{code: jeq, k: unix.SYS_SOCKET, jt: "family", jf: "allow"},
		insn{label: "ioctl", code: ld, k: offArg1},
		insn{code: jeq, k: ioctlTIOCSTI, jt: "refuse"},
		insn{code: jeq, k: ioctlTIOCLINUX, jt: "refuse", jf: "allow"},
		insn{label: "family", code: ld, k: offArg0},
		insn{code: jeq, k: unix.AF_NETLINK, jt: "allow"},
	)
	if network {
		p = append(p,
			insn{code: jeq, k: unix.AF_INET, jt: "allow"},
			insn{code: jeq, k: unix.AF_INET6, jt: "allow"},
		)
	}
	p = append(p,
		insn{label: "refuse", code: ret, k: refuse},
		insn{label: "allow", code: ret, k: allow},
		insn{label: "kill", code: ret, k: uint32(unix.SECCOMP_RET_KILL_PROCESS)},
	)
	return assemble(p)
}

// installFilter installs the filter on the calling thread (locked to the
// goroutine that execs: execve keeps that thread's filter).
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
