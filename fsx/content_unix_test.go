//go:build unix

package fsx

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUserWritable: a root-owned toolchain is not the user's to change;
// anything under a temp dir (world-writable /tmp) or a directory owned by
// another user than root is.
func TestUserWritable(t *testing.T) {
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls")
	}
	ls, _ = filepath.EvalSymlinks(ls)
	fi, _ := os.Stat(ls)
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 {
		t.Skipf("%s is not root's here", ls)
	}
	if UserWritable(ls) {
		t.Errorf("%s (root's, 0755 up to /) counts as user-writable", ls)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "cargo")
	_ = os.WriteFile(exe, []byte("x"), 0o755)
	if !UserWritable(exe) {
		t.Errorf("%s under a temp dir is not user-writable", exe)
	}
	if !UserWritable(filepath.Join(dir, "missing")) {
		t.Error("a missing file in a temp dir counts as root's")
	}
	if UserWritable(filepath.Join(filepath.Dir(ls), "loopguard-absent")) {
		t.Error("a missing file in a root-owned dir counts as writable")
	}
	if !UserWritable(filepath.Join(dir, "missing", "deeper")) {
		t.Error("a path below a missing dir counts as root's")
	}
}
