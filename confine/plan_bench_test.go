package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/undo"
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
	planLoop(b, root, s, "")
}

// BenchmarkNewPlanProjectWrite: the project-write plan in a project of
// 10,000 files (100 directories of 100) and two protected entries, whose
// walk is most of the plan's cost there, with the listings the last walk
// kept (every directory settled, as between an agent's calls); ...Unlisted
// with none (no state directory), every directory read.
func BenchmarkNewPlanProjectWrite(b *testing.B) {
	root, s := benchProjectWrite(b)
	state := filepath.Join(root, "state")
	store, err := undo.Open(state, s.Project)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(store.Dir, 0o700); err != nil {
		b.Fatal(err)
	}
	time.Sleep(listingSettle + 100*time.Millisecond)
	planLoop(b, root, s, state)
}

func BenchmarkNewPlanProjectWriteUnlisted(b *testing.B) {
	root, s := benchProjectWrite(b)
	planLoop(b, root, s, "")
}

// benchProjectWrite is BenchmarkNewPlanProjectWrite's project.
func benchProjectWrite(b *testing.B) (string, Spec) {
	root, s := benchLaunch(b)
	for d := range 100 {
		dir := filepath.Join(s.Project, fmt.Sprintf("pkg%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, p := range []string{".envrc", "pkg050/.vscode"} {
		if err := os.Mkdir(filepath.Join(s.Project, p), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	s.Cap = policy.Capability{Write: true}
	return root, s
}

// planLoop computes s's plan b.N times, as the launcher would for the
// user running the benchmark, its scratch directory in root, and its
// state directory state ("": none, so no listings kept).
func planLoop(b *testing.B, root string, s Spec, state string) {
	home, _ := os.UserHomeDir()
	e := EnvFrom(os.Getenv, policy.Places{Home: home, StateDir: state}, os.Getuid())
	e.TempDir = root
	for b.Loop() {
		p, err := NewPlan(s, e)
		if err != nil {
			b.Fatal(err)
		}
		// As the launcher does once the call has ended: a run directory
		// left would make every later plan's prune read one more.
		if err := os.RemoveAll(p.RunDir); err != nil {
			b.Fatal(err)
		}
		unlockRun(p.runLock)
	}
}
