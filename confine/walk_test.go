package confine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// refWalker is the walk as it was written before it reused its slices
// (2026-12-04): every entry's path a string, a slice of kids per
// directory. TestWalkMatchesReference holds the walk to it.
type refWalker struct {
	*walker
}

func (w refWalker) walk(dir string, top bool) bool { return w.walkIn(dir, top, false) }

// walkIn walks dir, a holder (entryGuard.judge) when inHolder: every name
// in it judged, and it never clean.
func (w refWalker) walkIn(dir string, top, inHolder bool) bool {
	ctime, ents, err := readDir(nil, dir, top)
	if err != nil {
		return false
	}
	w.seen[dir] = ctime
	w.entries += len(ents)
	if w.entries > w.budget {
		return false
	}
	if !top && isGitDir(ents) {
		w.gitDir = true
		return false
	}
	lastBulk(ents) // the order the walk reads a directory's entries in (2026-12-06)
	type child struct {
		path  string
		dir   bool
		clean bool
	}
	var kids []child
	clean := true
	for _, ent := range ents {
		name := ent.name
		p := dir + "/" + name
		isDir := ent.typ.IsDir()
		prot := w.fixed[p] || w.above[p] && !isDir || slices.Contains(w.skip, p)
		holder := !w.fixed[p] && w.above[p] && isDir
		if !prot && !holder && (inHolder || policy.NameCouldBeProtected(name)) {
			pr := w.pl.Classify(p)
			holder = pr.Holds && isDir
			prot = pr.Protected() && !holder
		}
		if prot {
			clean = false
			if !slices.Contains(w.skip, p) {
				w.held = append(w.held, p)
				if ent.typ&os.ModeSymlink != 0 {
					w.heldLink = true
					w.heldLinks = append(w.heldLinks, p)
				}
			}
			continue
		}
		typ := ent.typ
		if typ == os.ModeIrregular {
			clean = false
			continue
		}
		switch {
		case typ&os.ModeSymlink != 0:
			w.links = append(w.links, p)
			continue
		case typ.IsDir():
			c := w.walkIn(p, false, holder)
			if !c {
				clean = false
			}
			if w.gitDir {
				w.gitDir = false
				w.held = append(w.held, p)
				continue
			}
			kids = append(kids, child{path: p, dir: true, clean: c})
		case typ.IsRegular():
			kids = append(kids, child{path: p})
		default:
			clean = false
		}
	}
	if inHolder {
		clean = false
	}
	if clean && !top {
		return true
	}
	w.unclean = append(w.unclean, dir)
	if rel, _ := filepath.Rel(w.project, dir); !top && slices.ContainsFunc(strings.Split(rel, "/"), bulkDir) {
		w.bulk = append(w.bulk, dir)
	}
	for _, k := range kids {
		switch {
		case k.dir && k.clean:
			w.dirs = append(w.dirs, k.path)
		case !k.dir:
			w.files = append(w.files, k.path)
		}
	}
	return false
}

// TestWalkMatchesReference: over random trees (protected names at every
// depth, links, FIFOs, a fixed protected path inside the project and the
// git directory the caller handles), the walk finds what the reference
// finds: the same rules, held entries, directories and change times.
func TestWalkMatchesReference(t *testing.T) {
	rich, linked, inHolder := 0, false, false
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			proj := filepath.Join(t.TempDir(), "proj")
			randomTree(t, r, proj)
			pl := policy.Places{Home: filepath.Dir(proj)}
			if seed%3 == 0 {
				pl.StateDir = filepath.Join(proj, "a", "state") // a fixed path inside the project
			}
			pl = pl.Prepare()
			git := seed%2 == 0
			got, want := newWalker(pl, proj, git), newWalker(pl, proj, git)
			if g := filepath.Join(proj, ".git"); git {
				got.skip, want.skip = []string{g}, []string{g}
			}
			gc, _ := got.walk(proj, true)
			wc := refWalker{want}.walk(proj, true)
			got.ents, got.kids = nil, nil
			if gc != wc || !reflect.DeepEqual(got, want) {
				t.Errorf("walk: clean %v, %+v\nreference: clean %v, %+v", gc, *got, wc, *want)
			}
			if len(want.held) > 0 && len(want.dirs) > 0 && len(want.files) > 0 {
				rich++
			}
			linked = linked || want.heldLink
			inHolder = inHolder || slices.ContainsFunc(want.held, func(h string) bool { return strings.HasSuffix(h, "/.github/hooks") })
		})
	}
	if rich < 10 || !linked || !inHolder {
		t.Errorf("%d trees with held entries, directory rules and file rules (want 10 at least), a held link: %v, a held entry in a holder (.github/hooks): %v", rich, linked, inHolder)
	}
}

