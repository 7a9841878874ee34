package policy

import (
	"strings"
	"testing"
)

// TestVersionFileRuns: a version file runs a program of the file system
// where it holds path:, ref: (or another kind mise reads before a colon)
// or a path; a released version, nvm's lts/NAME, a comment does not.
func TestVersionFileRuns(t *testing.T) {
	for _, c := range []struct {
		text string
		runs bool
	}{
		{"path:/home/u/p/build/py\n", true},
		{"PATH:./b", true},
		{"ref:v20.1.0\n", true},
		{"../build/rb\n", true},
		{"~/bin/py", true},
		{"java=21.0.2-tem\nmaven=/opt/m", true},
		{"3.12.1 path:x", true},
		{"lts/../../x", true},
		{strings.Repeat("2", maxVersionFile+1), true},
		{"20\n", false},
		{"3.12.1\n3.11\n", false},
		{"lts/iron\n", false},
		{"lts/*", false},
		{"# path:/x is not read\n22\n", false},
		{"java=21.0.2-tem\n", false},
		{"", false},
	} {
		if got := VersionFileRuns([]byte(c.text)); got != c.runs {
			t.Errorf("VersionFileRuns(%q) = %v, want %v", c.text, got, c.runs)
		}
	}
	if !IsVersionFile(".NVMRC") || !IsVersionFile(".python-version") || IsVersionFile("nvmrc") || IsVersionFile(".tool-versions") {
		t.Error("IsVersionFile")
	}
}
