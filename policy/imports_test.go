package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInstructionImports: the files the project's instruction files
// import with @path, followed as Claude Code follows them (relative to the
// importing file, ~/ the home, five hops, each once), and not an @ in a
// code span or block, an e-mail address or a bare @name (controls).
func TestInstructionImports(t *testing.T) {
	dir := t.TempDir()
	proj, home := filepath.Join(dir, "p"), filepath.Join(dir, "h")
	files := map[string]string{
		"p/CLAUDE.md": "# Rules\nSee @docs/notes.md, and (@./style.md).\nMail a@b.c, ask @alice.\n" +
			"`@docs/span.md` is code.\n```\n@docs/fenced.md\n```\nAnd @~/.claude/mine.md\n",
		"p/docs/notes.md":            "More in @more.md\n",
		"p/docs/more.md":             "Loop: @notes.md\n@1.md\n",
		"p/docs/1.md":                "@2.md",
		"p/docs/2.md":                "@3.md",
		"p/docs/3.md":                "@4.md",
		"p/docs/4.md":                "@5.md",
		"p/.gemini/GEMINI.md":        "@../gemini-rules.md",
		"p/.claude/CLAUDE.md":        "@/abs/rules.md",
		"h/.claude/mine.md":          "mine",
		"p/CLAUDE.local.md":          "nothing here",
		"p/docs/span.md":             "",
		"p/docs/fenced.md":           "",
		"p/node_modules/x/CLAUDE.md": "@never.md",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := InstructionImports(proj, home)
	want := []string{
		proj + "/docs/notes.md", proj + "/docs/more.md", proj + "/docs/1.md", proj + "/docs/2.md", proj + "/docs/3.md",
		proj + "/docs/4.md", proj + "/style.md", home + "/.claude/mine.md", "/abs/rules.md", proj + "/gemini-rules.md",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s not imported: %v", w, got)
		}
	}
	for _, not := range []string{proj + "/docs/5.md", proj + "/docs/span.md", proj + "/docs/fenced.md", proj + "/b.c", proj + "/never.md"} {
		if slices.Contains(got, not) {
			t.Errorf("%s taken for an import: %v", not, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("imports %v, want %v", got, want)
	}
	// The protected set has them as instruction files.
	pl := Places{Home: home, Imports: got}.Prepare()
	if pr := pl.Classify(proj + "/docs/notes.md"); !pr.Protected() || pr.What != importWhat {
		t.Errorf("docs/notes.md: %+v", pr)
	}
	if pr := pl.Classify(proj + "/docs/other.md"); pr.Protected() {
		t.Errorf("control: docs/other.md: %+v", pr)
	}
}
