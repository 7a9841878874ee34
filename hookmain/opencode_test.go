package hookmain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenCode's effective shell must be the installed wrapper itself (the
// same file, symlinks resolved); anything else is refused, each beside
// the control.
func TestOpenCodeShellProblem(t *testing.T) {
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "loopguard-exec")
	if err := os.WriteFile(wrapper, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(wrapper, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "loopguard-exec") // the same name elsewhere
	if err := os.WriteFile(other, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		shell string
		ok    bool
	}{
		{wrapper, true},
		{link, true},
		{"", false},
		{"loopguard-exec", false},
		{"/bin/bash", false},
		{other, false},
		{filepath.Join(dir, "missing"), false},
	} {
		why := opencodeShellProblem(c.shell, wrapper)
		if (why == "") != c.ok {
			t.Errorf("shell %q: %q; want ok %v", c.shell, why, c.ok)
		}
		if !c.ok && !strings.Contains(why, wrapper) {
			t.Errorf("shell %q: %q does not name the wrapper", c.shell, why)
		}
	}
}
