// Package testfs makes the files a test needs, failing the test on any
// error: the one copy of "make the parent directories, then write".
package testfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Write writes body to path with mode, making its parent directories.
func Write(tb testing.TB, path string, body []byte, mode os.FileMode) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, body, mode); err != nil {
		tb.Fatal(err)
	}
}

// Tree writes body with mode to each name below root ("/"-separated).
func Tree(tb testing.TB, root string, body []byte, mode os.FileMode, names ...string) {
	tb.Helper()
	for _, n := range names {
		Write(tb, filepath.Join(root, filepath.FromSlash(n)), body, mode)
	}
}

// Chown gives every entry of the tree at root, root included and links
// themselves, to uid and gid: a test run as root hands what it made to the
// unprivileged user it runs a program as (root ignores file modes).
func Chown(tb testing.TB, root string, uid, gid int) {
	tb.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Read is path's content; a file that cannot be read fails the test.
func Read(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
