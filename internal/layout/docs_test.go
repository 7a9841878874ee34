package layout

import (
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/ticket"
)

// The manual's facts that have a home in the code are checked against that
// home here, so a page cannot drift from what the code does: the reason
// codes (docs/reasons.md against hooks.Reasons and the Vault backend's
// codes), the package map (docs/layout.md against the packages that exist)
// and every relative link of the README and docs/.

// root is the module's root: this package is internal/layout.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return r
}

var codeCell = regexp.MustCompile("^`([^`]+)`$")

// firstColumn returns the first cell of every body row of every Markdown
// table in doc, each required to be one backquoted name, with the line it
// is on. Header rows (followed by a |---| row) and the separators are
// skipped.
func firstColumn(t *testing.T, name, doc string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|") && strings.Trim(lines[i+1], "|-: ") == "" {
			continue // a header row
		}
		cell := strings.TrimSpace(strings.SplitN(l[1:], "|", 2)[0])
		if strings.Trim(cell, "-: ") == "" {
			continue // the separator
		}
		m := codeCell.FindStringSubmatch(cell)
		if m == nil {
			t.Errorf("%s:%d: the first cell %q is not one `name`", name, i+1, cell)
			continue
		}
		out[m[1]] = append(out[m[1]], i+1)
	}
	return out
}

// compare fails with what is in want and not in the doc, and the reverse.
func compare(t *testing.T, page string, documented map[string][]int, want []string, what string) {
	t.Helper()
	for c, at := range documented {
		if len(at) > 1 {
			t.Errorf("%s names %s %d times (lines %v): one row each", page, c, len(at), at)
		}
	}
	var missing, extra []string
	for _, c := range want {
		if _, ok := documented[c]; !ok {
			missing = append(missing, c)
		}
	}
	for c := range documented {
		if !slices.Contains(want, c) {
			extra = append(extra, c)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("%s lacks %d %s: %s", page, len(missing), what, strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("%s names %d %s that do not exist: %s", page, len(extra), what, strings.Join(extra, ", "))
	}
}

// reasonNames reads the names of the Reason constants a package declares,
// from its source (whatever their value: a literal or another package's
// constant).
func reasonNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
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
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, sp := range g.Specs {
					for _, n := range sp.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Reason") {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// TestReasonListsComplete: hooks.Reasons and vault.Reasons are the one list
// of each package's reason codes: every Reason constant the package declares
// is in it, once, and it holds nothing else, so a new code cannot be added
// without its list (and with it the manual and the audit test, which are
// checked against the lists).
func TestReasonListsComplete(t *testing.T) {
	r := root(t)
	for dir, list := range map[string][]string{"hooks": hooks.Reasons(), filepath.Join("backend", "vault"): vault.Reasons(), "ticket": ticket.Reasons()} {
		names := reasonNames(t, filepath.Join(r, dir))
		if len(names) < 4 {
			t.Fatalf("%s: only %d Reason constants: the source reader is broken", dir, len(names))
		}
		seen := map[string]bool{}
		for _, c := range list {
			if seen[c] {
				t.Errorf("%s: its list names %s twice", dir, c)
			}
			seen[c] = true
			if c == "" || strings.ToLower(c) != c || strings.ContainsAny(c, " -") {
				t.Errorf("%s: reason code %q is not a lower_snake_case word", dir, c)
			}
		}
		if len(list) != len(names) {
			t.Errorf("%s: its list has %d codes, the package declares %d Reason constants (%s)", dir, len(list), len(names), strings.Join(names, ", "))
		}
	}
}

// TestReasonsDocumented: docs/reasons.md has one row for each reason code
// the hook answers with (hooks.Reasons, and the Vault backend's), and no
// other. The control: the lists are not empty, so an empty page fails.
func TestReasonsDocumented(t *testing.T) {
	r := root(t)
	doc, err := os.ReadFile(filepath.Join(r, "docs", "reasons.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(vault.Reasons()) < 4 || len(hooks.Reasons()) < 25 {
		t.Fatalf("control: %d hook codes, %d Vault codes", len(hooks.Reasons()), len(vault.Reasons()))
	}
	compare(t, "docs/reasons.md", firstColumn(t, "docs/reasons.md", string(doc)), append(append(hooks.Reasons(), vault.Reasons()...), ticket.Reasons()...), "reason codes")
}

// packages lists the module's packages as `go list ./...` does: every
// directory with Go files for this platform (tests included), leaving out
// testdata, directories whose names start with . or _, and nested modules.
func packages(t *testing.T, r string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil // a symlink (.cache) is not followed, as go list does not
		}
		if path != r {
			base := d.Name()
			if base == "testdata" || base == "vendor" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if _, err := build.ImportDir(path, 0); err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			t.Errorf("%s: %v", path, err)
			return nil
		}
		rel, err := filepath.Rel(r, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayoutNamesEveryPackage: docs/layout.md's package map has a row for
// every package of the module and for nothing else. The control: the walk
// finds the packages the floors test places, so a broken walk fails.
func TestLayoutNamesEveryPackage(t *testing.T) {
	r := root(t)
	pkgs := packages(t, r)
	for _, p := range []string{"hooks", "cmd/loopguard", "internal/layout"} {
		if !slices.Contains(pkgs, p) {
			t.Fatalf("control: the walk did not find %s (found %d packages)", p, len(pkgs))
		}
	}
	doc, err := os.ReadFile(filepath.Join(r, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "docs/layout.md", firstColumn(t, "docs/layout.md", string(doc)), pkgs, "packages")
}

var (
	mdLink  = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fence   = regexp.MustCompile("^\\s*(```|~~~)")
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// anchors returns the heading anchors GitHub makes for a Markdown file:
// lower case, punctuation dropped, spaces as hyphens, -1, -2... on repeats.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(doc, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(l)
		if inFence || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocLinks: every relative link in README.md, BENCH.md, docs/ and
// bench/results/ names a file that exists, and an anchor into a Markdown
// file names one of its headings. The control: the README links into
// docs/, so a reader that finds no link fails.
func TestDocLinks(t *testing.T) {
	r := root(t)
	pages := []string{"README.md", "BENCH.md"}
	for _, g := range []string{"docs/*.md", "bench/results/*.md"} {
		m, err := filepath.Glob(filepath.Join(r, g))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(r, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
	}
	checked := 0
	for _, page := range pages {
		body, err := os.ReadFile(filepath.Join(r, page))
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, l := range strings.Split(string(body), "\n") {
			if fence.MatchString(l) {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				path := filepath.Join(r, page) // an anchor alone: this page
				if file != "" {
					path = filepath.Join(filepath.Dir(filepath.Join(r, page)), filepath.FromSlash(file))
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: %s: no such file", page, i+1, target)
					continue
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				doc, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(doc))[anchor] {
					t.Errorf("%s:%d: %s: no heading #%s there", page, i+1, target, anchor)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("control: only %d relative links found", checked)
	}
}