// randomTree makes at proj a tree of r's choosing: ordinary and protected
// names at every depth, files, directories, links, FIFOs and git
// directories under ordinary names.
func randomTree(t *testing.T, r *rand.Rand, proj string) {
	t.Helper()
	plain := []string{"src", "a", "b", "lib", "node_modules", "Makefile", "x.go", "README.md", ".gitignore", "deep", "pkg", "Dockerfile", "hooks"}
	protected := []string{".git", ".envrc", ".vscode", "CLAUDE.md", "AGENTS.md", ".husky", ".mcp.json", ".npmrc", ".claude", ".github"}
	var fill func(dir string, depth int)
	fill = func(dir string, depth int) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for range 2 + r.IntN(6) {
			name := plain[r.IntN(len(plain))]
			if r.IntN(5) == 0 {
				name = protected[r.IntN(len(protected))]
			}
			p := filepath.Join(dir, name)
			if _, err := os.Lstat(p); err == nil {
				continue
			}
			var err error
			switch k := r.IntN(20); {
			case k == 0:
				// A git directory under an ordinary name.
				for _, d := range []string{"objects", "refs"} {
					if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				err = os.WriteFile(filepath.Join(p, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			case k < 8 && depth < 4:
				fill(p, depth+1)
			case k < 17:
				err = os.WriteFile(p, nil, 0o644)
			case k < 19:
				err = os.Symlink("..", p)
			default:
				err = syscall.Mkfifo(p, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	fill(proj, 0)
}

// TestWalkBulkLast: a directory's installed packages and build products
// are walked after its other entries, so that past the walk's budget the
// project's own code is still written and a nested .envrc still found
// (the forty-eighth attack run's node_modules of 101,000 files, listed
// first, hid svc/api/.envrc, and what it loaded stayed writable). The
// control: with the budget not reached, node_modules is written too.
func TestWalkBulkLast(t *testing.T) {
	ents := []dirEnt{{name: "node_modules", typ: os.ModeDir}, {name: "a"}, {name: "target", typ: os.ModeDir}, {name: "src", typ: os.ModeDir}, {name: "build"}}
	lastBulk(ents)
	var names []string
	for _, e := range ents {
		names = append(names, e.name)
	}
	if want := []string{"a", "src", "build", "node_modules", "target"}; !slices.Equal(names, want) {
		t.Errorf("lastBulk: %q, want %q (a file named build is no directory of them)", names, want)
	}
	proj := filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{"node_modules/pkg", ".venv/lib", "target/debug", "src", "svc/api"} {
		if err := os.MkdirAll(filepath.Join(proj, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		for _, d := range []string{"node_modules/pkg", ".venv/lib", "target/debug"} {
			if err := os.WriteFile(filepath.Join(proj, d, fmt.Sprint(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range []string{"src/main.go", "svc/api/.envrc", "svc/api/main.go"} {
		if err := os.WriteFile(filepath.Join(proj, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pl := policy.Places{Home: filepath.Dir(proj)}.Prepare()
	for _, budget := range []int{30, maxWalk} {
		w := newWalker(pl, proj, false)
		w.budget = budget
		w.walk(proj, true)
		if !slices.Contains(w.dirs, filepath.Join(proj, "src")) || !slices.Contains(w.held, filepath.Join(proj, "svc/api/.envrc")) {
			t.Errorf("budget %d: dirs %q, held %q: want src written and svc/api/.envrc found", budget, w.dirs, w.held)
		}
		if got := slices.Contains(w.dirs, filepath.Join(proj, "node_modules")); got != (budget == maxWalk) {
			t.Errorf("budget %d: node_modules written: %v", budget, got)
		}
	}
}
