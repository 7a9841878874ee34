package shellparse

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pipeline is n parts joined by |: the shape issue 39 timed.
func pipeline(n int) string { return strings.Repeat("id|", n-1) + "id" }

// checkViews is what loopguard check and the hook read of a command: the
// analysis (with its sketch, the danger lines' words), the outline, the
// shape and the split.
func checkViews(cmd string, env Env) {
	Analyze(cmd, env)
	Outline(cmd)
	Shape(cmd)
	SplitShape(cmd)
}

// TestPipelineLinear: the work on a pipeline grows with its length, not
// its square (issue 39: a 4,001-part pipeline took 20 times a 1,001-part
// one, through a walk of the whole rest of the chain at each of its
// levels). Counted, not timed: the nodes the walker visits and the
// statements the chain walk visits for 4,001 parts are at most 4.1 times
// those for 1,001 (the ratio of the lengths is 4.0), and each view parses
// the command once. BenchmarkPipeline has the times.
func TestPipelineLinear(t *testing.T) {
	env := Env{Cwd: t.TempDir(), Path: "/usr/bin:/bin"}
	var walked, chained, parsed int
	testWalkVisit = func() { walked++ }
	testChainVisit = func() { chained++ }
	testParse = func() { parsed++ }
	defer func() { testWalkVisit, testChainVisit, testParse = nil, nil, nil }()
	count := func(n int) (walked_, chained_ int) {
		walked, chained, parsed = 0, 0, 0
		cmd := pipeline(n)
		if res := Analyze(cmd, env); res.Verdict != Chained {
			t.Fatalf("%d parts: %s (%s)", n, res.Verdict, res.Reason)
		}
		if parsed != 1 {
			t.Errorf("%d parts: Analyze parsed %d times", n, parsed)
		}
		checkViews(cmd, env)
		if parsed != 5 {
			t.Errorf("%d parts: Analyze, Outline, Shape and SplitShape parsed %d times, want once each", n, parsed)
		}
		return walked, chained
	}
	w1, c1 := count(1001)
	w4, c4 := count(4001)
	t.Logf("walker visits %d and %d, chain walk visits %d and %d", w1, w4, c1, c4)
	if w1 == 0 || c1 == 0 {
		t.Fatal("nothing counted: the counters are not wired")
	}
	if float64(w4) > 4.1*float64(w1) {
		t.Errorf("walker visits: %d for 4,001 parts, %d for 1,001: not linear", w4, w1)
	}
	if float64(c4) > 4.1*float64(c1) {
		t.Errorf("chain walk visits: %d for 4,001 parts, %d for 1,001: not linear", c4, c1)
	}
}

// TestLongCommandsAllocateLinearly: the allocations of every view of a
// long command (checkViews) grow with its length, not its square, in
// several shapes: the pipeline, a pipeline into shells (the analysis
// stops at the first), lists joined by ; and by &&, and a pipeline whose
// words are quoted. Counted, not timed (testing.AllocsPerRun): 4,001
// parts allocate at most 4.2 times what 1,001 do. This sees what the
// walker's count cannot: a view that copies what it has built so far at
// each part (a string or a slice grown by concatenation). present's
// TestLongCommandsCostLinear times the same work, the danger lines with
// it.
func TestLongCommandsAllocateLinearly(t *testing.T) {
	env := Env{Cwd: t.TempDir(), Path: "/usr/bin:/bin"}
	for _, shape := range []struct {
		name, first, part, sep string // part: %d is its index
	}{
		{"pipeline", "id", "id", "|"},
		{"pipeline into shells", "id", "sh", "|"},
		{"list", "true", "rm -rf /a%d", ";"},
		{"and-list", "true", "grep x%d .", "&&"},
		{"quoted pipeline", "id", `g\r''ep "x%d"`, "|"},
	} {
		build := func(n int) string {
			parts := []string{shape.first}
			for i := 1; i < n; i++ {
				p := shape.part
				if strings.Contains(p, "%d") {
					p = fmt.Sprintf(p, i)
				}
				parts = append(parts, p)
			}
			return strings.Join(parts, shape.sep)
		}
		small, large := build(1001), build(4001)
		if len(large) > MaxCommandLen {
			t.Fatalf("%s: %d bytes, more than the analysis reads", shape.name, len(large))
		}
		a1 := testing.AllocsPerRun(3, func() { checkViews(small, env) })
		a4 := testing.AllocsPerRun(3, func() { checkViews(large, env) })
		t.Logf("%s: %.0f allocations for 1,001 parts, %.0f for 4,001 (%.2f times)", shape.name, a1, a4, a4/a1)
		if a4 > 4.2*a1 {
			t.Errorf("%s: %.0f allocations for 4,001 parts, %.0f for 1,001: not linear", shape.name, a4, a1)
		}
	}
}

// TestOneParserOneWalk: the package makes its parser in one place (parse)
// and walks trees with one walker (walk), in its tests too.
func TestOneParserOneWalk(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	var parsers []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "syntax" {
				switch sel.Sel.Name {
				case "NewParser":
					parsers = append(parsers, fset.Position(sel.Pos()).String())
				case "Walk", "Preorder":
					t.Errorf("%s: syntax.%s: use walk, the package's one walker (linear on deep trees)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
	if len(parsers) != 1 || !strings.HasPrefix(parsers[0], "tree.go:") {
		t.Errorf("syntax.NewParser at %v, want once, in parse (tree.go)", parsers)
	}
}

// BenchmarkPipeline times what loopguard check reads of a long pipeline
// (checkViews) at 1,001 and 4,001 parts: the second takes about four
// times the first.
func BenchmarkPipeline(b *testing.B) {
	env := Env{Cwd: b.TempDir(), Path: "/usr/bin:/bin"}
	for _, n := range []int{1001, 4001} {
		cmd := pipeline(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				checkViews(cmd, env)
			}
		})
	}
}
