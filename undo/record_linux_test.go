//go:build linux

package undo

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listing is the tree below dir: every path with its type and mode, a
// link's target, a file's content hash; .git left out.
func listing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", tg)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// project makes a project of files under a fresh directory, with a state
// directory beside it.
func project(t testing.TB, files map[string]string) (proj, stateDir string) {
	t.Helper()
	root := t.TempDir()
	proj, stateDir = filepath.Join(root, "proj"), filepath.Join(root, "state")
	for name, content := range files {
		p := filepath.Join(proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proj, stateDir
}

func mustDo(t testing.TB, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestUndoRestores: a call deletes a directory, an untracked file and a
// .env, rewrites a file, chmods one, adds a link and a file; undo puts
// the tree back as it was, mode and content, and leaves node_modules
// (not recorded) as the call left it.
func TestUndoRestores(t *testing.T) {
	for _, walk := range []bool{false, true} {
		t.Run(fmt.Sprintf("walk=%v", walk), func(t *testing.T) {
			noWatch = walk
			defer func() { noWatch = false }()
			testUndoRestores(t)
		})
	}
}

func testUndoRestores(t *testing.T) {
	proj, st := project(t, map[string]string{"docs/a.md": "a\n", "docs/deep/b.md": "b\n",
		"src/main.go": "package main\n", "src/sub/x.txt": "x\n", "notes.txt": "untracked\n",
		".env": "SECRET=1\n", "README.md": "readme\n", "run.sh": "#!/bin/sh\n", "node_modules/a/index.js": "a\n",
		".git/HEAD": "ref: refs/heads/main\n",
	})
	mustDo(t, os.Chmod(filepath.Join(proj, "run.sh"), 0o755), os.Symlink("README.md", filepath.Join(proj, "link")))
	want := listing(t, proj)
	rec, err := Begin(Options{StateDir: st, Project: proj, Command: "python3 -c ..."})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Meta().Left; len(got) != 1 || got[0] != "node_modules" {
		t.Errorf("left out %v, want node_modules", got)
	}
	mustDo(t, os.RemoveAll(filepath.Join(proj, "src")), os.Remove(filepath.Join(proj, "notes.txt")), os.Remove(filepath.Join(proj, ".env")),
		os.WriteFile(filepath.Join(proj, "README.md"), []byte("rewritten, and longer\n"), 0o644),
		os.Chmod(filepath.Join(proj, "run.sh"), 0o600), os.Remove(filepath.Join(proj, "link")), os.Symlink("/etc/passwd", filepath.Join(proj, "link")),
		os.WriteFile(filepath.Join(proj, "new.txt"), []byte("new\n"), 0o644), os.Mkdir(filepath.Join(proj, "newdir"), 0o755),
		os.WriteFile(filepath.Join(proj, "node_modules/a/index.js"), []byte("changed\n"), 0o644),
		os.Rename(filepath.Join(proj, "docs"), filepath.Join(proj, "moved")), os.WriteFile(filepath.Join(proj, "moved/deep/b.md"), []byte("bb\n"), 0o644))
	mustDo(t, rec.Finish())
	s, _ := Open(st, proj)
	u, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	p, err := u.Prepare("")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changed) != 0 || len(p.NotRecorded) != 0 {
		t.Errorf("changed %v, not recorded %v", p.Changed, p.NotRecorded)
	}
	res, err := u.Apply(p)
	if err != nil || len(res.Failed) != 0 {
		t.Fatalf("apply: %v %v", err, res.Failed)
	}
	got := listing(t, proj)
	want = strings.Replace(want, fmt.Sprintf("node_modules/a/index.js -rw-r--r-- %x", sha256.Sum256([]byte("a\n"))),
		fmt.Sprintf("node_modules/a/index.js -rw-r--r-- %x", sha256.Sum256([]byte("changed\n"))), 1)
	if got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s", got, want)
	}
	// Undone: a second undo of the last call says so.
	if _, err := u.Prepare(""); err == nil || !strings.Contains(err.Error(), "undone already") {
		t.Errorf("second undo: %v", err)
	}
}

// TestUndoLeavesLaterChanges: a path changed again after the call is left
// as it is and listed; the rest is reverted.
func TestUndoLeavesLaterChanges(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	rec, err := Begin(Options{StateDir: st, Project: proj})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("call\n"), 0o644), os.WriteFile(filepath.Join(proj, "b.txt"), []byte("call\n"), 0o644))
	mustDo(t, rec.Finish())
	mustDo(t, os.WriteFile(filepath.Join(proj, "b.txt"), []byte("human\n"), 0o644))
	s, _ := Open(st, proj)
	u, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	p, err := u.Prepare("")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changed) != 1 || p.Changed[0] != "b.txt" || len(p.PutBack) != 1 || p.PutBack[0].Path != "a.txt" {
		t.Fatalf("plan: put back %v, changed %v", p.PutBack, p.Changed)
	}
	if _, err := u.Apply(p); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "a\n", "b.txt": "human\n"} {
		if b, _ := os.ReadFile(filepath.Join(proj, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}

// TestRecordNothingWrittenCopiesNothing: a second record of an unchanged
// project copies no blob (the first, the control, copies every file).
func TestRecordNothingWrittenCopiesNothing(t *testing.T) {
	proj, st := project(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
	// A clock past the window in which a file's times cannot be trusted.
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.Copied != 2 {
		t.Errorf("first record copied %d files, want 2", m.Copied)
	}
	mustDo(t, rec.Finish())
	rec, err = Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if m := rec.Meta(); m.Copied != 0 || m.CopiedBytes != 0 {
		t.Errorf("second record copied %d files (%d bytes), want none", m.Copied, m.CopiedBytes)
	}
	mustDo(t, rec.Finish())
}

// BenchmarkRecord: a record before and after a call that writes nothing,
// in the project LOOPGUARD_UNDO_BENCH names (a git repository of 10,000
// files for the bound); the store's first record is taken before the
// timer starts.
func BenchmarkRecord(b *testing.B) {
	proj := os.Getenv("LOOPGUARD_UNDO_BENCH")
	if proj == "" {
		b.Skip("LOOPGUARD_UNDO_BENCH names no project")
	}
	st := filepath.Join(b.TempDir(), "state")
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
	if err != nil {
		b.Fatal(err)
	}
	mustDo(b, rec.Finish())
	b.ResetTimer()
	for b.Loop() {
		rec, err := Begin(Options{StateDir: st, Project: proj, Now: later})
		if err != nil {
			b.Fatal(err)
		}
		mustDo(b, rec.Finish())
	}
}
