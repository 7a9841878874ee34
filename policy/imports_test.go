package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestInstructionImports: the files the project's instruction files
// import with @path, followed as Claude Code follows them (relative to the
// importing file, ~/ the home, five hops, each once), read as both Claude
// Code and Gemini CLI read a reference, and more: the thirty-eighth attack
// run wrote, from confined code, each of the files in the second paragraph
// of CLAUDE.md below, which an agent imports and the last version did not
// see (a comma, parentheses, an escaped space, a stray backtick, a code
// span over two lines, a fence that is none, a name with no dot or slash);
// an @ in code is an import here too. Claude Code's rules import. Controls:
// an e-mail address, the sixth hop, an instruction file in node_modules.
func TestInstructionImports(t *testing.T) {
	dir := t.TempDir()
	proj, home := filepath.Join(dir, "p"), filepath.Join(dir, "h")
	files := map[string]string{
		"p/CLAUDE.md": "# Rules\nSee @docs/notes.md, and (@./style.md).\nMail a@b.c, ask @alice.\n" +
			"`@docs/span.md` is code.\n```\n@docs/fenced.md\n```\nAnd @~/.claude/mine.md\n\n" +
			"@docs/a,b.md @docs/p(1).md @docs/my\\ notes.md\n` stray backtick then @docs/stray.md\n" +
			"a span `over\ntwo lines` then @docs/multiline.md\n```not a fence```\n@docs/afterfake.md and @Makefile\n",
		"p/docs/notes.md":            "More in @more.md\n",
		"p/docs/more.md":             "Loop: @notes.md\n@1.md\n",
		"p/docs/1.md":                "@2.md",
		"p/docs/2.md":                "@3.md",
		"p/docs/3.md":                "@4.md",
		"p/docs/4.md":                "@5.md",
		"p/.gemini/GEMINI.md":        "@../gemini-rules.md",
		"p/AGENTS.md":                "Architecture: @docs/arch.md",
		"p/.claude/CLAUDE.md":        "@/abs/rules.md",
		"p/.claude/rules/go.md":      "Style: @../../docs/ruled.md",
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
		proj + "/docs/fenced.md", proj + "/docs/a,b.md", proj + "/docs/p(1).md", proj + "/docs/my notes.md", proj + "/docs/my\\",
		proj + "/docs/stray.md", proj + "/docs/multiline.md", proj + "/docs/afterfake.md", proj + "/Makefile", proj + "/docs/ruled.md",
		proj + "/docs/arch.md",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s not imported: %q", w, got)
		}
	}
	for _, not := range []string{proj + "/docs/5.md", proj + "/b.c", proj + "/never.md", proj + "/node_modules/x/never.md"} {
		if slices.Contains(got, not) {
			t.Errorf("%s taken for an import: %q", not, got)
		}
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

// TestRulesWalkBounded: the walk for .claude/rules looks at no more than
// maxRulesEntries entries (the seventy-second attack run's 300,000 empty
// directories there cost every call 2.3 to 2.9 s): a rules file past them
// is not reached. Control: one among the first entries is read.
func TestRulesWalkBounded(t *testing.T) {
	project := t.TempDir()
	rules := filepath.Join(project, ".claude", "rules")
	for i := range maxRulesEntries + 10 {
		if err := os.MkdirAll(filepath.Join(rules, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	early, late := filepath.Join(rules, "a.md"), filepath.Join(rules, "zz.md")
	for _, f := range []string{early, late} {
		if err := os.WriteFile(f, []byte("# rule\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := rulesFiles(project)
	if !slices.Contains(got, early) {
		t.Errorf("control: %s, among the first entries, is not read: %v", early, got)
	}
	if slices.Contains(got, late) {
		t.Errorf("%s, past %d entries, is read: the walk is not bounded", late, maxRulesEntries)
	}
}

// TestImportsOfLinear: each @ reference is read no further than a path
// can be long (the seventy-fifth attack run's CLAUDE.md of "@a\ " over
// 64 KB took 3.5 s of a hook call: an escaped space counts as the space an
// @ follows, and each @ was read to the end of the file). The bytes
// allocated are the measure: 64 KB of it cost at most eight times 16 KB.
// Control: an escaped space in a reference is read as Claude Code reads it.
func TestImportsOfLinear(t *testing.T) {
	if got := importsOf("see @docs/a\\ b.md now"); !slices.Contains(got, "docs/a b.md") {
		t.Errorf("control: @docs/a\\ b.md: %q, want docs/a b.md among them", got)
	}
	allocated := func(n int) uint64 {
		text := strings.Repeat(`@a\ `, n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		importsOf(text)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(4096), allocated(16384)
	if large > 8*small {
		t.Errorf("64 KB of @a\\ allocate %d bytes, 16 KB %d: not linear", large, small)
	}
}
