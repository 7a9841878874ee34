package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bounds a product function may not reach both of (issue 39): one that
// is long and branchy is several steps that want names. Either alone is
// fine: a long table, or a dense switch that reads as one decision.
const (
	maxFuncLines    = 150
	maxFuncBranches = 40
	// maxHooksFile bounds each file of hooks, the engine: a file per job.
	maxHooksFile = 600
)

// tooBig lists the functions still at or above both bounds, each with why
// it is not split here. An entry that no longer trips fails the test too:
// the list only shrinks.
var tooBig = map[string]string{}

// funcSize is one function's size: lines from func to its closing brace,
// and branches.
type funcSize struct {
	name            string
	lines, branches int
}

// branches counts the places where control may go one way or another in
// body, closures included: each if (an else if is an if of its own), for
// and range loop, case clause of a switch or type switch (default too),
// select case (default too), and && and || operator. An else is not
// counted: it is the other way of its if.
func branches(body ast.Node) int {
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.CaseClause, *ast.CommClause:
			n++
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// sizes returns the size of every function and method with a body in one
// file's source.
func sizes(fset *token.FileSet, name string, src any) ([]funcSize, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []funcSize
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		out = append(out, funcSize{name: fn.Name.Name, lines: lines, branches: branches(fn.Body)})
	}
	return out, nil
}

func (s funcSize) tooBig() bool {
	return s.lines >= maxFuncLines && s.branches >= maxFuncBranches
}

// productSources walks the module for the product's Go files: no test
// files, no test or measurement code (tooling), no test data, downloads
// or builds. It returns their paths relative to the root, slashed.
func productSources(t *testing.T, r string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata" || rel == ".cache" || rel == "bin" || rel == "dist" || isTooling(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoLongBranchyFunction: no product function is both maxFuncLines
// lines or more and maxFuncBranches branches or more (branches says what
// counts), but those tooBig names. The controls: a synthetic function at
// both bounds trips it and one a line or a branch short of either does
// not; the walk measures the engine's Decide and the functions split out
// of long ones (a walk that read nothing would pass).
func TestNoLongBranchyFunction(t *testing.T) {
	for _, c := range []struct {
		lines, branches int
		trips           bool
	}{
		{maxFuncLines, maxFuncBranches, true},
		{maxFuncLines + 40, maxFuncBranches + 9, true},
		{maxFuncLines - 1, maxFuncBranches + 20, false},
		{maxFuncLines + 100, maxFuncBranches - 1, false},
	} {
		s, err := sizes(token.NewFileSet(), "control.go", synthetic(c.lines, c.branches))
		if err != nil || len(s) != 1 {
			t.Fatalf("control %d lines, %d branches: %v %v", c.lines, c.branches, s, err)
		}
		if s[0].lines != c.lines || s[0].branches != c.branches || s[0].tooBig() != c.trips {
			t.Errorf("control: a function of %d lines and %d branches measured %d lines, %d branches, too big %v; want too big %v",
				c.lines, c.branches, s[0].lines, s[0].branches, s[0].tooBig(), c.trips)
		}
	}

	r := root(t)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	files := 0
	for _, rel := range productSources(t, r) {
		ss, err := sizes(fset, filepath.Join(r, rel), nil)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		files++
		for _, s := range ss {
			key := rel + " " + s.name
			seen[key] = true
			if !s.tooBig() {
				if _, ok := tooBig[key]; ok {
					t.Errorf("%s (%d lines, %d branches) is no longer too big: take it off tooBig", key, s.lines, s.branches)
				}
				continue
			}
			if _, ok := tooBig[key]; ok {
				continue
			}
			t.Errorf("%s: %d lines and %d branches, at or above both %d and %d: split it into named steps",
				key, s.lines, s.branches, maxFuncLines, maxFuncBranches)
		}
	}
	for key := range tooBig {
		if !seen[key] {
			t.Errorf("tooBig names %s, which is gone: take it off", key)
		}
	}
	for _, want := range []string{"hooks/engine.go Decide", "cmd/loopguard/internal/doctor/sandbox.go judgeSandbox", "confine/plan.go NewPlan", "audit/verify.go Verify"} {
		if !seen[want] {
			t.Errorf("the walk did not measure %s (of %d files)", want, files)
		}
	}
}

// synthetic is a file with one function of lines lines and branches
// branches: ifs, one a line, padded with statements.
func synthetic(lines, branches int) string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f(x int) {\n")
	body := lines - 2
	for i := 0; i < body; i++ {
		if i < branches {
			fmt.Fprintf(&b, "\tif x == %d { x++ }\n", i)
		} else {
			b.WriteString("\tx++\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestHooksFilesShort: no file of hooks, the engine, is over maxHooksFile
// lines: one job a file (decision vocabulary, the ladder, grants, pending
// and wait, messages, PostToolUse). The control: the engine's own file is
// among those counted.
func TestHooksFilesShort(t *testing.T) {
	dir := filepath.Join(root(t), "hooks")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sawEngine := false
	for _, p := range names {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) == "engine.go" {
			sawEngine = true
		}
		if n := strings.Count(string(data), "\n"); n > maxHooksFile {
			t.Errorf("hooks/%s: %d lines, over %d: split it by job", filepath.Base(p), n, maxHooksFile)
		}
	}
	if !sawEngine {
		t.Errorf("hooks/engine.go not among the %d files counted", len(names))
	}
}
