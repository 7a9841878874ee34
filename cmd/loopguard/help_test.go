package main

import (
	"strings"
	"testing"
)

// The commands of init, uninstall, doctor, review, key rotate and completion
// have a short line, a long help and examples that show a command line.
func TestHelpHasExamples(t *testing.T) {
	root := newRootCmd()
	for _, path := range [][]string{{"init"}, {"uninstall"}, {"doctor"}, {"review"}, {"key"}, {"key", "rotate"}, {"completion"}, {"notify"}} {
		c, _, err := root.Find(path)
		if err != nil || c == root {
			t.Errorf("%q: not found (%v)", path, err)
			continue
		}
		if c.Short == "" || c.Long == "" || !strings.Contains(c.Example, "loopguard "+path[0]) {
			t.Errorf("%q: Short %t, Long %t, Example %q", c.CommandPath(), c.Short != "", c.Long != "", c.Example)
		}
	}
}
