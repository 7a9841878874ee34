package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// spelledCode is the start of a message that spells its reason code
// itself: "loopguard: no_grant: ..." or "loopguard: %s: ...".
var spelledCode = regexp.MustCompile(`^loopguard: ([a-z]+(_[a-z]+)+|%s|%v): `)

// saidElsewhere names the functions of hooks that still spell a reason
// into a message themselves, each with why; an entry that no longer does
// fails too.
var saidElsewhere = map[string]string{}

// reasonSpellings returns, for each function of one file's source (and
// its constants and variables together), how many times it spells "loopguard: <code>: ": a string literal that
// starts so, or "loopguard: " followed by + and a reason (an identifier
// or field whose name starts with Reason, reason or Code).
func reasonSpellings(fset *token.FileSet, name string, src any) (map[string]int, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, d := range f.Decls {
		name := "(declarations)" // constants and variables
		if fn, ok := d.(*ast.FuncDecl); ok {
			name = fn.Name.Name
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && spelledCode.MatchString(s) {
					out[name]++
				}
			case *ast.BinaryExpr:
				lit, ok := x.X.(*ast.BasicLit)
				if !ok || x.Op != token.ADD || lit.Value != `"loopguard: "` {
					return true
				}
				var id string
				switch y := x.Y.(type) {
				case *ast.Ident:
					id = y.Name
				case *ast.SelectorExpr:
					id = y.Sel.Name
				}
				if strings.HasPrefix(id, "Reason") || strings.HasPrefix(id, "reason") || id == "Code" {
					out[name]++
				}
			}
			return true
		})
	}
	return out, nil
}

// TestReasonSaidOnce: a message of the engine that names its reason code
// is built by one function (hooks' said, from the reason and the detail),
// never spelled out in a string. The controls: a synthetic source with
// each spelling is caught, the one function is found where it is, and a
// message that names no code (an allow) is not counted.
func TestReasonSaidOnce(t *testing.T) {
	const control = `package p
func a() string { return "loopguard: no_grant: no approval covers this call" }
func b(r string) string { return fmt.Sprintf("loopguard: %s: %v", r, 1) }
func c() string { return "loopguard: " + ReasonSandboxEscape + ": x" }
func d(cv cover) string { return "loopguard: " + cv.nearWhy.Code + ": x" }
func e(what string) string { return "loopguard: " + what + " (grant g)" }
func f() string { return "loopguard: read-only tool" }
const g = "loopguard: pending_full: x"
`
	got, err := reasonSpellings(token.NewFileSet(), "control.go", control)
	if err != nil {
		t.Fatal(err)
	}
	for fn, want := range map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 0, "f": 0, "(declarations)": 1} {
		if got[fn] != want {
			t.Errorf("control: %s spells a reason %d times, want %d", fn, got[fn], want)
		}
	}

	dir := filepath.Join(root(t), "hooks")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	sawSaid := false
	seen := map[string]bool{}
	for _, p := range names {
		base := filepath.Base(p)
		if strings.HasSuffix(base, "_test.go") {
			continue
		}
		spell, err := reasonSpellings(fset, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for fn, n := range spell {
			key := base + " " + fn
			switch {
			case key == "messages.go said":
				sawSaid = true
			case saidElsewhere[key] != "":
				seen[key] = true
			default:
				t.Errorf("hooks/%s: %s spells a reason code into a message %d times: build it with said(reason, detail)", base, fn, n)
			}
		}
	}
	if !sawSaid {
		t.Error(`hooks/messages.go's said, the one function that spells "loopguard: <code>: ", not found`)
	}
	for key := range saidElsewhere {
		if !seen[key] {
			t.Errorf("saidElsewhere names hooks/%s, which no longer spells a reason: take it off", key)
		}
	}
}
