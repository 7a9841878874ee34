package udiff

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a := []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	b := []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n")
	want := "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if got := Diff("/f", a, b); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if Diff("/f", a, a) != "" {
		t.Error("equal inputs gave a diff")
	}
}

func TestUnified(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new []byte
		want     string
	}{
		{"new file", nil, []byte("x\ny\n"), "--- /dev/null\n+++ new\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"deleted", []byte("x\n"), nil, "--- old\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"},
		{"empty to text", []byte{}, []byte("x\n"), "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n"},
		{"final newline", []byte("x\n"), []byte("x"), "--- old\n+++ new\n\\ the new text has no final newline\n"},
		{"two hunks", []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"), []byte("one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n"),
			"--- old\n+++ new\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
	} {
		if got := Unified("old", "new", c.old, c.new, nil); got != c.want {
			t.Errorf("%s: got:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

// TestUnifiedEscapes: every line and label goes through esc, so a caller
// can keep terminal-driving bytes out of what it prints.
func TestUnifiedEscapes(t *testing.T) {
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\x1b", `\x1b`), "\r", `\r`) }
	got := Unified("a\x1b]0;t\a", "b", []byte("ok\n"), []byte("ok\n\x1b[2Jwiped\r\n"), esc)
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("raw control bytes reached the output: %q", got)
	}
	if !strings.Contains(got, `+\x1b[2Jwiped\r`) {
		t.Errorf("escaped line missing: %q", got)
	}
	// Control: without esc the bytes are there (the test can fail).
	if raw := Unified("a", "b", []byte("ok\n"), []byte("ok\n\x1b[2J\n"), nil); !strings.Contains(raw, "\x1b") {
		t.Error("control: the raw diff lost the byte")
	}
}

// TestLargeFileSmallEdit: a one-line change in a file far beyond the
// quadratic bound is still a one-line hunk (head and tail set aside).
func TestLargeFileSmallEdit(t *testing.T) {
	var a, b strings.Builder
	for i := range 50000 {
		line := "line " + strings.Repeat("x", i%7) + "\n"
		a.WriteString(line)
		if i == 25000 {
			line = "changed\n"
		}
		b.WriteString(line)
	}
	got := Unified("a", "b", []byte(a.String()), []byte(b.String()), nil)
	if n := strings.Count(got, "\n-"); n != 1 {
		t.Errorf("%d removed lines, want 1:\n%.400s", n, got)
	}
	if ad, rm := Stat([]byte(a.String()), []byte(b.String())); ad != 1 || rm != 1 {
		t.Errorf("stat +%d -%d", ad, rm)
	}
}

// TestOverBound: a change too large for the quadratic diff is a plain
// replacement, not a hang.
func TestOverBound(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		a.WriteString("a" + string(rune('0'+i%10)) + "\n")
		b.WriteString("b" + string(rune('0'+i%7)) + "\n")
	}
	got := Unified("a", "b", []byte(a.String()), []byte(b.String()), nil)
	if strings.Count(got, "\n-a") != 3000 || strings.Count(got, "\n+b") != 3000 {
		t.Error("not a whole replacement")
	}
}
