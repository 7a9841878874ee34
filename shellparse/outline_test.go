package shellparse

import (
	"fmt"
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
