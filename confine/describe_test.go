package confine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPlanWithin: what a plan grants in a directory, the project left
// out; a secret is reached by a rule at, above or below it, and through
// a link to it; Discard removes the launch's own directory only.
func TestPlanWithin(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	j := func(p ...string) string { return filepath.Join(append([]string{home}, p...)...) }
	p := Plan{
		ReadDirs:   []string{"/usr", j("sdk"), j("proj")},
		ReadFiles:  []string{j(".gitconfig"), "/etc/hosts"},
		WriteDirs:  []string{j("proj", "src")},
		WriteFiles: []string{"/dev/null", j(".cache", "x")},
		RunDir:     filepath.Join(base, "run-1"),
	}
	reads, writes := p.Within(home, j("proj"))
	if want := []string{j(".gitconfig"), j("sdk")}; !slices.Equal(reads, want) {
		t.Errorf("reads %q, want %q", reads, want)
	}
	if want := []string{j(".cache", "x")}; !slices.Equal(writes, want) {
		t.Errorf("writes %q, want %q", writes, want)
	}
	for path, want := range map[string]bool{
		j("sdk", "go1.26"): true,  // below a rule
		j(".cache"):        true,  // above one
		j(".ssh"):          false, // control
		j(".gitconfig.d"):  false, // a name that starts like a rule's
	} {
		if got := p.Reaches(path); got != want {
			t.Errorf("Reaches(%s) = %v, want %v", path, got, want)
		}
	}
	// A link in the home to what a rule grants is reached through it.
	if err := os.MkdirAll(j("sdk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(j("sdk"), j(".key")); err != nil {
		t.Fatal(err)
	}
	if !p.Reaches(j(".key")) {
		t.Error("a link to a granted directory is not reached")
	}
	if err := os.MkdirAll(filepath.Join(p.RunDir, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := p.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.RunDir); !os.IsNotExist(err) {
		t.Errorf("the run directory survived Discard: %v", err)
	}
	if err := (Plan{}).Discard(); err != nil {
		t.Errorf("a plan with no run directory: %v", err)
	}
}
