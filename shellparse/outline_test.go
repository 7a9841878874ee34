package shellparse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestOutline(t *testing.T) {
	lines, ok := Outline("cd x && ls $(pwd) | head -1; ! echo 'a b' >f")
	if !ok {
		t.Fatal("does not parse")
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%s%d:%d %s|%s", strings.Repeat(" ", l.Depth), l.Line, l.Col, l.Label, strings.Join(l.Source, "|")))
	}
	want := []string{
		"1:1 list of 2 statements|",
		" 1:6 &&|",
		"  1:1 command:|cd|x",
		"  1:19 ||",
		"   1:9 command:|ls|$(pwd)",
		"   1:21 command:|head|-1",
		" 1:30 statement (negated, 1 redirect(s))|",
		"  1:32 command:|echo|'a b'",
		"1:12 command substitution:|$(pwd)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := Outline("echo 'a"); ok {
		t.Error("unterminated quote outlined")
	}
}

// TestOutlineNestedLinear: the outline of nested substitutions costs
// memory (and time) linear in the command: each substitution's source is
// printed whole, so printed each, $($($(...))) 8,192 deep took 2.5
// minutes for loopguard check. Past a budget of four times the command,
// a piece is cut from the text as written. Counted in bytes allocated,
// not timed: 4,000 levels allocate at most 6 times what 1,000 do (5.3;
// printed each, 12.3). Control: the pieces within the budget are still
// printed (the outermost substitution, as TestOutline's are), the
// innermost is the text as written.
func TestOutlineNestedLinear(t *testing.T) {
	nested := func(n int) string { return "echo " + strings.Repeat("$( x ", n) + "id" + strings.Repeat(" )", n) }
	allocated := func(cmd string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, ok := Outline(cmd); !ok {
			t.Fatalf("%.40q: not outlined", cmd)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	b1, b4 := allocated(nested(1000)), allocated(nested(4000))
	t.Logf("%d bytes for 1,000 levels, %d for 4,000 (%.1f times)", b1, b4, float64(b4)/float64(b1))
	if b4 > 6*b1 {
		t.Errorf("%d bytes for 4,000 levels, %d for 1,000: not linear", b4, b1)
	}
	lines, _ := Outline(nested(1000))
	if outer := lines[1]; outer.Label != "command substitution:" || len(outer.Source) != 1 || !strings.HasPrefix(outer.Source[0], "$(x $(x ") {
		t.Errorf("outermost substitution %.60q, want it printed", outer.Source)
	}
	if inner := lines[len(lines)-1]; inner.Label != "command substitution:" || len(inner.Source) != 1 || inner.Source[0] != "$( x id )" {
		t.Errorf("innermost substitution %q, want it as written", inner.Source)
	}
}
