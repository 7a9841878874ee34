package confine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// benchLaunch is a read-only launch of git --version in a new project
// under root.
func benchLaunch(b *testing.B) (root string, s Spec) {
	root = b.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		b.Fatal(err)
	}
	return root, Spec{Project: proj, Cwd: proj, Exe: "/usr/bin/git", Argv: []string{"git", "--version"}}
}

// BenchmarkNewPlanReadOnly: the read-only plan the launcher computes
// before every launch (the part of its cost that is not the Go runtime's
// start or the kernel's; launchbench measures the whole process).
func BenchmarkNewPlanReadOnly(b *testing.B) {
	root, s := benchLaunch(b)
	home, _ := os.UserHomeDir()
	e := EnvFrom(os.Getenv, policy.Places{Home: home}, os.Getuid())
	e.TempDir = root
	for b.Loop() {
		if _, err := NewPlan(s, e); err != nil {
			b.Fatal(err)
		}
	}
}
