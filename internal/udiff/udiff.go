// Package udiff renders unified diffs of text, line by line: the one diff
// for init's and uninstall's settings changes and for the edits a call
// would make (hooks' edit rendering). It never prints; callers choose how
// each line is escaped before it reaches a terminal.
package udiff

import (
	"fmt"
	"strings"
)

// maxCells bounds the quadratic line diff of the lines that differ (after
// the common head and tail are set aside); larger inputs are shown as a
// replacement of those lines.
const maxCells = 4 << 20

// Context is the number of unchanged lines shown around each change.
const Context = 3

// Diff renders a unified diff (three lines of context) from old to new for
// the file at path. nil means the file does not exist. It is "" when they
// are equal. Lines are written as they are: escape them with Unified when
// they may hold bytes a terminal must not see raw.
func Diff(path string, old, new []byte) string {
	return Unified("a"+path, "b"+path, old, new, nil)
}

// Unified renders a unified diff from old (labelled from) to new
// (labelled to), each line of text and each label passed through esc (nil:
// as they are). A nil old or new is labelled /dev/null. It is "" when
// they are equal.
func Unified(from, to string, old, new []byte, esc func(string) string) string {
	if string(old) == string(new) && (old == nil) == (new == nil) {
		return ""
	}
	if esc == nil {
		esc = func(s string) string { return s }
	}
	if old == nil {
		from = "/dev/null"
	}
	if new == nil {
		to = "/dev/null"
	}
	a, b := Lines(old), Lines(new)
	ops := diffLines(a, b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", esc(from), esc(to))
	// Group ops into hunks.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-Context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*Context {
				end = min(end+Context, len(ops))
				break
			}
			end = run
		}
		aStart, bStart, aN, bN := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:end] {
			sb.WriteByte(op.kind)
			sb.WriteString(esc(op.text))
			sb.WriteByte('\n')
		}
		i = end
	}
	if len(old) > 0 && len(new) > 0 && (old[len(old)-1] == '\n') != (new[len(new)-1] == '\n') {
		if new[len(new)-1] == '\n' {
			sb.WriteString("\\ the old text has no final newline\n")
		} else {
			sb.WriteString("\\ the new text has no final newline\n")
		}
	}
	return sb.String()
}

// Stat counts the lines a diff from old to new adds and removes.
func Stat(old, new []byte) (added, removed int) {
	for _, op := range diffLines(Lines(old), Lines(new)) {
		switch op.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// Lines splits text into lines without their newlines; a final newline
// ends the last line and starts no new one.
func Lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	text string
	a, b int // line index in old and new where the op stands
}

// diffLines is a longest-common-subsequence line diff of the lines between
// the common head and tail.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		ops = append(ops, diffOp{' ', a[head], head, head})
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops = append(ops, middle(a[head:len(a)-tail], b[head:len(b)-tail], head, head)...)
	for k := tail; k > 0; k-- {
		i, j := len(a)-k, len(b)-k
		ops = append(ops, diffOp{' ', a[i], i, j})
	}
	return ops
}

// middle diffs the lines that differ, a starting at line ai and b at bi.
func middle(a, b []string, ai, bi int) []diffOp {
	var ops []diffOp
	n, m := len(a), len(b)
	if n*m > maxCells {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, ai + i, bi})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, ai + n, bi + j})
		}
		return ops
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], ai + i, bi + j})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			ops = append(ops, diffOp{'+', b[j], ai + i, bi + j})
			j++
		default:
			ops = append(ops, diffOp{'-', a[i], ai + i, bi + j})
			i++
		}
	}
	return ops
}
