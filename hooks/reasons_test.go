package hooks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestReasonsListed: Reasons is the one list of the hook's reason codes.
// Every Reason constant of this package is in it, once, and it names
// nothing else, so a new code cannot be added without the list (and with it
// the manual and the audit test, which are checked against the list).
func TestReasonsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				for _, n := range sp.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Reason") {
						declared[n.Name] = true
					}
				}
			}
		}
	}
	if len(declared) < 25 {
		t.Fatalf("found only %d Reason constants: the source reader is broken", len(declared))
	}
	seen := map[string]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("Reasons lists %s twice", r)
		}
		seen[r] = true
	}
	if len(Reasons()) != len(declared) {
		t.Errorf("Reasons lists %d codes, the package declares %d Reason constants", len(Reasons()), len(declared))
	}
	for _, r := range Reasons() {
		if r == "" || strings.ToLower(r) != r || strings.ContainsAny(r, " -") {
			t.Errorf("reason code %q is not a lower_snake_case word", r)
		}
	}
}
