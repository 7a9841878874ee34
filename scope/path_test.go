package scope

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// tree lays out a project, a home and an outside dir with real files and
// symlinks:
//
//	root/proj/src/a.go
//	root/proj/src/sub/b.go
//	root/proj/src/x        -> root/etc          (symlink escape)
//	root/proj/src/dangle   -> root/etc/new.conf (dangling, points outside)
//	root/proj/src/inside   -> root/proj/src/sub (symlink that stays inside)
//	root/proj/src/up       -> ..                (relative link to proj)
//	root/proj/srcx/a.go
//	root/proj/docs/a.md
//	root/proj/link-src     -> root/proj/src
//	root/proj/.claude/settings.json
//	root/etc/passwd
//	root/home/notes/n.txt
//	root/home/notes/out    -> root/etc
type tree struct {
	root, proj, home, etc string
}

func mkTree(t *testing.T) tree {
	t.Helper()
	root := realDir(t, t.TempDir())
	tr := tree{root: root, proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home"), etc: filepath.Join(root, "etc")}
	files := []string{
		"proj/src/a.go", "proj/src/sub/b.go", "proj/srcx/a.go", "proj/docs/a.md",
		"proj/.claude/settings.json", "etc/passwd", "home/notes/n.txt",
	}
	testfs.Tree(t, root, []byte("x"), 0o644, files...)
	links := [][2]string{
		{"proj/src/x", tr.etc},
		{"proj/src/dangle", filepath.Join(tr.etc, "new.conf")},
		{"proj/src/inside", filepath.Join(tr.proj, "src", "sub")},
		{"proj/src/up", ".."},
		{"proj/link-src", filepath.Join(tr.proj, "src")},
		{"home/notes/out", tr.etc},
	}
	for _, l := range links {
		if err := os.Symlink(l[1], filepath.Join(root, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func TestMatchFile(t *testing.T) {
	tr := mkTree(t)
	p := func(rel string) string { return filepath.Join(tr.proj, rel) }
	rows := []struct {
		rule, tool, path, want string
	}{
		// Edit(src/**): the covered calls next to the escapes.
		{"Edit(src/**)", "Edit", p("src/a.go"), ""},
		{"Edit(src/**)", "Edit", p("src/sub/b.go"), ""},
		{"Edit(src/**)", "Write", p("src/new/deep/c.go"), ""}, // does not exist yet
		{"Edit(src/**)", "MultiEdit", p("src/a.go"), ""},
		{"Edit(src/**)", "Edit", p("src/inside/b.go"), ""}, // symlink that stays inside src
		{"Edit(src/**)", "Edit", p("link-src/a.go"), ""},   // resolves into src
		{"Edit(src/**)", "Edit", "src/a.go", ""},           // relative to cwd = proj
		{"Edit(src/**)", "Edit", tr.proj + "/src/../../etc/passwd", ReasonPathEscapes},
		{"Edit(src/**)", "Edit", "src/../../etc/passwd", ReasonPathEscapes},
		{"Edit(src/**)", "Edit", tr.proj + "/src/../src/a.go", ReasonPathEscapes}, // any .. is refused
		{"Edit(src/**)", "Edit", p("src/x/passwd"), ReasonPathEscapes},            // symlink escape
		{"Edit(src/**)", "Write", p("src/x/new"), ReasonPathEscapes},              // through the link, new file
		{"Edit(src/**)", "Write", p("src/dangle"), ReasonPathEscapes},             // dangling link to outside
		{"Edit(src/**)", "Edit", p("src/up/docs/a.md"), ReasonPathMismatch},
		{"Edit(src/**)", "Edit", p("srcx/a.go"), ReasonPathMismatch},
		{"Edit(src/**)", "Edit", p("docs/a.md"), ReasonPathMismatch},
		{"Edit(src/**)", "Edit", tr.proj, ReasonPathMismatch},
		{"Edit(src/**)", "Edit", filepath.Join(tr.etc, "passwd"), ReasonPathEscapes},
		{"Edit(src/**)", "Read", p("src/a.go"), ReasonToolMismatch},
		{"Edit(src/**)", "Bash", p("src/a.go"), ReasonToolMismatch},

		{"Write(docs/*.md)", "Write", p("docs/a.md"), ""},
		{"Write(docs/*.md)", "Write", p("docs/sub/a.md"), ReasonPathMismatch},
		{"Write(docs/*.md)", "Write", p("docs/a.txt"), ReasonPathMismatch},
		{"Write(docs/*.md)", "Edit", p("docs/a.md"), ReasonToolMismatch},

		{"Read(*.env)", "Read", p(".env"), ""},
		{"Read(*.env)", "Read", p("src/.env"), ReasonPathMismatch}, // anchored, unlike gitignore

		{"Read(~/notes/**)", "Read", filepath.Join(tr.home, "notes/n.txt"), ""},
		{"Read(~/notes/**)", "Read", filepath.Join(tr.home, "notes/out/passwd"), ReasonPathEscapes},
		{"Read(~/notes/**)", "Read", filepath.Join(tr.home, "other.txt"), ReasonPathMismatch},

		{"Edit(//" + tr.root[1:] + "/etc/**)", "Edit", filepath.Join(tr.etc, "passwd"), ""},
		{"Edit(//" + tr.root[1:] + "/etc/**)", "Edit", p("src/x/passwd"), ""}, // the link resolves there
		{"Edit(//" + tr.root[1:] + "/etc/**)", "Edit", p("src/a.go"), ReasonPathMismatch},
		{"Edit(//" + tr.root[1:] + "/etc/**)", "NotebookEdit", filepath.Join(tr.etc, "n.ipynb"), ""},
	}
	allowed, denied := 0, 0
	for _, row := range rows {
		r, err := Parse(row.rule)
		if err != nil {
			t.Fatalf("Parse(%q): %v", row.rule, err)
		}
		key := "file_path"
		if row.tool == "NotebookEdit" {
			key = "notebook_path"
		}
		c := Call{Tool: row.tool, Input: map[string]any{key: row.path}, Cwd: tr.proj, ProjectDir: tr.proj, Home: tr.home}
		err = Match(r, c)
		if got := ReasonOf(err); got != row.want || (err == nil) != (row.want == "") {
			t.Errorf("%s %s %s: got %v, want %q", row.rule, row.tool, row.path, err, row.want)
		}
		if err == nil {
			allowed++
		} else {
			denied++
		}
	}
	if allowed == 0 || denied == 0 {
		t.Fatalf("%d allowed, %d denied", allowed, denied)
	}
}

func TestMatchFileAnchors(t *testing.T) {
	tr := mkTree(t)
	r, err := Parse("Edit(src/**)")
	if err != nil {
		t.Fatal(err)
	}
	// The project dir, not the cwd, anchors a relative pattern: a cd into
	// docs does not turn src/** into docs/src/**.
	c := Call{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(tr.proj, "src/a.go")}, Cwd: filepath.Join(tr.proj, "docs"), ProjectDir: tr.proj}
	if err := Match(r, c); err != nil {
		t.Errorf("cwd in docs: %v", err)
	}
	// No project dir: the cwd is the anchor.
	c.ProjectDir, c.Cwd = "", tr.proj
	if err := Match(r, c); err != nil {
		t.Errorf("no project dir: %v", err)
	}
	c.ProjectDir, c.Cwd = "", filepath.Join(tr.proj, "docs")
	if got := ReasonOf(Match(r, c)); got != ReasonPathEscapes {
		t.Errorf("cwd docs without project dir: %q, want path_escapes", got)
	}

	bad := []Call{
		{Tool: "Edit", Input: map[string]any{}, Cwd: tr.proj},
		{Tool: "Edit", Input: map[string]any{"file_path": 7}, Cwd: tr.proj},
		{Tool: "Edit", Input: map[string]any{"file_path": ""}, Cwd: tr.proj},
		{Tool: "Edit", Input: map[string]any{"file_path": "src/a\x00.go"}, Cwd: tr.proj},
		{Tool: "Edit", Input: map[string]any{"file_path": "src/a.go"}},                                         // relative, no cwd
		{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(tr.proj, "src/a.go")}},                 // no anchor dir
		{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(tr.proj, "src/a.go/x")}, Cwd: tr.proj}, // file used as dir
	}
	for i, c := range bad {
		if got := ReasonOf(Match(r, c)); got != ReasonMalformedInput {
			t.Errorf("bad call %d: %q, want malformed_input", i, got)
		}
	}
	home, _ := Parse("Read(~/notes/**)")
	if got := ReasonOf(Match(home, Call{Tool: "Read", Input: map[string]any{"file_path": filepath.Join(tr.home, "notes/n.txt")}})); got != ReasonMalformedInput {
		t.Errorf("~ rule without Home: %q", got)
	}
}
