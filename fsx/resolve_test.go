package fsx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestResolveLoop(t *testing.T) {
	d := realDir(t)
	a, b := filepath.Join(d, "a"), filepath.Join(d, "b")
	if err := os.Symlink(b, a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(filepath.Join(a, "x")); err == nil {
		t.Error("symlink loop resolved")
	}
	got, err := ResolvePath(filepath.Join(d, "new", "file"))
	if err != nil || got != filepath.Join(d, "new", "file") {
		t.Errorf("missing path: %q, %v", got, err)
	}
}

// notes.json -> ~/.claude/settings.local.json, which does not exist yet:
// writing notes.json creates the settings file, so it resolves there.
func TestResolveDanglingSymlink(t *testing.T) {
	d := realDir(t)
	target := filepath.Join(d, "home", ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.MkdirAll(filepath.Join(d, "proj"), 0o755)
	link := filepath.Join(d, "proj", "notes.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(link)
	if err != nil || r.Path != target || !r.Dangling || !r.Crossed() {
		t.Fatalf("Resolve(%s) = %+v, %v; want %s, dangling", link, r, err, target)
	}
	// Control: an ordinary missing file is not dangling and crosses nothing.
	r, err = Resolve(filepath.Join(d, "proj", "new.json"))
	if err != nil || r.Dangling || r.Crossed() || r.Path != filepath.Join(d, "proj", "new.json") {
		t.Fatalf("ordinary new file: %+v, %v", r, err)
	}
}

// docs -> .git, then docs/config is .git/config; "docs/../x" is the
// kernel's "..": the parent of .git, not of docs.
func TestResolveDirectorySymlink(t *testing.T) {
	d := realDir(t)
	os.MkdirAll(filepath.Join(d, "proj", ".git"), 0o755)
	os.WriteFile(filepath.Join(d, "proj", ".git", "config"), nil, 0o644)
	os.MkdirAll(filepath.Join(d, "proj", "sub", "deep"), 0o755)
	if err := os.Symlink(".git", filepath.Join(d, "proj", "docs")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d, "proj", "sub", "deep"), filepath.Join(d, "proj", "up")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"proj/docs/config":     "proj/.git/config",
		"proj/docs/hooks/x":    "proj/.git/hooks/x",
		"proj/up/../x":         "proj/sub/x",
		"proj//docs/./config":  "proj/.git/config",
		"proj/sub/../docs/new": "proj/.git/new",
	} {
		r, err := Resolve(d + "/" + in)
		if err != nil || r.Path != filepath.Join(d, want) {
			t.Errorf("Resolve(%s) = %+v, %v; want %s", in, r, err, want)
		}
		if !r.Crossed() || !strings.Contains(r.Links[0], " -> ") {
			t.Errorf("Resolve(%s) does not say it crossed a link: %+v", in, r)
		}
	}
}

func TestAbs(t *testing.T) {
	for _, c := range [][4]string{
		{"/p", "/h", "~/x", "/h/x"},
		{"/p", "/h", "~", "/h"},
		{"/p", "", "~/x", "/p/~/x"},
		{"/p", "/h", "x/y", "/p/x/y"},
		{"/p", "/h", "/abs", "/abs"},
	} {
		if got := Abs(c[0], c[1], c[2]); filepath.Clean(got) != c[3] {
			t.Errorf("Abs(%q, %q, %q) = %q, want %q", c[0], c[1], c[2], got, c[3])
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a/b", true}, {"/a/b/c", "/a/b", true}, {"/a/bc", "/a/b", false}, {"/a", "/a/b", false},
		{"/a/b/", "/a/b", true}, {"/a/./b/c", "/a/b/", true}, {"/a/b/../c", "/a/b", false}, {"/x", "/", true},
		{"", "/a", false}, {"/a", "", false},
	} {
		if got := Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}

func TestSegments(t *testing.T) {
	for p, want := range map[string][]string{
		"/a/b": {"a", "b"}, "a//b/": {"a", "b"}, "/": nil, "": nil, "a": {"a"}, "/a/../b": {"a", "..", "b"},
	} {
		if got := Segments(p); !slices.Equal(got, want) {
			t.Errorf("Segments(%q) = %q, want %q", p, got, want)
		}
	}
}
