package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every entry says what it is and names the document that says it runs
// code; paths are clean and relative; no entry is listed twice.
func TestExecConfigListDocumented(t *testing.T) {
	seen := map[string]bool{}
	list := ExecConfigList()
	if len(list) < 40 {
		t.Fatalf("only %d entries", len(list))
	}
	for _, e := range list {
		if e.What == "" || e.Doc == "" {
			t.Errorf("%s: no description or no document", e.Path)
		}
		if e.Path == "" || strings.HasPrefix(e.Path, "/") || filepath.ToSlash(filepath.Clean(e.Path)) != e.Path {
			t.Errorf("%q is not a clean relative path", e.Path)
		}
		key := e.Path + "@" + map[Anchor]string{AnyDepth: "any", InHome: "home"}[e.Anchor]
		if seen[strings.ToLower(key)] {
			t.Errorf("%s listed twice", key)
		}
		seen[strings.ToLower(key)] = true
	}
	// The list is a copy: callers cannot change the policy.
	list[0].Path = "x"
	if ExecConfigList()[0].Path == "x" {
		t.Error("ExecConfigList returns the policy itself")
	}
}

// Each entry of the list is executable configuration where it is anchored,
// at any depth for AnyDepth entries, and a file inside a directory entry is
// too (every entry, not a sample).
func TestExecConfigEveryEntryClassified(t *testing.T) {
	pl := Places{Home: "/home/u"}
	for _, e := range ExecConfigList() {
		var at []string
		switch e.Anchor {
		case AnyDepth:
			at = []string{"/p/" + e.Path, "/p/vendor/x/" + e.Path, "/home/u/" + e.Path, "/p/" + e.Path + "/inner"}
		case InHome:
			at = []string{"/home/u/" + e.Path, "/home/u/" + e.Path + "/inner"}
		}
		for _, p := range at {
			if got := pl.Classify(p); got.Tier < ExecConfig {
				t.Errorf("Classify(%s) = %v, want executable configuration (%s)", p, got.Tier, e.What)
			}
			if e.Anchor == AnyDepth {
				if got := ProjectExecConfig(strings.TrimPrefix(p, "/p/")); got.Tier < ExecConfig {
					t.Errorf("ProjectExecConfig(%s) = %v", strings.TrimPrefix(p, "/p/"), got.Tier)
				}
			}
		}
		if e.Anchor == InHome {
			// Not at any depth: a project's own .ssh or .config/fish is
			// an ordinary directory.
			if got := pl.Classify("/p/" + e.Path + "/x"); got.Tier != Ordinary && !strings.HasPrefix(e.Path, ".") {
				t.Errorf("Classify(/p/%s/x) = %v", e.Path, got.Tier)
			}
		}
	}
}

