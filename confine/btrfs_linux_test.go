//go:build linux

package confine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// btrfsDir is the top of a btrfs file system made for the test (a sparse
// image, loop-mounted: root only, as the other mounting tests), mode
// 0755, unmounted and removed after it. Without root the test is
// skipped; as root without mkfs.btrfs (Debian: btrfs-progs, which make
// deps installs) or a kernel that mounts it, skipped too, or failed
// under LOOPGUARD_REQUIRE_BTRFS=1 (make test).
func btrfsDir(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a loop mount needs root")
	}
	lacking := func(why string, args ...any) {
		t.Helper()
		if os.Getenv("LOOPGUARD_REQUIRE_BTRFS") == "1" {
			t.Fatalf("LOOPGUARD_REQUIRE_BTRFS=1 but "+why, args...)
		}
		t.Skipf(why, args...)
	}
	mkfs, err := exec.LookPath("mkfs.btrfs")
	if err != nil {
		if mkfs, err = exec.LookPath("/usr/sbin/mkfs.btrfs"); err != nil {
			lacking("no mkfs.btrfs (btrfs-progs): run make deps")
		}
	}
	top, err := os.MkdirTemp("", "lg-btrfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	img, mnt := filepath.Join(top, "img"), filepath.Join(top, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.btrfs: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		lacking("the kernel does not mount a btrfs image here: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	for _, p := range []string{top, mnt} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return mnt
}

// readOnlySubvol reports whether the subvolume at dir is read-only.
func readOnlySubvol(t *testing.T, dir string) bool {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var v uint64
	// BTRFS_IOC_SUBVOL_GETFLAGS
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x80089419, uintptr(unsafe.Pointer(&v))); e != 0 {
		t.Fatalf("%s: BTRFS_IOC_SUBVOL_GETFLAGS: %v", dir, e)
	}
	return v&2 != 0
}

// TestFilterBtrfs: on a real btrfs, whatever the options, no subvolume
// made in a directory and none made read-only, by its owner, root or
// not; cloning a file (FICLONE: cp --reflink) still runs. Controls: the
// same calls unfiltered.
func TestFilterBtrfs(t *testing.T) {
	mnt := btrfsDir(t)
	for _, f := range filterUsers(t) {
		t.Run(f.name(), func(t *testing.T) {
			dir := filepath.Join(mnt, f.name())
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, sv := range []string{"control", "filtered"} {
				if err := ioctlProbe("subvol", []string{dir, sv}); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "a"), []byte("content\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if f.uid >= 0 {
				for _, p := range []string{dir, filepath.Join(dir, "control"), filepath.Join(dir, "filtered"), filepath.Join(dir, "a")} {
					if err := os.Chown(p, f.uid, f.uid); err != nil {
						t.Fatal(err)
					}
				}
			}
			a := filepath.Join(dir, "a")
			f.calls(t, "", []call{
				callOf(0, "subvol", dir, "made"),
				callOf(0, "subvol-ro", filepath.Join(dir, "control")),
				callOf(0, "reflink", a, filepath.Join(dir, "b")),
			})
			if _, err := os.Stat(filepath.Join(dir, "made")); err != nil || !readOnlySubvol(t, filepath.Join(dir, "control")) {
				t.Fatalf("the controls did not take: %v", err)
			}
			for _, opts := range []string{"-", "network,metadata,sysv"} {
				f.calls(t, opts, []call{
					callOf(unix.ENOTTY, "subvol", dir, ".git"),
					callOf(unix.ENOTTY, "subvol-ro", filepath.Join(dir, "filtered")),
					callOf(0, "reflink", a, filepath.Join(dir, "c")),
					callOf(0, "run", "/bin/cp", "--reflink=always", a, filepath.Join(dir, "d")),
				})
			}
			if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
				t.Error("a subvolume was made under the filter")
			}
			if readOnlySubvol(t, filepath.Join(dir, "filtered")) {
				t.Error("a subvolume was made read-only under the filter")
			}
			for _, c := range []string{"b", "c", "d"} {
				if b, err := os.ReadFile(filepath.Join(dir, c)); err != nil || string(b) != "content\n" {
					t.Errorf("the clone %s: %q %v", c, b, err)
				}
			}
		})
	}
}

// TestJailBtrfs: a project on btrfs. Under every capability the program
// makes no subvolume in the project (where read-only may make nothing,
// and project-write's new names go through the broker: a subvolume named
// .claude or src/.git, or a snapshot of a tree the program filled, would
// not) and makes
// none read-only; it reads the project, and under project-write clones a
// file with cp --reflink=always (controls).
func TestJailBtrfs(t *testing.T) {
	mnt := btrfsDir(t)
	bothModesIn(t, mnt, func(t *testing.T, j *jail) {
		sub := filepath.Join(j.project, "vendor")
		if err := ioctlProbe("subvol", []string{j.project, "vendor"}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(sub, nobody, nobody); err != nil && os.Getuid() == 0 {
			t.Fatal(err)
		}
		for _, c := range []policy.Capability{readOnly, projectWrite} {
			for _, p := range [][]string{
				{"jail-ioctl", "subvol", j.project, ".claude"},
				{"jail-ioctl", "subvol", filepath.Join(j.project, "src"), ".git"},
				{"jail-ioctl", "subvol-ro", sub},
			} {
				out, code := j.launch(t, c, p...)
				checkProbe(t, append([]string{c.String()}, p...), out, code, false)
				if !strings.Contains(out, "inappropriate ioctl for device") {
					t.Errorf("%s %v: %q; want the ioctl itself refused", c, p, out)
				}
			}
			out, code := j.launch(t, c, "read", filepath.Join(j.project, "README.md"))
			checkProbe(t, []string{c.String(), "read README.md"}, out, code, true)
		}
		out, code := j.launch(t, projectWrite, "jail-sh", "cp --reflink=always README.md docs/copy.md")
		checkProbe(t, []string{"project-write cp --reflink=always"}, out, code, true)
		for _, p := range []string{".claude", "src/.git"} {
			if _, err := os.Lstat(filepath.Join(j.project, p)); err == nil {
				t.Errorf("%s was made", p)
			}
		}
		if b, err := os.ReadFile(filepath.Join(j.project, "docs/copy.md")); err != nil || string(b) != "original\n" {
			t.Errorf("the clone: %q %v", b, err)
		}
		if readOnlySubvol(t, sub) {
			t.Error("the project's subvolume was made read-only")
		}
	})
}
