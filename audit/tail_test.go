package audit

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// countingReader counts ReadAt calls.
type countingReader struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// Every Append reads the log's last line: one read when the line is shorter
// than the first read, where it read the same bytes twice (lastNewline,
// then lineEndingAt). The line and its end are lineEndingAt's, for short and
// long last lines, a log of one line, and a torn tail; the control: a last
// line longer than the first read still takes more reads and is found
// whole.
func TestLastLineReadsOnce(t *testing.T) {
	long := strings.Repeat("x", smallRead+100)
	cases := []struct {
		name, log string
		reads     int
	}{
		{"short lines", "a\nbb\nccc\n", 1},
		{"one line", "only\n", 1},
		{"torn tail", "a\nbb\ntorn", 1},
		{"many short lines", strings.Repeat("0123456789\n", 2000), 1},
		{"long last line (control)", "a\n" + long + "\n", 3},
	}
	for _, c := range cases {
		r := &countingReader{r: strings.NewReader(c.log)}
		end, line, lineErr, err := lastLine(r, int64(len(c.log)))
		if err != nil || lineErr != nil {
			t.Fatalf("%s: %v, %v", c.name, err, lineErr)
		}
		wantEnd, err := lastNewline(strings.NewReader(c.log), int64(len(c.log)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := lineEndingAt(strings.NewReader(c.log), wantEnd)
		if err != nil {
			t.Fatal(err)
		}
		if end != wantEnd || !bytes.Equal(line, want) {
			t.Errorf("%s: line %q ending at %d, lineEndingAt: %q at %d", c.name, line, end, want, wantEnd)
		}
		if r.reads != c.reads {
			t.Errorf("%s: %d reads, want %d", c.name, r.reads, c.reads)
		}
	}
	// lineIn refuses what it does not hold: no newline at end-1, or a line
	// that starts before the bytes.
	if _, ok := lineIn([]byte("abc\n"), 10, 14); ok {
		t.Error("lineIn: a line that may start before the bytes was taken")
	}
	if _, ok := lineIn([]byte("a\nbc"), 0, 4); ok {
		t.Error("lineIn: no newline at end-1, and a line was taken")
	}
	if l, ok := lineIn([]byte("abc\n"), 0, 4); !ok || string(l) != "abc" {
		t.Errorf("lineIn: %q, %v at the start of the log", l, ok)
	}
}
