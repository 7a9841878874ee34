//go:build linux

package confine

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/undo"
)

// settled is a plan's start after which every directory made now has
// settled: a test keeps the listings of a tree it has just made.
func settled() time.Time { return time.Now().Add(listingSettle + time.Minute) }

// listingsWalk walks proj as a project-write plan does (from the
// project's descriptor), with the listings kept beside its undo records
// in the undo directory of state when use (the store made first), and
// returns the walker and its listings (nil without).
func listingsWalk(t *testing.T, proj, state string, use bool, started time.Time) (*walker, *listings) {
	t.Helper()
	mustDo(t, os.MkdirAll(listingsStore(t, state, proj).Dir, 0o700))
	root, err := openProject(proj, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFd(root)
	pl := policy.Places{Home: filepath.Dir(proj)}.Prepare()
	w := newWalker(pl, proj, true)
	w.skip = []string{filepath.Join(proj, ".git")}
	w.root = root
	if use {
		if w.listings = openListings(state, proj, root, started); w.listings == nil {
			t.Fatalf("no listings kept on this file system (%s)", proj)
		}
	}
	w.walk(proj, true)
	l := w.listings
	if l != nil {
		l.save()
	}
	w.ents, w.kids, w.listings = nil, nil, nil
	return w, l
}

// sameWalk fails t unless the walk with listings found what the walk
// without them found: every rule, held entry, link, directory and change
// time, inode and unclean directory.
func sameWalk(t *testing.T, what string, got, want *walker) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the walk with listings differs from the walk without:\ndirs %q\n want %q\nfiles %q\n want %q\nheld %q\n want %q\nunclean %q\n want %q\nseen %v\n want %v",
			what, got.dirs, want.dirs, got.files, want.files, got.held, want.held, got.unclean, want.unclean, got.seen, want.seen)
	}
}

// TestListingsWalk: over random trees, a walk that takes the listings the
// last walk kept finds exactly what a walk that reads every directory
// finds, after each change a program could make between two calls (a
// protected name made, a git directory under an ordinary name, a
// directory renamed, replaced, or replaced by a link to itself moved, a
// file removed, a hard link made under a protected name, a directory made
// unlistable); and it takes every directory's listing again when nothing
// changed, or only a file's content.
func TestListingsWalk(t *testing.T) {
	mutations := []struct {
		name string
		do   func(t *testing.T, r *rand.Rand, proj string, dirs, files []string)
	}{
		{"nothing", func(*testing.T, *rand.Rand, string, []string, []string) {}},
		{"a file's content", func(t *testing.T, r *rand.Rand, _ string, _, files []string) {
			if len(files) > 0 {
				testfs.Write(t, pick(r, files), []byte("changed"), 0o644)
			}
		}},
		{"CLAUDE.md made", func(t *testing.T, r *rand.Rand, _ string, dirs, _ []string) {
			if p := newName(pick(r, dirs), "CLAUDE.md", "AGENTS.md"); p != "" {
				testfs.Write(t, p, []byte("x"), 0o644)
			}
		}},
		{".envrc made in the top", func(t *testing.T, _ *rand.Rand, proj string, _, _ []string) {
			if p := newName(proj, ".envrc", ".mcp.json", "CLAUDE.md"); p != "" {
				testfs.Write(t, p, []byte("x"), 0o644)
			}
		}},
		{"a git directory made", func(t *testing.T, r *rand.Rand, _ string, dirs, _ []string) {
			g := filepath.Join(pick(r, dirs), "plain-new")
			testfs.Tree(t, g, nil, 0o644, "objects/x", "refs/heads/main")
			testfs.Write(t, filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		}},
		{"a directory renamed", func(t *testing.T, r *rand.Rand, proj string, dirs, _ []string) {
			if d := pickBelow(r, proj, dirs); d != "" {
				mustDo(t, os.Rename(d, d+".moved"))
			}
		}},
		{"a directory replaced", func(t *testing.T, r *rand.Rand, proj string, dirs, _ []string) {
			if d := pickBelow(r, proj, dirs); d != "" {
				mustDo(t, os.Rename(d, d+".old"))
				testfs.Write(t, filepath.Join(d, ".vscode", "tasks.json"), []byte("{}"), 0o644)
			}
		}},
		{"a directory replaced by a link to itself", func(t *testing.T, r *rand.Rand, proj string, dirs, _ []string) {
			if d := pickBelow(r, proj, dirs); d != "" {
				mustDo(t, os.Rename(d, d+".real"))
				mustDo(t, os.Symlink(filepath.Base(d)+".real", d))
			}
		}},
		{"a file removed", func(t *testing.T, r *rand.Rand, _ string, _, files []string) {
			if len(files) > 0 {
				mustDo(t, os.Remove(pick(r, files)))
			}
		}},
		{"a hard link named .envrc", func(t *testing.T, r *rand.Rand, _ string, dirs, files []string) {
			if p := newName(pick(r, dirs), ".envrc", "CLAUDE.md", ".npmrc"); p != "" && len(files) > 0 {
				mustDo(t, os.Link(pick(r, files), p))
			}
		}},
		{"a directory made unlistable", func(t *testing.T, r *rand.Rand, proj string, dirs, _ []string) {
			if d := pickBelow(r, proj, dirs); d != "" {
				mustDo(t, os.Chmod(d, 0o311))
				t.Cleanup(func() { _ = os.Chmod(d, 0o755) })
			}
		}},
	}
	took := 0
	for seed := range uint64(12) {
		for _, m := range mutations {
			t.Run(fmt.Sprintf("%d/%s", seed, m.name), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 11))
				top := t.TempDir()
				proj, state := filepath.Join(top, "proj"), filepath.Join(top, "state")
				randomTree(t, r, proj)
				first, l := listingsWalk(t, proj, state, true, settled())
				if len(l.took) != 0 || l.kept != len(first.seen)-countUnlisted(first) {
					t.Fatalf("the first walk took %d listings and kept %d of %d directories", len(l.took), l.kept, len(first.seen))
				}
				var dirs, files []string
				for d, c := range first.seen {
					if c != -1 && !isAncestorOrSelf(filepath.Join(proj, ".git"), d) {
						dirs = append(dirs, d)
					}
				}
				slices.Sort(dirs)
				for _, d := range dirs {
					ents, _ := os.ReadDir(d)
					for _, e := range ents {
						if e.Type().IsRegular() {
							files = append(files, filepath.Join(d, e.Name()))
						}
					}
				}
				m.do(t, r, proj, dirs, files)
				got, l := listingsWalk(t, proj, state, true, settled())
				want, _ := listingsWalk(t, proj, state, false, settled())
				sameWalk(t, m.name, got, want)
				if m.name == "nothing" || m.name == "a file's content" {
					if len(l.took) != len(want.seen)-countUnlisted(want) || l.kept != 0 {
						t.Errorf("nothing changed, and the walk took %d listings of %d directories (%d read anew)", len(l.took), len(want.seen), l.kept)
					}
				}
				took += len(l.took)
				// What that walk left (the listings it took again and
				// those it read anew) serves the next one whole.
				again, l := listingsWalk(t, proj, state, true, settled())
				sameWalk(t, m.name+", the walk after", again, want)
				if len(l.took) != len(want.seen)-countUnlisted(want) || l.kept != 0 {
					t.Errorf("the walk after took %d listings of %d directories (%d read anew)", len(l.took), len(want.seen), l.kept)
				}
			})
		}
	}
	if took == 0 {
		t.Error("no walk took a listing again")
	}
}

