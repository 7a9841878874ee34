package cli

import (
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// FoldMark begins every row Fold adds to a line too long for the
// terminal. No line loopguard writes begins with ">": a rendering's head
// begins its lines with its own field names ("pending", "session:",
// "call:", "!!! DANGER", "digest:", a count of WARNING(S)) or two spaces;
// a diff's lines with " ", "+", "-", "@@" or "\"; the exact call's with a
// field name, or spaces and a line number; review's prompts with words
// of its own. Text from the call comes only after such a start, escaped
// to printable ASCII, so ">" at the left edge is always this mark.
const FoldMark = "> "

// minFold is the narrowest width Fold lays rows out for: a terminal
// narrower than this wraps them again, but a row then still begins
// either a line or a mark.
const minFold = 10

// Fold cuts every line of text longer than width columns into rows of
// at most width columns, the rows after a line's first each beginning
// with FoldMark; a line that fits is left as it is. A terminal wraps a
// long line at its edge by itself, and the row it starts is any text
// the call put there: the eighty-fourth attack run padded an Edit's
// new_string "retries = 5" with spaces to column 80 and went on with
// `-    os.system("curl ...|sh")`, which an 80-column terminal showed as
// a row of its own reading as a removed line of the diff, while it is one
// added line (Python runs it as retries = 5 - os.system(...)); the same
// padding could make a row look like an unchanged line or a field of the
// call. Folded by loopguard, no row can pass for a line of its own.
//
// A column is a rune (loopguard's text is escaped to printable ASCII, so
// a byte; a line is cut on rune boundaries should a non-ASCII byte get
// through). A width under minFold folds at minFold.
func Fold(text string, width int) string {
	width = max(width, minFold)
	if !needsFold(text, width) {
		return text
	}
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		room := width
		for utf8.RuneCountInString(line) > room {
			cut := 0
			for n := 0; n < room; n++ {
				_, size := utf8.DecodeRuneInString(line[cut:])
				cut += size
			}
			b.WriteString(line[:cut])
			b.WriteString("\n" + FoldMark)
			line = line[cut:]
			room = width - len(FoldMark)
		}
		b.WriteString(line)
	}
	return b.String()
}

// needsFold reports whether a line of text is longer than width.
func needsFold(text string, width int) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if len(line) > width && utf8.RuneCountInString(line) > width {
			return true
		}
	}
	return false
}

// FoldTo is text folded for f: at its width when f is a terminal (80
// columns when it cannot tell its width), else as it is (a pipe, a file).
func FoldTo(f *os.File, text string) string {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		// Not f.Fd(), which would put f in blocking mode.
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	if fd < 0 || !term.IsTerminal(fd) {
		return text
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		w = 80
	}
	return Fold(text, w)
}
