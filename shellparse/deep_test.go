package shellparse

import (
	"strings"
	"testing"
)

// TestDeepNesting: inputs up to MaxCommandLen that nest deeply must not
// crash or hang the analysis; none of them is simple.
func TestDeepNesting(t *testing.T) {
	fx := newFixture(t)
	n := MaxCommandLen / 4
	for name, cmd := range map[string]string{
		"subshells":     strings.Repeat("(", n) + "id" + strings.Repeat(")", n),
		"cmdsubst":      "echo " + strings.Repeat("$(", n/2) + "id" + strings.Repeat(")", n/2),
		"braces":        "echo " + strings.Repeat("{a,", n/2) + "b" + strings.Repeat("}", n/2),
		"brace product": "echo " + strings.Repeat("{a,b}", n/5),
		"quotes":        "echo " + strings.Repeat(`"a"'b'`, n/2),
		"pipeline":      strings.Repeat("id|", n/3) + "id",
		"unclosed":      strings.Repeat("$(", n),
		"redirects":     "echo " + strings.Repeat(">a ", n/3),
		"arith":         "echo $((" + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "))",
	} {
		if len(cmd) > MaxCommandLen {
			t.Fatalf("%s: test input too long", name)
		}
		res := Analyze(cmd, fx.env)
		t.Logf("%s: %s (%.60s)", name, res.Verdict, res.Reason)
		if res.Verdict == Simple && name != "quotes" && name != "redirects" {
			t.Errorf("%s: simple", name)
		}
	}
}