func TestProjectExecConfig(t *testing.T) {
	for _, c := range []struct {
		rel  string
		tier Tier
	}{
		{".cursor/mcp.json", ExecConfig},
		{"sub/.CURSOR/MCP.JSON", ExecConfig},
		{".cursor", ExecConfig}, // a directory moved there brings mcp.json
		{".cursor/hooks.json", GuardCritical},
		{".gemini/commands/git/commit.toml", ExecConfig},
		{".gemini/commands", ExecConfig},
		{".gemini/settings.json", GuardCritical},
		{"src/.npmrc", ExecConfig},
		{"a/b/.bash_aliases", ExecConfig},
		{"tools/bunfig.toml", ExecConfig},
		{"rust-toolchain.toml", ExecConfig},
		{"crates/x/rust-toolchain", ExecConfig},
		{"mise.toml", ExecConfig},
		{"sub/.mise.toml", ExecConfig},
		{".config/mise/config.toml", ExecConfig},
		{".tool-versions", ExecConfig},
		{"mise.dev.toml", ExecConfig},
		{"sub/.mise.prod.toml", ExecConfig},
		{"mise.dev.local.toml", ExecConfig},
		{".MISE.ci.local.toml", ExecConfig},
		{".config/mise.staging.toml", ExecConfig},
		{".rtx.toml", ExecConfig},
		{".venv/pip.conf", ExecConfig},
		{"envs/py311/PIP.INI", ExecConfig},
		{"pip.conf", ExecConfig},
		{"uv.toml", ExecConfig},
		{"services/api/uv.toml", ExecConfig},
		{".pdm-python", ExecConfig},
		{"sub/.pdm-python", ExecConfig},
		{"pdm.toml", ExecConfig},
		{"poetry.toml", ExecConfig},
		{"libs/x/poetry.toml", ExecConfig},
		{".hg/hgrc", ExecConfig},
		{"vendor/x/.jj/repo/config.toml", ExecConfig},
		{".cargo/config.toml", ExecConfig},
		{".github", ExecConfig}, // holds .github/hooks and .github/agents
		{".github/agents/x.agent.md", ExecConfig},
		{".github/hooks/h.json", GuardCritical},
		{".claude/settings.json", GuardCritical},
		{".claude/skills/s/SKILL.md", ExecConfig},
		{".git/hooks/pre-commit", ExecConfig},
		{"/abs/p/.envrc", ExecConfig},
		// ordinary
		// Instructions the next session loads (an injection there persists).
		{".cursor/rules/style.mdc", ExecConfig},
		{".gemini/GEMINI.md", ExecConfig},
		{"sub/CLAUDE.md", ExecConfig},
		{"AGENTS.md", ExecConfig},
		{".github/copilot-instructions.md", ExecConfig},
		{".github/instructions/go.instructions.md", ExecConfig},
		{".clinerules/style.md", ExecConfig},
		// Hook managers: what the human's git runs.
		{".husky/pre-commit", ExecConfig},
		{"web/.husky", ExecConfig},
		{".githooks/pre-push", ExecConfig},
		{".pre-commit-config.yaml", ExecConfig},
		{"lefthook.yml", ExecConfig},
		{".lefthook-local.toml", ExecConfig},
		{".config/lefthook.yaml", ExecConfig},
		{".config", ExecConfig}, // holds .config/lefthook.yml
		{".lefthook/pre-commit/lint.sh", ExecConfig},
		{".overcommit.yml", ExecConfig},
		{".simple-git-hooks.json", ExecConfig},
		// ordinary
		{".cursor/commands/x.md", Ordinary},
		{".gemini/notes.md", Ordinary},
		{"docs/CLAUDE.md.bak", Ordinary},
		{"docs/lefthook.md", Ordinary},
		{".config/dotnet-tools.json", Ordinary},
		{".github/workflows/instructions.yml", Ordinary},
		{"husky/pre-commit", Ordinary},
		{".github/lsp.json", ExecConfig},
		{"lsp.json", ExecConfig},
		{".github/skills/x/SKILL.md", ExecConfig},
		{".agents/skills/x/run.sh", ExecConfig},
		{".github/chatmodes/plan.chatmode.md", ExecConfig},
		{".github/workflows/ci.yml", Ordinary},
		{"src/main.go", Ordinary},
		{"src/npmrc", Ordinary},
		{"src/bunfig.toml.bak", Ordinary},
		{"rust-toolchain.md", Ordinary},
		{"docs/mise.md", Ordinary},
		{"docs/pip.conf.example", Ordinary},
		{"mise.toml.bak", Ordinary},
		{"promise.dev.toml", Ordinary},
		{"mise-en-place.toml", Ordinary},
		{"docs/mise.dev.md", Ordinary},
		{".venv/pip-selfcheck.json", Ordinary},
		{"requirements.txt", Ordinary},
		{"ruff.toml", Ordinary},
		{"pyproject.toml", Ordinary},
		{"docs/uv.toml.example", Ordinary},
		{".config/other.toml", Ordinary},
		{"docs/.cursor.md", Ordinary},
		{"", Ordinary},
	} {
		if got := ProjectExecConfig(c.rel); got.Tier != c.tier {
			t.Errorf("ProjectExecConfig(%q) = %v (%s), want %v", c.rel, got.Tier, got.What, c.tier)
		}
	}
	// A directory protected only as one that holds entries of two names
	// (the jail walks into it: confine's entryGuard.judge) says so; an
	// entry itself, or a directory protected whole, does not.
	for rel, holds := range map[string]bool{
		".github": true, "sub/.github": true, ".GitHub": true,
		".github/copilot": false, ".gemini": false, ".qwen": false, ".cursor": false, ".codex": false, ".config": false,
		".github/hooks": false, ".github/agents": false, ".github/copilot/settings.json": false,
		".vscode": false, ".claude": false, ".git": false, ".github/workflows": false,
	} {
		got := (Places{}).Classify("/p/" + rel)
		if got.Holds != holds || holds && !got.Protected() {
			t.Errorf("Classify(/p/%s): Holds %v (%s), want %v", rel, got.Holds, got.What, holds)
		}
	}
	// The Path it reports is the entry, as written.
	if got := ProjectExecConfig("sub/.cursor/mcp.json"); got.Path != "sub/.cursor/mcp.json" {
		t.Errorf("Path = %q", got.Path)
	}
	if got := (Places{}).Classify("/p/sub/.gemini/commands/a.toml"); got.Path != "/p/sub/.gemini/commands" {
		t.Errorf("Classify Path = %q", got.Path)
	}
}

