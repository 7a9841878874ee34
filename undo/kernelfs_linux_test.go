//go:build linux

package undo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordLeavesKernelFSOut: a proc and a sysfs mounted inside the
// project (a root file system being built there, for a chroot) are each
// recorded as one Skipped entry that names the file system, and nothing
// below them is listed or copied; a tmpfs mounted there is recorded as any
// directory is (the control), and undo puts back what the call changed
// on it and leaves the kernel's mounts alone.
func TestRecordLeavesKernelFSOut(t *testing.T) {
	needRoot(t)
	noWatch = true
	defer func() { noWatch = false }()
	proj, st := project(t, map[string]string{"rootfs/proc/.keep": "", "rootfs/sys/.keep": "", "data/.keep": "", "README.md": "readme\n"})
	mount(t, "proc", filepath.Join(proj, "rootfs/proc"))
	mount(t, "sysfs", filepath.Join(proj, "rootfs/sys"))
	mount(t, "tmpfs", filepath.Join(proj, "data"))
	x := filepath.Join(proj, "data/x")
	mustDo(t, os.WriteFile(x, []byte("before\n"), 0o644))
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "make rootfs"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.WriteFile(x, []byte("after\n"), 0o644), os.WriteFile(filepath.Join(proj, "README.md"), []byte("changed\n"), 0o644))
	mustDo(t, rec.Finish())
	s, _ := Open(st, proj)
	for _, m := range []string{rec.Meta().Before, "records/" + rec.Meta().ID + "/after"} {
		ents, found, err := s.manifest(m)
		if err != nil || !found {
			t.Fatalf("%s: %v %v", m, found, err)
		}
		notes := map[string]string{}
		for _, e := range ents {
			if strings.HasPrefix(e.Path, "rootfs/proc/") || strings.HasPrefix(e.Path, "rootfs/sys/") {
				t.Fatalf("%s lists %s, below a kernel file system", m, e.Path)
			}
			if e.Kind == Skipped {
				notes[e.Path] = e.Note
			}
		}
		if m != rec.Meta().Before {
			continue // the after-state holds what changed alone
		}
		if !strings.Contains(notes["rootfs/proc"], "a proc file system") || !strings.Contains(notes["rootfs/sys"], "a sysfs file system") || len(notes) != 2 {
			t.Errorf("%s: skipped %v, want the two kernel mounts alone (data, a tmpfs, is recorded)", m, notes)
		}
	}
	undoLast(t, st, proj)
	for f, want := range map[string]string{x: "before\n", filepath.Join(proj, "README.md"): "readme\n"} {
		if b, err := os.ReadFile(f); err != nil || string(b) != want {
			t.Errorf("after undo %s: %q %v", f, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "rootfs/proc/self/status")); err != nil {
		t.Errorf("the project's proc after undo: %v", err)
	}
}
