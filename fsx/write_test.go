package fsx

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, durable := range []bool{true, false} {
		if err := WriteFile(path, []byte("one"), 0o644, durable); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "one" {
			t.Fatalf("content %q", b)
		}
		// The mode asked for, whatever the umask (settings files keep
		// theirs).
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v", fi.Mode())
		}
		if err := WriteFile(path, []byte("two"), 0o600, durable); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "two" {
			t.Fatalf("replaced content %q", b)
		}
	}
	// A failed write loses nothing and leaves no temp file: a directory
	// where the file should go cannot be replaced by a rename.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x"), 0o600, true); err == nil {
		t.Fatal("renamed a file over a non-empty directory")
	}
	if _, err := os.Stat(filepath.Join(sub, "keep")); err != nil {
		t.Fatal("the directory was touched:", err)
	}
	// Nor in a directory that does not exist.
	if err := WriteFile(filepath.Join(dir, "absent", "f"), []byte("x"), 0o600, true); err == nil {
		t.Fatal("wrote into a missing directory")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}
