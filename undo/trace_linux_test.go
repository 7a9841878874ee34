//go:build linux

package undo

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestTraceSaysWhenCut: the written trace is bounded; once lines that ran
// at or after a time are cut from it, WrittenSince says so (cut) rather
// than list less. Controls: before the cut, and asked about a time after
// the newest line cut, it is complete.
func TestTraceSaysWhenCut(t *testing.T) {
	old := maxTraceBytes
	maxTraceBytes = 4 << 10
	defer func() { maxTraceBytes = old }()
	project := filepath.Join(t.TempDir(), "p")
	s, err := Open(filepath.Join(t.TempDir(), "state"), project)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	if err := s.NoteWrite("Write", project+"/Makefile", t0); err != nil {
		t.Fatal(err)
	}
	ws, cut, err := s.WrittenSince(time.Time{})
	if err != nil || cut || len(ws) != 1 || ws[0].Path != project+"/Makefile" || ws[0].Tool != "Write" {
		t.Fatalf("control: %+v %v %v", ws, cut, err)
	}
	var i int
	for i = 0; ; i++ {
		if err := s.NoteWrite("Edit", fmt.Sprintf("%s/src/f%03d.go", project, i), t0.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, cut, _ := s.WrittenSince(time.Time{}); cut {
			break
		}
		if i > 1000 {
			t.Fatal("the trace was never cut")
		}
	}
	ws, cut, _ = s.WrittenSince(t0)
	if !cut {
		t.Errorf("asked about the Makefile's time after it was cut: not said cut (%d writes)", len(ws))
	}
	for _, w := range ws {
		if w.Path == project+"/Makefile" {
			t.Errorf("the Makefile's line is still there")
		}
	}
	last := t0.Add(time.Duration(i+1) * time.Second)
	if ws, cut, _ := s.WrittenSince(last); cut || len(ws) != 1 {
		t.Errorf("control: asked about the newest write only: %+v cut %v", ws, cut)
	}
}
