package fsx

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInherited: a descriptor without close-on-exec (as one a
// parent left open arrives) is closed; the standard three and a file
// this process opened (close-on-exec, as Go opens every one) stay.
func TestCloseInherited(t *testing.T) {
	// Raw descriptors: an os.File's finalizer would close the number
	// again, which may be another's by then.
	var p [2]int
	if err := unix.Pipe2(p[:], 0); err != nil { // neither close-on-exec
		t.Fatal(err)
	}
	rfd, wfd := p[0], p[1]
	defer unix.Close(rfd)
	if _, err := unix.FcntlInt(uintptr(rfd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	own, err := os.Create(filepath.Join(t.TempDir(), "own"))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	n, err := CloseInherited()
	if err != nil || n < 1 {
		t.Fatalf("closed %d (%v), want the pipe's write end at least", n, err)
	}
	if _, err := unix.FcntlInt(uintptr(wfd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Fatalf("the inherited descriptor %d is still open (%v)", wfd, err)
	}
	// Its reader sees the end of the pipe: no writer is left.
	if k, err := unix.Read(rfd, make([]byte, 1)); k != 0 || err != nil {
		t.Errorf("read after the close: %d, %v; want the end of file", k, err)
	}
	if _, err := unix.FcntlInt(uintptr(rfd), unix.F_GETFD, 0); err != nil {
		t.Errorf("the reader (close-on-exec) was closed: %v", err)
	}
	// Controls: what this process opened, and the standard three.
	if _, err := own.Write([]byte("x")); err != nil {
		t.Errorf("a file this process opened: %v", err)
	}
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			t.Errorf("descriptor %d: %v", fd, err)
		}
	}
}
