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
		// Executable configuration of other agents and tools (issues 22, 23).
		"Edit(~/.npmrc)", "Edit(~/.bash_aliases)", "Edit(~/.config/go/env)", "Write(src/.npmrc)",
		"Write(.cursor/mcp.json)", "Write(.cursor/*.json)", "Write(.gemini/commands/**)", "Write(sub/.gemini/commands/x.toml)",
		"Edit(~/.config/fish/config.fish)", "Write(bunfig.toml)", "Write(.cargo/config.toml)", "Edit(~/.cargo/config.toml)",
		"Write(.github/agents/a.agent.md)", "Edit(~/.tmux.conf)", "Write(//home/u/.config/go/env)",
		// Git hook managers, like .git itself (issue 35).
		"Write(.git/**)", "Write(.husky/**)", "Edit(.husky/pre-commit)", "Write(web/.husky/*)", "Write(.githooks/**)",
		"Edit(lefthook.yml)", "Write(.pre-commit-config.yaml)", "Edit(.config/lefthook.yml)",
		// Instructions the next session loads (issue 35).
		"Edit(CLAUDE.md)", "Write(sub/AGENTS.md)", "Edit(.github/copilot-instructions.md)", "Write(.cursor/rules/**)", "Write(.clinerules)",
		// Secrets in the home: no scope reads them either (issue 35).
		"Read(~/.npmrc)", "Read(~/.netrc)", "Read(~/.aws/**)", "Read(~/.ssh/id_ed25519)", "Read(~/.kube/config)", "Read(~/.cargo/**)",
		"Read(//home/u/.config/gh/hosts.yml)", "Read(~/.bash_history)",
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
	for _, s := range []string{"Edit(src/**)", "Write(src/*.json)", "Edit(src/.gitignore)", "Read(src/.claude/skills/**)", "Read(.git/config)", "Write(~/notes/**)",
		"Write(.cursor/**)", "Write(.cursor/commands/**)", "Write(*.toml)", "Write(docs/*.md)", "Write(husky/**)", "Read(~/.kube/cache/**)",
		"Read(~/.cargo/registry/**)", "Read(~/notes.md)", "Write(.github/workflows/**)"} {
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

// Write(src/**) and Write(.cursor/**) stay usable and cover ordinary files
// (the legitimate .cursor/commands/... write), but never executable
// configuration below them: src/.npmrc, .cursor/mcp.json,
// .gemini/commands/..., nor the instructions the next session loads
// (.cursor/rules/..., CLAUDE.md) or a hook manager's files (.husky/...).
func TestFileRuleNeverCoversExecConfig(t *testing.T) {
	proj := realDir(t, t.TempDir())
	home := filepath.Join(proj, "home")
	call := func(p string) Call {
		return Call{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(proj, p)}, Cwd: proj, ProjectDir: proj, Home: home}
	}
	for rule, cases := range map[string]struct{ covered, refused []string }{
		"Write(src/**)":     {[]string{"src/a.go", "src/npmrc"}, []string{"src/.npmrc", "src/x/.npmrc", "src/bunfig.toml", "src/.bash_aliases", "src/.cursor/mcp.json"}},
		"Write(.cursor/**)": {[]string{".cursor/commands/c.md"}, []string{".cursor/mcp.json", ".cursor/MCP.json", ".cursor/hooks.json", ".cursor/worktrees.json", ".cursor/rules/style.mdc"}},
		"Write(tools/**)": {[]string{"tools/README.md", "tools/husky.md"}, []string{"tools/.gemini/commands/x.toml", "tools/.gemini/commands/git/commit.toml", "tools/.cargo/config.toml",
			"tools/.github/agents/a.agent.md", "tools/.husky/pre-commit", "tools/lefthook.yml", "tools/CLAUDE.md", "tools/AGENTS.md"}},
	} {
		r, err := Parse(rule)
		if err != nil {
			t.Fatal(err)
		}
		if err := Dangerous(r, home); err != nil {
			t.Fatalf("%s refused: %v", rule, err)
		}
		for _, p := range cases.covered {
			if err := Match(r, call(p)); err != nil {
				t.Errorf("control: %s does not cover %s: %v", rule, p, err)
			}
		}
		for _, p := range cases.refused {
			if got := ReasonOf(Match(r, call(p))); got != ReasonProtectedPath {
				t.Errorf("%s on %s: %q, want %s", rule, p, got, ReasonProtectedPath)
			}
		}
	}
}