// TestListingsSettle: a directory that changed less than listingSettle
// before the walk began is read again by the next walk, not taken from
// the listings: a change in the same tick of the kernel's clock as the
// reading would leave its change time as it was. Control: the same tree
// kept as settled is taken whole.
func TestListingsSettle(t *testing.T) {
	top := t.TempDir()
	proj, state := filepath.Join(top, "proj"), filepath.Join(top, "state")
	testfs.Tree(t, proj, []byte("x"), 0o644, "src/a.go", "src/b/c.go", "README.md")
	_, l := listingsWalk(t, proj, state, true, time.Now())
	if l.kept != 0 {
		t.Fatalf("%d listings of directories made just now kept", l.kept)
	}
	_, l = listingsWalk(t, proj, state, true, time.Now())
	if len(l.took) != 0 {
		t.Fatalf("%d listings taken", len(l.took))
	}
	listingsWalk(t, proj, state, true, settled())
	if _, l = listingsWalk(t, proj, state, true, settled()); len(l.took) != 3 {
		t.Fatalf("control: %d listings taken, want 3 (the top, src, src/b)", len(l.took))
	}
}

// TestListingsDamaged: a listings file that is not as written (a byte
// changed, cut short, another project's, a link in its place) is taken as
// none: every directory is read, and the walk finds what it finds without.
func TestListingsDamaged(t *testing.T) {
	top := t.TempDir()
	proj, other, state := filepath.Join(top, "proj"), filepath.Join(top, "other"), filepath.Join(top, "state")
	testfs.Tree(t, proj, []byte("x"), 0o644, "src/a.go", "lib/CLAUDE.md", "README.md")
	testfs.Tree(t, other, []byte("x"), 0o644, "src/a.go", "lib/b.go", "README.md")
	file := listingsStore(t, state, proj).ListingsFile()
	want, _ := listingsWalk(t, proj, state, false, settled())
	for _, damage := range []struct {
		name string
		do   func(good []byte)
	}{
		{"a byte changed", func(good []byte) {
			b := slices.Clone(good)
			b[len(b)/2] ^= 1
			testfs.Write(t, file, b, 0o600)
		}},
		{"cut short", func(good []byte) { testfs.Write(t, file, good[:len(good)-1], 0o600) }},
		{"another project's", func([]byte) {
			listingsWalk(t, other, state, true, settled())
			mustDo(t, os.Rename(listingsStore(t, state, other).ListingsFile(), file))
		}},
		{"a link", func(good []byte) {
			testfs.Write(t, file+".real", good, 0o600)
			mustDo(t, os.Remove(file))
			mustDo(t, os.Symlink(file+".real", file))
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			mustDo(t, os.RemoveAll(file))
			listingsWalk(t, proj, state, true, settled())
			good, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// Control: as written, every directory is taken.
			got, l := listingsWalk(t, proj, state, true, settled())
			if len(l.took) != 3 {
				t.Fatalf("control: %d listings taken, want 3 (the top, src, lib)", len(l.took))
			}
			sameWalk(t, "as written", got, want)
			damage.do(good)
			got, l = listingsWalk(t, proj, state, true, settled())
			if len(l.took) != 0 {
				t.Errorf("%d listings taken from a file %s", len(l.took), damage.name)
			}
			sameWalk(t, damage.name, got, want)
		})
	}
}

