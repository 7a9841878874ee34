package confine

import (
	"strings"
	"testing"
)

// TestGoStatModule: the module path the plan reads from go.mod and its
// spelling in the module cache; anything that is not a plain module path
// gets no directory (the attacks: a path out of the cache, an empty
// element).
func TestGoStatModule(t *testing.T) {
	for _, c := range []struct{ gomod, esc string }{
		{"module example.com/Proj\n\ngo 1.22\n", "example.com/!proj"},
		{"// x\nmodule \"github.com/a/b\" // quoted\n", "github.com/a/b"},
		{"module example.com/../../etc\n", ""},
		{"module /abs\n", ""},
		{"module a/./b\n", ""},
		{"module a/b c\n", ""},
		{"go 1.22\n", ""},
		{"modules x\n", ""},
	} {
		esc, ok := escapeModule(moduleLine(strings.NewReader(c.gomod)))
		if esc != c.esc || ok != (c.esc != "") {
			t.Errorf("%q: %q %v, want %q", c.gomod, esc, ok, c.esc)
		}
	}
}
