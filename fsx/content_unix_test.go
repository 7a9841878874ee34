//go:build unix

package fsx

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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

// A FIFO where a pinned executable was is refused at once: opening it
// must not wait for a writer (the hook would hang to its deadline).
// Control: the regular file beside it is digested.
func TestContentDigestFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cargo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ContentDigest(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was digested")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ContentDigest blocked on a FIFO")
	}
	reg := filepath.Join(dir, "rustc")
	if err := os.WriteFile(reg, []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ContentDigest(reg); err != nil {
		t.Fatal(err)
	}
}
