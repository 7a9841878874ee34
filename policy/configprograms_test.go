package policy

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestConfigPrograms: what a project's executable configuration names as
// a program is found: Yarn's yarnPath (the forty-fifth attack run's
// .yarn/releases/yarn-4.5.0.cjs) and plugins, Yarn 1's yarn-path, an MCP
// server's script and its arguments' paths, a Claude Code hook's script
// under $CLAUDE_PROJECT_DIR, a dev container's postCreateCommand (an
// array), a pre-commit local hook's entry, a lefthook run in a block
// scalar. Controls: a bare program (npx, node), a path outside the
// project, a key that names no command, a comment.
func TestConfigPrograms(t *testing.T) {
	proj := realDir(t, t.TempDir())
	files := map[string]string{
		".yarnrc.yml": `nodeLinker: node-modules
yarnPath: .yarn/releases/yarn-4.5.0.cjs   # pinned
plugins:
  - path: ".yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs"
    spec: "@yarnpkg/plugin-workspace-tools"
cacheFolder: ./cache/yarn
`,
		".yarnrc": "yarn-path \"./vendor/yarn-1.22.22.js\"\n",
		".mcp.json": `{"mcpServers": {
  "local": {"command": "node", "args": ["./tools/mcp/server.js", "--root", "/etc"]},
  "remote": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
  "outside": {"command": "/usr/local/bin/srv"}
}}`,
		".claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/check.sh"}]}]},
  "statusLine": {"type": "command", "command": "bash ./bin/status.sh"},
  "permissions": {"allow": ["Bash(./docs/not-a-command.sh)"]}}`,
		".devcontainer/devcontainer.json": `{"postCreateCommand": ["bash", "./.devtools/setup.sh"], "image": "x"}`,
		".pre-commit-config.yaml": `repos:
  - repo: local
    hooks:
      - id: lint
        entry: ./hooks/lint.sh --fix
        language: system
  - repo: https://github.com/psf/black
    hooks:
      - id: black
`,
		"lefthook.yml": `pre-commit:
  commands:
    test:
      run: |
        go vet ./...
        ./ci/fmt-check.sh {staged_files}
# run: ./commented/out.sh
`,
	}
	for f, text := range files {
		testfs.Write(t, filepath.Join(proj, f), []byte(text), 0o644)
	}
	got := ConfigPrograms(proj)
	want := []string{
		".yarn/releases/yarn-4.5.0.cjs", ".yarn/releases", ".yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs", ".yarn/plugins/@yarnpkg",
		"vendor/yarn-1.22.22.js", "vendor", "tools/mcp/server.js", "tools/mcp", "scripts/check.sh", "scripts",
		"bin/status.sh", "bin", ".devtools/setup.sh", ".devtools", "hooks/lint.sh", "hooks", "ci/fmt-check.sh", "ci",
	}
	for _, w := range want {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("ConfigPrograms = %q, want %s in it", got, w)
		}
	}
	for _, p := range got {
		rel, _ := filepath.Rel(proj, p)
		if !slices.Contains(want, rel) {
			t.Errorf("control: ConfigPrograms holds %s", rel)
		}
	}
	for _, no := range []string{"cache/yarn", "docs/not-a-command.sh", "commented/out.sh", "@modelcontextprotocol/server-github", "..."} {
		if slices.Contains(got, filepath.Join(proj, no)) {
			t.Errorf("control: %s is in %q", no, got)
		}
	}
	// Through Places: the file yarnPath names is executable configuration.
	pl := Places{Imports: ProjectLoads(proj, "")}.Prepare()
	if c := pl.Classify(filepath.Join(proj, ".yarn/releases/yarn-4.5.0.cjs")); !c.Protected() {
		t.Errorf("Classify(yarnPath's file) = %+v, want protected", c)
	}
	if c := pl.Classify(filepath.Join(proj, "src/app.js")); c.Protected() {
		t.Errorf("control: Classify(src/app.js) = %+v", c)
	}
}

// FuzzConfigPrograms: whatever the configuration's text, ConfigPrograms
// returns, never panics, and gives only paths below the project.
func FuzzConfigPrograms(f *testing.F) {
	f.Add(`{"command": "node", "args": ["./a.js"]}`, "yarnPath: |\n  ./x.cjs\n")
	f.Add(`{"postCreateCommand": [1, null, "./x"]}`, "- path: '.yarn/p.cjs'")
	f.Fuzz(func(t *testing.T, jsonText, yamlText string) {
		proj := t.TempDir()
		testfs.Write(t, filepath.Join(proj, ".mcp.json"), []byte(jsonText), 0o644)
		testfs.Write(t, filepath.Join(proj, ".yarnrc.yml"), []byte(yamlText), 0o644)
		testfs.Write(t, filepath.Join(proj, ".yarnrc"), []byte(yamlText), 0o644)
		for _, p := range ConfigPrograms(proj) {
			if !strings.HasPrefix(p, proj+"/") {
				t.Fatalf("%q, %q gave %q, not below the project", jsonText, yamlText, p)
			}
		}
	})
}
