package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("hello"), 0o644)
	if b, err := ReadRegular(f, 5, 0); err != nil || string(b) != "hello" {
		t.Errorf("control: %q %v", b, err)
	}
	if _, err := ReadRegular(f, 4, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over max: %v", err)
	}
	empty := filepath.Join(dir, "e")
	os.WriteFile(empty, nil, 0o644)
	if b, err := ReadRegular(empty, 5, 0); err != nil || b == nil {
		t.Errorf("empty file: %v %v", b, err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "none"), 5, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	link := filepath.Join(dir, "l")
	os.Symlink(f, link)
	if _, err := ReadRegular(link, 5, syscall.O_NOFOLLOW); err == nil {
		t.Error("O_NOFOLLOW followed a symlink")
	}
	if _, err := ReadRegular(dir, 5, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadRegular(fifo, 5, 0); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocks")
	}
}
