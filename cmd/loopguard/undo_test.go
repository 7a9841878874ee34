//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/undo"
)

// TestUndoRun: undo says what it will do and does nothing when the human
// says no; yes puts the file back; --list shows the record, undone.
func TestUndoRun(t *testing.T) {
	root := t.TempDir()
	proj, stateDir := filepath.Join(root, "proj"), filepath.Join(root, "state")
	if err := os.MkdirAll(filepath.Join(proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, "a.txt")
	if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := undo.Begin(undo.Options{StateDir: stateDir, Project: proj, Command: "python3 -c x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	answer := false
	var audited string
	o := &undoOptions{out: &out, stateDir: stateDir, project: filepath.Join(proj, "sub", ".."),
		confirm: func(string) (bool, error) { return answer, nil },
		audit:   func(d string) error { audited = d; return nil }}
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Will put back (1):\n  a.txt\n") || !strings.Contains(out.String(), "Nothing was changed.") {
		t.Errorf("said:\n%s", out.String())
	}
	if b, _ := os.ReadFile(file); string(b) != "after\n" {
		t.Fatalf("a no changed the file: %q", b)
	}
	answer = true
	out.Reset()
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "before\n" {
		t.Errorf("a.txt = %q after undo\n%s", b, out.String())
	}
	if !strings.Contains(audited, "put back 1") {
		t.Errorf("audit detail %q", audited)
	}
	out.Reset()
	o.list = true
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), rec.ID()) || !strings.Contains(out.String(), "[undone") {
		t.Errorf("--list:\n%s", out.String())
	}
	// No record for another directory: a clear error.
	o.list, o.project = false, root
	if err := undoRun(o); err == nil || !strings.Contains(err.Error(), "no undo record") {
		t.Errorf("undo where nothing was recorded: %v", err)
	}
}