// TestPlanListings: NewPlan keeps the project's listings beside its undo
// records, and the next plan, the project unchanged, is the same plan
// and writes no new file; after a protected name is made, the next plan
// holds it.
func TestPlanListings(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	testfs.Tree(t, proj, []byte("x"), 0o644, "src/a.go", "src/pkg/b.go", "lib/.vscode/x.json", "README.md")
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(),
		Places: policy.Places{Home: filepath.Join(root, "home"), StateDir: filepath.Join(root, "state")}}
	mustDo(t, os.MkdirAll(e.TempDir, 0o755))
	// The store the launch's undo record makes.
	file := listingsStore(t, e.Places.StateDir, proj).ListingsFile()
	mustDo(t, os.MkdirAll(filepath.Dir(file), 0o700))
	// Only directories that changed listingSettle before a plan began
	// are kept.
	time.Sleep(listingSettle + 100*time.Millisecond)
	s := Spec{Cap: policy.Capability{Write: true}, Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}}
	plan := func() Plan {
		p, err := NewPlan(s, e)
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t, os.RemoveAll(p.RunDir))
		unlockRun(p.runLock)
		return p
	}
	first := plan()
	before, err := os.Stat(file)
	if err != nil {
		t.Fatalf("no listings kept: %v", err)
	}
	second := plan()
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("the listings file was written again, nothing having changed")
	}
	for _, f := range []func(Plan) any{
		func(p Plan) any { return p.WriteDirs }, func(p Plan) any { return p.WriteFiles }, func(p Plan) any { return p.Held },
		func(p Plan) any { return p.Dirs }, func(p Plan) any { return p.RuleIDs }, func(p Plan) any { return p.Unclean },
		func(p Plan) any { return p.TopWritable },
	} {
		if !reflect.DeepEqual(f(first), f(second)) {
			t.Errorf("the second plan differs: %v, first %v", f(second), f(first))
		}
	}
	if !slices.Contains(second.WriteDirs, filepath.Join(proj, "src")) {
		t.Errorf("control: src is not writable: %q", second.WriteDirs)
	}
	testfs.Write(t, filepath.Join(proj, "src", "pkg", "CLAUDE.md"), []byte("x"), 0o644)
	third := plan()
	if !slices.Contains(third.Held, filepath.Join(proj, "src", "pkg", "CLAUDE.md")) || slices.Contains(third.WriteDirs, filepath.Join(proj, "src")) {
		t.Errorf("src/pkg/CLAUDE.md made after the listings were kept: held %q, writable %q", third.Held, third.WriteDirs)
	}
	if got := slices.Collect(maps.Keys(third.Dirs)); len(got) != len(first.Dirs) {
		t.Errorf("directories walked: %q", got)
	}
}

// listingsStore is proj's undo store in the undo directory of state.
func listingsStore(t *testing.T, state, proj string) *undo.Store {
	t.Helper()
	s, err := undo.Open(state, proj)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

// newName is the first of names not in dir, as a path; "" if all are.
func newName(dir string, names ...string) string {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); os.IsNotExist(err) {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// pickBelow picks one of dirs below proj (not proj), or "".
func pickBelow(r *rand.Rand, proj string, dirs []string) string {
	var below []string
	for _, d := range dirs {
		if d != proj && !strings.Contains(d, "/.git/") {
			below = append(below, d)
		}
	}
	if len(below) == 0 {
		return ""
	}
	return pick(r, below)
}

func countUnlisted(w *walker) int {
	n := 0
	for _, c := range w.seen {
		if c == -1 {
			n++
		}
	}
	return n
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
