package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/undo"
)

// BenchmarkHeldCallWarning is the hook's deny of a held call (no grant),
// whose warning of what jailed calls changed is computed each time: in a
// project with no undo record (stores 0), and beside other projects with
// records (each store's project is read, for the projects a project
// holds).
func BenchmarkHeldCallWarning(b *testing.B) {
	for _, n := range []int{0, 30} {
		b.Run(fmt.Sprintf("stores=%d", n), func(b *testing.B) {
			h := newHarnessTB(b)
			for i := range n {
				p := filepath.Join(b.TempDir(), fmt.Sprintf("p%d", i))
				if err := os.MkdirAll(p, 0o755); err != nil {
					b.Fatal(err)
				}
				r, err := undo.Begin(undo.Options{StateDir: h.Store.Dir, Project: p, Command: "true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			call := withInput(h.fixture("pretooluse-bash.json"), "command", "rm -rf /var/tmp/x")
			if d := h.decide(call); d.Pending == "" {
				b.Fatalf("not held: %+v", d)
			}
			b.ResetTimer()
			for range b.N {
				h.decide(call)
			}
		})
	}
}

// BenchmarkPlantedWarning is the warning alone (plantedWarning), as
// BenchmarkHeldCallWarning's.
func BenchmarkPlantedWarning(b *testing.B) {
	for _, n := range []int{0, 30} {
		b.Run(fmt.Sprintf("stores=%d", n), func(b *testing.B) {
			h := newHarnessTB(b)
			for i := range n {
				p := filepath.Join(b.TempDir(), fmt.Sprintf("p%d", i))
				if err := os.MkdirAll(p, 0o755); err != nil {
					b.Fatal(err)
				}
				r, err := undo.Begin(undo.Options{StateDir: h.Store.Dir, Project: p, Command: "true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			e := h.eng()
			c := h.call(withInput(h.fixture("pretooluse-bash.json"), "command", "rm -rf /var/tmp/x"))
			b.ResetTimer()
			for range b.N {
				if w := e.plantedWarning(c, nil); w != "" {
					b.Fatal(w)
				}
			}
		})
	}
}
