package scope

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rule that names a path of either protected tier, at any depth, is
// refused; rules that only reach one through ** stay usable.
func TestDangerousProtectedAtAnyDepth(t *testing.T) {
	home := "/home/u"
	for _, s := range []string{
		"Edit(src/.claude/skills/**)", "Write(src/.claude/agents/a.md)", "Edit(**/.git/config)",
		"Edit(src/.git/hooks/*)", "Write(src/.mcp.json)", "Write(web/.envrc)", "Edit(sub/.gitmodules)",
		"Write(~/.bashrc)", "Write(~/.zshenv)", "Write(~/.claude.json)", "Edit(~/.ssh/config)",
		"Edit(~/.config/git/config)", "Write(//home/u/.profile)", "Edit(lib/.cl?ude/commands/x.md)",
	} {
		r, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if err := Dangerous(r, home); err == nil || !strings.Contains(err.Error(), "loopguard approve") {
			t.Errorf("Dangerous(%s) = %v, want a refusal", s, err)
		}
	}
	// Controls.
	for _, s := range []string{"Edit(src/**)", "Write(src/*.json)", "Edit(src/.gitignore)", "Read(src/.claude/skills/**)", "Read(.git/config)", "Write(~/notes/**)"} {
		r, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if err := Dangerous(r, home); err != nil {
			t.Errorf("Dangerous(%s) = %v, want nil", s, err)
		}
	}
}

// Edit(src/**) covers src/a.go but not src/.claude/skills/... nor
// src/.git/config, written directly or through a symlink.
func TestFileRuleNeverCoversProtected(t *testing.T) {
	proj := realDir(t, t.TempDir())
	home := filepath.Join(proj, "home")
	os.MkdirAll(filepath.Join(proj, "src", ".git"), 0o755)
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	os.Symlink(filepath.Join(proj, ".git"), filepath.Join(proj, "src", "docs"))
	r, err := Parse("Edit(src/**)")
	if err != nil {
		t.Fatal(err)
	}
	call := func(p string) Call {
		return Call{Tool: "Edit", Input: map[string]any{"file_path": filepath.Join(proj, p)}, Cwd: proj, ProjectDir: proj, Home: home}
	}
	if err := Match(r, call("src/a.go")); err != nil {
		t.Fatalf("control: Edit(src/**) does not cover src/a.go: %v", err)
	}
	for _, p := range []string{"src/.claude/skills/x/SKILL.md", "src/.git/config", "src/.claude/settings.json", "src/.mcp.json"} {
		if got := ReasonOf(Match(r, call(p))); got != ReasonProtectedPath {
			t.Errorf("Edit(src/**) on %s: %q, want %s", p, got, ReasonProtectedPath)
		}
	}
	// Through src/docs -> .git, the path leaves src: not covered either.
	if err := Match(r, call("src/docs/config")); err == nil {
		t.Error("Edit(src/**) covered src/docs/config, which is .git/config")
	}
	// Read rules only stop at the guard's secrets.
	rr, _ := Parse("Read(src/**)")
	if err := Match(rr, Call{Tool: "Read", Input: map[string]any{"file_path": filepath.Join(proj, "src", ".git", "config")}, Cwd: proj, ProjectDir: proj, Home: home}); err != nil {
		t.Errorf("Read(src/**) does not cover src/.git/config: %v", err)
	}
}