// A file rule that names an entry is refused; one that reaches it only
// through ** or a bare * is not (and never covers it).
func TestPatternCouldName(t *testing.T) {
	for _, p := range []string{
		".cursor/mcp.json", "sub/.cursor/mcp.json", ".cursor/mcp.*", ".cursor/*.json", ".cur?or/mcp.json",
		".gemini/commands/**", ".gemini/commands/x.toml", "**/.gemini/commands/*",
		".npmrc", "src/.npmrc", ".bash_aliases", "bunfig.toml", "src/BUNFIG.toml",
		".cargo/config.toml", ".github/agents/a.md", ".github/hooks/x.json", ".cursor/hooks.json",
		".claude/x", ".git/config",
		// Hook managers and the instructions the next session loads.
		".husky/**", ".husky/pre-commit", "web/.husky/*", ".githooks/**", "lefthook.yml", ".config/lefthook.yml", ".config/*.yml",
		".pre-commit-config.yaml", "CLAUDE.md", "sub/AGENTS.md", ".github/copilot-instructions.md", ".github/instructions/**",
		".cursor/rules/**", ".clinerules", ".windsurfrules",
		"mise.dev.toml", "sub/.mise.ci.local.toml",
	} {
		if _, ok := PatternCouldName(p); !ok {
			t.Errorf("PatternCouldName(%q) = false", p)
		}
	}
	for _, p := range []string{
		".cursor/**", ".cursor/*", ".cursor/commands/**", ".gemini/*/x.toml", "*.md", "docs/*.md", ".config/**", "**/*.yml", "src/**", "src/*", "*.toml",
		".github/workflows/**", "**/*.json", "src/npmrc", "docs/**/*.md",
	} {
		if what, ok := PatternCouldName(p); ok {
			t.Errorf("PatternCouldName(%q) = %s", p, what)
		}
	}
}

// Bash globs: a dot name is reached as bash would match it; a name with no
// dot only when spelled, so `ls *` is not executable configuration.
func TestGlobProtectionExecConfig(t *testing.T) {
	pl := Places{}
	for _, c := range []struct {
		pat  string
		tier Tier
	}{
		{"/p/.cursor/mcp.*", ExecConfig},
		{"/p/.cursor/*", ExecConfig},
		{"/p/.gemini/comm*/x.toml", ExecConfig},
		{"/p/.np?rc", ExecConfig},
		{"/p/**/bunfig.toml", ExecConfig},
		{"/p/*", Ordinary},
		{"/p/src/*.go", Ordinary},
		{"/p/.cursor/rules/*", ExecConfig},
		{"/p/.husky/*", ExecConfig},
		{"/p/*/CLAUDE.md", ExecConfig},
		{"/p/.cursor/commands/*", Ordinary},
		{"/p/*.md", Ordinary},
	} {
		if got := pl.GlobProtection(c.pat); got.Tier != c.tier {
			t.Errorf("GlobProtection(%s) = %v (%s), want %v", c.pat, got.Tier, got.What, c.tier)
		}
	}
}

// The Vault token file named by the config is a secret wherever it is.
func TestSecretsAreSecret(t *testing.T) {
	pl := Places{Home: "/home/u", Secrets: []string{"/home/u/.vault-token"}}
	if got := pl.Classify("/home/u/.vault-token"); got.Tier != GuardCritical || !got.Secret {
		t.Errorf("Classify(~/.vault-token) = %+v", got)
	}
	if _, ok := pl.ContainsSecret("/home/u"); !ok {
		t.Error("a search of the home directory does not reach the token")
	}
	if got := (Places{Home: "/home/u"}).Classify("/srv/vault-token"); got.Protected() {
		t.Errorf("control: a token file the config does not name is %v", got.Tier)
	}
	if got := (Places{Home: "/home/u", Secrets: []string{"/srv/vault-token"}}).Classify("/srv/vault-token"); got.Tier != GuardCritical || !got.Secret {
		t.Errorf("Classify(/srv/vault-token) named by the config = %+v", got)
	}
}
