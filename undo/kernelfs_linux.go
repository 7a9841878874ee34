//go:build linux

package undo

import (
	"errors"

	"golang.org/x/sys/unix"
)

// kernelFS are file systems that hold no one's files but the kernel's view
// of itself (its processes, devices, cgroups, tracing, security modules).
// Mounted inside a project (a root file system being built there, with
// its proc, sys and dev/pts mounted for a chroot), a record leaves the
// mount out, as a Skipped entry that names it, rather than list and copy
// it: /proc alone has tens of thousands of entries that change with every
// process, and reading some of them blocks or costs the kernel work.
var kernelFS = map[uint32]string{
	unix.PROC_SUPER_MAGIC:     "proc",
	unix.SYSFS_MAGIC:          "sysfs",
	unix.DEVPTS_SUPER_MAGIC:   "devpts",
	unix.CGROUP_SUPER_MAGIC:   "cgroup",
	unix.CGROUP2_SUPER_MAGIC:  "cgroup2",
	unix.DEBUGFS_MAGIC:        "debugfs",
	unix.TRACEFS_MAGIC:        "tracefs",
	unix.SECURITYFS_MAGIC:     "securityfs",
	unix.BPF_FS_MAGIC:         "bpf",
	unix.PSTOREFS_MAGIC:       "pstore",
	unix.EFIVARFS_MAGIC:       "efivarfs",
	unix.BINFMTFS_MAGIC:       "binfmt_misc",
	unix.AUTOFS_SUPER_MAGIC:   "autofs",
	unix.NSFS_MAGIC:           "nsfs",
	unix.SELINUX_MAGIC:        "selinuxfs",
	unix.SMACK_MAGIC:          "smackfs",
	unix.HUGETLBFS_MAGIC:      "hugetlbfs",
	unix.RDTGROUP_SUPER_MAGIC: "resctrl",
	unix.BINDERFS_SUPER_MAGIC: "binderfs",
	unix.XENFS_SUPER_MAGIC:    "xenfs",
	0x62656570:                "configfs",
	0x65735543:                "fusectl",
	0x19800202:                "mqueue",
}

// onKernelFS is the name of the kernel file system the directory open at
// fd is on ("" for any other, or when the kernel will not say).
func onKernelFS(fd int) string {
	t, err := fsType(fd)
	if err != nil {
		return ""
	}
	return kernelFS[t]
}

// fsType is the type (statfs's f_type) of the file system fd is on.
func fsType(fd int) (uint32, error) {
	var s unix.Statfs_t
	for {
		err := unix.Fstatfs(fd, &s)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return uint32(s.Type), err
	}
}

// kernelFSNote is a Skipped entry's note for a mount of the kernel file
// system name.
func kernelFSNote(name string) string {
	return "a " + name + " file system is mounted here (the kernel's, not files): not recorded"
}
