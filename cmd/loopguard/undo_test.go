//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
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
	if !strings.Contains(out.String(), rec.ID()) || !strings.Contains(out.String(), "[undone") ||
		!strings.Contains(out.String(), "The project's watcher is not running") {
		t.Errorf("--list:\n%s", out.String())
	}
	// No record for another directory: a clear error.
	o.list, o.project = false, root
	if err := undoRun(o); err == nil || !strings.Contains(err.Error(), "no undo record") {
		t.Errorf("undo where nothing was recorded: %v", err)
	}
}

// TestUndoListWatcher: undo --list says what the project's watcher does:
// why it could not watch (the reason escaped: it names project paths,
// which the jail chooses), or that it runs.
func TestUndoListWatcher(t *testing.T) {
	root := t.TempDir()
	proj, stateDir := filepath.Join(root, "proj"), filepath.Join(root, "state")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := undo.Begin(undo.Options{StateDir: stateDir, Project: proj, Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(); err != nil {
		t.Fatal(err)
	}
	s, err := undo.Open(stateDir, proj)
	if err != nil {
		t.Fatal(err)
	}
	// watch.failed, as docs/undo.md names it.
	reason := "2026-12-03T10:00:00Z x\x1b]0;owned\x07: it is on NFS\n"
	if err := os.WriteFile(filepath.Join(s.Dir, "watch.failed"), []byte(reason), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	o := &undoOptions{out: &out, stateDir: stateDir, project: proj, list: true}
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `could not watch it (2026-12-03T10:00:00Z x\x1b]0;owned\x07: it is on NFS): each record walks`) ||
		strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Errorf("--list after a failure:\n%q", out.String())
	}
	// Watch does not try again within the hour after a failure: the
	// failure is taken away, as an hour's passing would.
	if err := os.Remove(filepath.Join(s.Dir, "watch.failed")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- undo.Watch(ctx, stateDir, proj) }()
	defer func() {
		cancel()
		<-done
	}()
	for i := 0; ; i++ {
		if running, _ := s.WatchState(); running {
			break
		}
		if i == 500 {
			t.Fatal("the watcher did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out.Reset()
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "The project's watcher is running") {
		t.Errorf("--list with a watcher:\n%s", out.String())
	}
}

// TestShowPlanEscapesLeft: the left-out directories are names a confined
// program made; the sixteenth attack run's held ESC [2K and ESC [1A, which
// erased the plan above undo's prompt and wrote another. Each is shown
// escaped, and the count past the first named. Control: a plain name is
// shown as it is.
func TestShowPlanEscapesLeft(t *testing.T) {
	var out bytes.Buffer
	showPlan(&out, &undo.Plan{Meta: undo.Meta{ID: "r1", Command: "npm i", Left: []string{"node_modules", "x\x1b[2K\x1b[1A\rWill put back (1):/node_modules"}, LeftMore: 3}})
	got := out.String()
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("the plan holds raw control bytes: %q", got)
	}
	if !strings.Contains(got, `: node_modules, "x\x1b[2K\x1b[1A\rWill put back (1):/node_modules" and 3 more`) {
		t.Errorf("the left-out line: %q", got)
	}
}

// TestUndoScreensEscapeHiddenRunes: names a confined program chose that
// end in a rune rendering as nothing (U+3164 HANGUL FILLER) or as a blank
// (U+2800) showed as the name without it: "main.go\u3164" under "Will
// remove" read as main.go. The plan, the result and --list escape them,
// and a failure's reason is escaped as its path is. Controls: non-ASCII
// names are shown as they are.
func TestUndoScreensEscapeHiddenRunes(t *testing.T) {
	var out bytes.Buffer
	showPlan(&out, &undo.Plan{Meta: undo.Meta{ID: "r1", Command: "touch main.go\u3164"},
		PutBack: []undo.Entry{{Path: "café.txt", Kind: undo.File}, {Path: "日本.md", Kind: undo.File}},
		Remove:  []undo.Entry{{Path: "main.go\u3164", Kind: undo.File}, {Path: "docs\u2800", Kind: undo.Dir}}})
	showResult(&out, undo.Result{Removed: []string{"x"},
		Failed: map[string]string{"main.go\u3164": "not removed: changed\u2800\x1b[2K while undo ran"}}, nil)
	got := out.String()
	if strings.ContainsAny(got, "\u3164\u2800\x1b") {
		t.Errorf("the plan and result hold a hidden rune raw:\n%q", got)
	}
	for _, want := range []string{`Undo r1: "touch main.go\u3164", at`, "  \"main.go\\u3164\"\n", "  \"docs\\u2800/\"\n",
		`  "main.go\u3164": not removed: changed\u{2800}\x1b[2K while undo ran`,
		"Will put back (2):\n  café.txt\n  日本.md\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the plan and result lack %q:\n%s", want, got)
		}
	}

	root := t.TempDir()
	proj, stateDir := filepath.Join(root, "proj"), filepath.Join(root, "state")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"touch café.txt", "touch main.go\u3164"} {
		rec, err := undo.Begin(undo.Options{StateDir: stateDir, Project: proj, Command: command})
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Finish(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // records sort by their millisecond
	}
	var list strings.Builder
	if err := undoRun(&undoOptions{out: &list, stateDir: stateDir, project: proj, list: true}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(list.String(), '\u3164') || !strings.Contains(list.String(), `"touch main.go\u3164"`) ||
		!strings.Contains(list.String(), "  touch café.txt\n") {
		t.Errorf("--list:\n%s", list.String())
	}
}

// TestUndoUnrecordedAfterState: a call that left more than
// undo.MaxEntries entries in the project got no after-state, and --list
// and the plan said its launcher was killed; undo of any record failed,
// with nothing to say what to do. Now --list and the plan give the reason
// the record kept, and undo's error names the directory the entries are
// below, with a hint. Controls: once the call's files are gone the plan
// is shown; a record with no reason kept is said to be a killed
// launcher's.
func TestUndoUnrecordedAfterState(t *testing.T) {
	if testing.Short() {
		t.Skip("makes more than 200,000 files")
	}
	root := t.TempDir()
	proj, stateDir := filepath.Join(root, "proj"), filepath.Join(root, "state")
	junk := filepath.Join(proj, "junk")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The call's files, made beside the project and moved in by the
	// call (a watch on the project would hear each made in it: slow).
	stage := filepath.Join(root, "stage")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range undo.MaxEntries + 1 {
		f, err := os.Create(filepath.Join(stage, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	rec, err := undo.Begin(undo.Options{StateDir: stateDir, Project: proj, Command: "make junk"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stage, junk); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(); err == nil {
		t.Fatal("Finish recorded a project past MaxEntries")
	}
	const why = "the project has more than 200000 entries outside the directories undo leaves out"
	var out strings.Builder
	o := &undoOptions{out: &out, stateDir: stateDir, project: proj, list: true}
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "make junk [no after-state: could not be recorded: "+why+"]\n") {
		t.Errorf("--list:\n%s", out.String())
	}
	o.list = false
	o.confirm = func(string) (bool, error) { return false, nil }
	err = undoRun(o)
	var said bytes.Buffer
	cli.PrintError(&said, err)
	for _, want := range []string{"loopguard: error: " + why + "; of what undo had listed when it stopped, the most entries are below junk/ (at least ",
		"loopguard: hint: undo looks at the whole project, and cannot while it is past that bound: move out of the project or remove what made it so"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("undo past the bound said:\n%s\nwant %q", said.String(), want)
		}
	}
	// Controls.
	if err := os.RemoveAll(junk); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Its launcher could not record the state after it ("+why+"): every change since, by anyone, is reverted.\n") ||
		!strings.Contains(out.String(), "Will put back (1):\n  a.txt\n") {
		t.Errorf("the plan once the files are gone:\n%s", out.String())
	}
	s, err := undo.Open(stateDir, proj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.Dir, "records", rec.ID(), "unrecorded")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	o.list = true
	if err := undoRun(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Its launcher did not record the state after it (killed): every change since") ||
		!strings.Contains(out.String(), "make junk [no after-state: launcher killed]\n") {
		t.Errorf("a record with no reason kept:\n%s", out.String())
	}
}
