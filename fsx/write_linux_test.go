//go:build linux

package fsx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// WriteFileAt replaces name in the directory with the bytes and mode
// given, never writing through a link at name (control: a plain file is
// replaced), and leaves no temp file; the temp names differ each time.
func TestWriteFileAt(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, name := range []string{"link", "plain", "new"} {
		if err := WriteFileAt(fd, name, []byte("put back\n"), 0o755); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fi, err := os.Lstat(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 || string(b) != "put back\n" {
			t.Errorf("%s: %v %v %q", name, fi.Mode(), err, b)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "outside\n" {
		t.Errorf("written through the link: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	a, _ := tempName()
	b, _ := tempName()
	if a == b || !strings.HasPrefix(a, TempPrefix) {
		t.Errorf("temp names %q %q", a, b)
	}
}

// WriteFileAtLocked writes through git's lock, NAME.lock: while one is
// there (a git writing name) it fails and leaves both as they were;
// control: without it, name is replaced and no lock is left.
func TestWriteFileAtLocked(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	index := filepath.Join(dir, "index")
	if err := os.WriteFile(index, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index+".lock", []byte("git's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtLocked(fd, "index", []byte("new"), 0o644); err == nil {
		t.Error("written while git held the lock")
	}
	if b, _ := os.ReadFile(index); string(b) != "old" {
		t.Errorf("index while locked: %q", b)
	}
	if b, _ := os.ReadFile(index + ".lock"); string(b) != "git's" {
		t.Errorf("git's lock: %q", b)
	}
	os.Remove(index + ".lock")
	if err := WriteFileAtLocked(fd, "index", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(index); string(b) != "new" {
		t.Errorf("control: index %q", b)
	}
	if _, err := os.Lstat(index + ".lock"); err == nil {
		t.Error("control: the lock was left")
	}
}
