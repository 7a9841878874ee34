package policy

import (
	"fmt"
	"os"
	"os/exec"
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
	pl := Places{Imports: ProjectLoads(proj, "", nil)}.Prepare()
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

// TestConfigProgramsForms: the forms the forty-sixth attack run wrote
// that the reader missed: a key in quotes, a flow mapping, a
// double-quoted value's escapes, Yarn's plugins as plain paths, Yarn 1's
// key in quotes, and JSONC (a comment, a trailing comma) in tasks.json
// and devcontainer.json; a task that runs only when a person starts it
// names nothing (the run's false positive: src/ made read-only).
func TestConfigProgramsForms(t *testing.T) {
	for _, c := range []struct {
		file, text string
		want, not  []string
	}{
		{".yarnrc.yml", "\"yarnPath\": .yarn/r2/y.cjs\n", []string{".yarn/r2/y.cjs"}, nil},
		{".yarnrc.yml", "{yarnPath: .yarn/r2/y.cjs, enableTelemetry: false}\n", []string{".yarn/r2/y.cjs"}, nil},
		{".yarnrc.yml", "yarnPath: \"\\x2eyarn/r2/y.cjs\"\n", []string{".yarn/r2/y.cjs"}, nil},
		{".yarnrc.yml", "yarnPath: '.yarn/it''s.cjs'\n", []string{".yarn/it's.cjs"}, nil},
		{".yarnrc.yml", "plugins:\n  - .yarn/plugins/p.cjs\n  - path: .yarn/plugins/q.cjs\n    spec: x\nnodeLinker: pnp\npnpMode: loose\n", []string{".yarn/plugins/p.cjs", ".yarn/plugins/q.cjs"}, []string{"pnp", "loose"}},
		{".yarnrc", "\"yarn-path\" \".yarn/r2/y.cjs\"\n", []string{".yarn/r2/y.cjs"}, nil},
		{".vscode/tasks.json", `{
  // the team's tasks
  "version": "2.0.0",
  "tasks": [
    {"label": "watch", "command": "./scripts/watch.sh", "runOptions": {"runOn": "folderOpen"},},
    {"label": "serve", "command": "python3 tools/serve.py", "args": ["--port", "8000"], "runOptions": {"runOn": "folderOpen"}},
    {"label": "run", "command": "python3 src/main.py"}, /* by hand */
  ],
}`, []string{"scripts/watch.sh", "tools/serve.py", "tools"}, []string{"src", "src/main.py", "8000"}},
		{".devcontainer/devcontainer.json", "// made by the template\n{\"initializeCommand\": \"./scripts/init.sh\", \"name\": \"a // b\",}\n", []string{"scripts/init.sh"}, nil},
		// The forty-eighth's: a task and a server run in a directory of
		// their own.
		{".vscode/tasks.json", `{"tasks": [{"label": "w", "command": "node watch.js", "options": {"cwd": "${workspaceFolder}/frontend"}, "runOptions": {"runOn": "folderOpen"}}]}`,
			[]string{"frontend/watch.js"}, nil},
		{".mcp.json", `{"mcpServers": {"w": {"command": "python3", "args": ["srv.py"], "cwd": "tools/mcp"}, "s": {"command": "sh", "args": ["-c", "cd srv && python3 server.py"]}}}`,
			[]string{"tools/mcp/srv.py", "srv/server.py"}, nil},
		// The forty-seventh attack run's MCP servers: a runner's script
		// named bare, and a runner's options before the interpreter.
		{".mcp.json", `{"mcpServers": {
  "a": {"command": "uv", "args": ["run", "--with", "httpx", "server.py"]},
  "b": {"command": "deno", "args": ["run", "-A", "main.ts"]},
  "c": {"command": "node", "args": ["-r", "./pre.js", "srv.mjs"]},
  "d": {"command": "timeout", "args": ["600", "python3", "-m", "tools.srv"]},
  "e": {"command": "npx", "args": ["-y", "tsx", "watch", "agent.ts"]},
  "f": {"command": "env", "args": ["DEBUG=1", "bash", "-c", "exec python3 -m svc.main"]},
  "g": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
  "h": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]},
  "i": {"command": "npm", "args": ["run", "lint"]}
}}`, []string{"server.py", "main.ts", "pre.js", "srv.mjs", "tools/srv.py", "tools", "agent.ts", "svc/main.py", "svc"},
			[]string{"httpx", "run", "-A", "600", "watch", "lint", "mcp-server-git", "@modelcontextprotocol/server-filesystem"}},
	} {
		proj := realDir(t, t.TempDir())
		testfs.Write(t, filepath.Join(proj, c.file), []byte(c.text), 0o644)
		got := ConfigPrograms(proj)
		for _, w := range c.want {
			if !slices.Contains(got, filepath.Join(proj, w)) {
				t.Errorf("%s %q: ConfigPrograms = %q, want %s in it", c.file, c.text, got, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(got, filepath.Join(proj, n)) {
				t.Errorf("control: %s %q: ConfigPrograms = %q holds %s", c.file, c.text, got, n)
			}
		}
	}
}

// TestHookPrograms: a script the project's git hooks run is found (the
// forty-sixth attack run's .husky/pre-commit ran ./scripts/check.sh,
// rewritten by a call, on the user's next commit), in the directory
// core.hooksPath names and in .git/hooks; a sample hook runs nothing
// (control). git is the oracle that the commit runs it.
func TestHookPrograms(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	home := realDir(t, t.TempDir())
	proj := filepath.Join(home, "proj")
	mark := filepath.Join(home, "ran")
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = proj, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	run("config", "core.hooksPath", ".husky")
	testfs.Write(t, filepath.Join(proj, ".husky", "pre-commit"), []byte("#!/bin/sh\n./scripts/check.sh\ngit --version >/dev/null\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "scripts", "check.sh"), []byte("#!/bin/sh\necho check >> "+mark+"\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, ".git", "hooks", "post-merge"), []byte("#!/bin/sh\nmake -C tools/sync\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, ".git", "hooks", "pre-push.sample"), []byte("#!/bin/sh\n./scripts/sample.sh\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "README"), []byte("x\n"), 0o644)
	run("add", "README")
	run("commit", "-qm", "x")
	if b, _ := os.ReadFile(mark); string(b) != "check\n" {
		t.Fatalf("the oracle: git commit ran %q, not scripts/check.sh", b)
	}
	got := HookPrograms(proj, HooksPaths(proj, home, nil))
	for _, w := range []string{"scripts/check.sh", "scripts", "tools/sync"} {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("HookPrograms = %q, want %s in it", got, w)
		}
	}
	for _, n := range []string{"scripts/sample.sh", "git", "/dev/null"} {
		if slices.Contains(got, filepath.Join(proj, n)) {
			t.Errorf("control: HookPrograms = %q holds %s", got, n)
		}
	}
	// husky 9's layout (the fifty-first run's): core.hooksPath .husky/_,
	// whose hooks run .husky/h, which runs .husky's hook of that name.
	run("config", "core.hooksPath", ".husky/_")
	testfs.Write(t, filepath.Join(proj, ".husky", "_", "pre-commit"), []byte("#!/usr/bin/env sh\n. \"${0%/*}/h\"\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, ".husky", "_", "h"), []byte("#!/usr/bin/env sh\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, ".husky", "pre-commit"), []byte("./tools/check9.sh\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "tools", "check9.sh"), []byte("#!/bin/sh\necho check9 >> "+mark+"\n"), 0o755)
	_ = os.Remove(mark)
	run("commit", "-q", "--allow-empty", "-m", "y")
	if b, _ := os.ReadFile(mark); string(b) != "check9\n" {
		t.Fatalf("the oracle: git commit with husky 9's layout ran %q, not tools/check9.sh", b)
	}
	if got := HookPrograms(proj, HooksPaths(proj, home, nil)); !slices.Contains(got, filepath.Join(proj, "tools/check9.sh")) {
		t.Errorf("husky 9: HookPrograms = %q, want tools/check9.sh in it", got)
	}
}

// hostileProject is a repository whose own configuration is as large as
// the forty-seventh attack run made it: a CLAUDE.md of 1 MiB of imports,
// a pre-commit hook of 1 MiB of paths, a .yarnrc.yml of 1 MiB of
// plugins, an .envrc of 1 MiB of source_env ${A:-e}N${A:-b}.
func hostileProject(tb testing.TB) string {
	proj := realDir(tb, tb.TempDir())
	fill := func(unit func(i int) string) []byte {
		var b strings.Builder
		for i := 0; b.Len() < 1<<20; i++ {
			b.WriteString(unit(i))
		}
		return []byte(b.String())
	}
	testfs.Write(tb, filepath.Join(proj, "CLAUDE.md"), fill(func(i int) string { return fmt.Sprintf("@a/%d ", i) }), 0o644)
	testfs.Write(tb, filepath.Join(proj, ".git", "hooks", "pre-commit"), fill(func(i int) string { return fmt.Sprintf("b/%d ", i) }), 0o755)
	testfs.Write(tb, filepath.Join(proj, ".yarnrc.yml"), append([]byte("plugins:\n"), fill(func(i int) string { return fmt.Sprintf("- p%d/x.cjs\n", i) })...), 0o644)
	testfs.Write(tb, filepath.Join(proj, ".envrc"), fill(func(i int) string { return fmt.Sprintf("source_env ${A:-e}%d${A:-b}\n", i) }), 0o644)
	return proj
}

// TestProjectLoadsBounded: a repository's configuration of any size gives
// at most maxLoads paths a part and is read to its budget (the
// forty-seventh attack run held every hook call past its deadline with
// such files: 20 s and more); a load past the budget is not found, one
// before it is (control). Its cost is BenchmarkProjectLoadsHostile's.
// TestProjectLoadsEnclosing: a project below the top of the working tree
// that holds it (svc/api of a monorepo) has protected what the top's git
// hook runs, its .envrc loads and its CLAUDE.md imports, and what the
// .envrc and CLAUDE.md of the directories between load and import, that
// lie in the project, also through a link (svc/current -> api), and also
// where the project is a submodule (its .git a file); what lies outside it
// is not its to protect. Without the working tree, the ancestors' .envrc
// and CLAUDE.md still load (direnv and Claude Code do not stop at a
// repository), and no hook runs anything. Control: the top names them as
// it always did, and main.go beside them is named by nothing.
func TestProjectLoadsEnclosing(t *testing.T) {
	top := realDir(t, t.TempDir())
	proj := filepath.Join(top, "svc", "api")
	testfs.Write(t, filepath.Join(top, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n./svc/api/scripts/check.sh\n"), 0o755)
	testfs.Write(t, filepath.Join(top, ".envrc"), []byte("source_env svc/api/env.sh\nsource_env other/x.sh\nsource_env svc/current/linked.sh\n"), 0o644)
	testfs.Write(t, filepath.Join(top, "CLAUDE.md"), []byte("@svc/api/notes.md\n"), 0o644)
	testfs.Write(t, filepath.Join(top, "svc", ".envrc"), []byte("dotenv api/.env.local\n"), 0o644)
	testfs.Write(t, filepath.Join(top, "svc", "CLAUDE.md"), []byte("@api/svc-notes.md\n"), 0o644)
	// A directory between the top and the project, no repository's top:
	// the agent started there runs its MCP server (the sixty-third attack
	// run's workspace).
	testfs.Write(t, filepath.Join(top, "svc", ".mcp.json"), []byte(`{"mcpServers": {"t": {"command": "node", "args": ["api/tools/server.js"]}}}`), 0o644)
	for _, f := range []string{"scripts/check.sh", "env.sh", "notes.md", ".env.local", "svc-notes.md", "linked.sh", "main.go", "tools/server.js"} {
		testfs.Write(t, filepath.Join(proj, f), []byte("x\n"), 0o644)
	}
	if err := os.Symlink("api", filepath.Join(top, "svc", "current")); err != nil {
		t.Fatal(err)
	}
	testfs.Write(t, filepath.Join(top, "other", "x.sh"), []byte("x\n"), 0o644)
	check := func(name string, want, not []string) {
		t.Helper()
		got := ProjectLoads(proj, top, nil)
		for _, w := range want {
			if !slices.Contains(got, filepath.Join(proj, w)) {
				t.Errorf("%s: ProjectLoads(svc/api) = %q: no %s", name, got, w)
			}
		}
		for _, p := range got {
			if !strings.HasPrefix(p, proj+"/") || slices.ContainsFunc(not, func(n string) bool { return p == filepath.Join(proj, n) }) {
				t.Errorf("%s: ProjectLoads(svc/api) names %s", name, p)
			}
		}
	}
	all := []string{"scripts/check.sh", "env.sh", "notes.md", ".env.local", "svc-notes.md", "linked.sh", "tools/server.js"}
	check("in the working tree", all, []string{"main.go"})
	testfs.Write(t, filepath.Join(proj, ".git"), []byte("gitdir: ../../.git/modules/api\n"), 0o644)
	check("a submodule", all, []string{"main.go"})
	if loads := ProjectLoads(top, top, nil); !slices.Contains(loads, filepath.Join(proj, "env.sh")) || !slices.Contains(loads, filepath.Join(top, "other", "x.sh")) {
		t.Errorf("control: the top's ProjectLoads = %q", loads)
	}
	for _, g := range []string{filepath.Join(top, ".git"), filepath.Join(proj, ".git")} {
		if err := os.RemoveAll(g); err != nil {
			t.Fatal(err)
		}
	}
	check("no working tree", []string{"env.sh", "notes.md", ".env.local", "svc-notes.md", "linked.sh", "tools/server.js"}, []string{"main.go", "scripts/check.sh"})
}

// TestHookProgramsOutsideProject: a core.hooksPath directory outside
// the project (the user's global ~/.githooks) holds hooks git runs in
// the project's worktree: what they run there is named (the sixty-third
// attack run's pre-commit ran ./scripts/check.sh, which a launch
// rewrote). Control: another script of the project is not.
func TestHookProgramsOutsideProject(t *testing.T) {
	dir := realDir(t, t.TempDir())
	proj, hooks := filepath.Join(dir, "proj"), filepath.Join(dir, "home", ".githooks")
	testfs.Write(t, filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\n./scripts/check.sh\n"), 0o755)
	// The sixty-fourth attack run's: the script through a variable.
	testfs.Write(t, filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\nCHECK=scripts/push.sh\nsh \"$CHECK\"\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "scripts", "push.sh"), []byte("#!/bin/sh\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "scripts", "check.sh"), []byte("#!/bin/sh\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, "scripts", "other.sh"), []byte("#!/bin/sh\n"), 0o755)
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := HookPrograms(proj, []string{hooks})
	for _, w := range []string{"check.sh", "push.sh"} {
		if !slices.Contains(got, filepath.Join(proj, "scripts", w)) {
			t.Errorf("HookPrograms = %q: no scripts/%s", got, w)
		}
	}
	if slices.Contains(got, filepath.Join(proj, "scripts", "other.sh")) {
		t.Errorf("control: HookPrograms = %q holds scripts/other.sh", got)
	}
}

// TestHookProgramsLinkedWorktree: a linked worktree's .git is a file,
// and git runs the hooks of the common git directory there: what they
// run in the worktree is named (the sixty-second attack run's commit in
// the worktree ran the hk.sh a launch there rewrote). Control: the main
// worktree names its own.
func TestHookProgramsLinkedWorktree(t *testing.T) {
	dir := realDir(t, t.TempDir())
	main, wt := filepath.Join(dir, "main"), filepath.Join(dir, "wt")
	testfs.Write(t, filepath.Join(main, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n./hk.sh\n"), 0o755)
	testfs.Write(t, filepath.Join(main, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644)
	testfs.Write(t, filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o644)
	for _, d := range []string{main, wt} {
		testfs.Write(t, filepath.Join(d, "hk.sh"), []byte("#!/bin/sh\n"), 0o755)
		if got := HookPrograms(d, nil); !slices.Contains(got, filepath.Join(d, "hk.sh")) {
			t.Errorf("HookPrograms(%s) = %q: no hk.sh", filepath.Base(d), got)
		}
	}
}

func TestProjectLoadsBounded(t *testing.T) {
	proj := hostileProject(t)
	parts := map[string][]string{
		"InstructionImports": InstructionImports(proj, ""), "EnvrcLoads": EnvrcLoads(proj),
		"ConfigPrograms": ConfigPrograms(proj), "HookPrograms": HookPrograms(proj, nil),
	}
	for name, got := range parts {
		if len(got) == 0 || len(got) > maxLoads {
			t.Errorf("%s gave %d paths, want 1 to %d", name, len(got), maxLoads)
		}
	}
	if !slices.Contains(parts["HookPrograms"], filepath.Join(proj, "b/0")) {
		t.Error("control: the hook's first path is not found")
	}
	// Past the budget: a hook whose one path lies after 64 KiB of blanks.
	late := realDir(t, t.TempDir())
	testfs.Write(t, filepath.Join(late, ".git", "hooks", "pre-push"), []byte(strings.Repeat(" ", 64<<10)+"./late/x.sh\n"), 0o755)
	if got := HookPrograms(late, nil); len(got) != 0 {
		t.Errorf("HookPrograms read past its budget: %q", got)
	}
}

func BenchmarkProjectLoadsHostile(b *testing.B) {
	proj := hostileProject(b)
	for b.Loop() {
		ProjectLoads(proj, "", nil)
	}
}

// BenchmarkProjectLoads: what the hook pays on every call in an ordinary
// project (32 names at the top, a CLAUDE.md that imports one file, a
// .claude/settings.json with a hook); Imports is the part before
// ConfigPrograms and HookPrograms.
func BenchmarkProjectLoads(b *testing.B) {
	proj := realDir(b, b.TempDir())
	testfs.Write(b, filepath.Join(proj, ".claude/settings.json"), []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "loopguard-hook"}]}]}}`), 0o644)
	testfs.Write(b, filepath.Join(proj, "CLAUDE.md"), []byte("# proj\nsee @docs/a.md\n"), 0o644)
	for i := range 30 {
		testfs.Write(b, filepath.Join(proj, fmt.Sprintf("f%02d.go", i)), nil, 0o644)
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			ProjectLoads(proj, "/nonexistent", nil)
		}
	})
	b.Run("imports", func(b *testing.B) {
		for b.Loop() {
			InstructionImports(proj, "/nonexistent")
			EnvrcLoads(proj)
		}
	})
}

// TestPackageScripts: the package.json entries a git hook or a tool's
// configuration runs by name, by package.json: npm test and its pre and
// post scripts, npm run, yarn and pnpm's script names, lint-staged's
// entry, an install's lifecycle scripts, a cd's package.json; not npm
// ci's name nor npx's package (controls).
func TestPackageScripts(t *testing.T) {
	proj := realDir(t, t.TempDir())
	testfs.Write(t, filepath.Join(proj, ".husky/pre-commit"), []byte("npm test\nnpx lint-staged\ncd web && yarn lint --fix\nnpm ci && npx -y prettier --check .\n"), 0o755)
	// The fiftieth attack run's forms: a runner before npm, lint-staged
	// after options, the package's directory after the script's name.
	testfs.Write(t, filepath.Join(proj, ".husky/pre-push"), []byte("exec npm run build\nenv CI=true npm run e2e\nnpx --no -- lint-staged --quiet\nnpm run types --prefix api\nnpm -w ui test\n"), 0o755)
	testfs.Write(t, filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers": {"a": {"command": "pnpm", "args": ["run", "--silent", "mcp"]}}}`), 0o644)
	// What a kept script runs in turn (the fiftieth run's "test": "npm
	// run lint"), by scripts' exact key.
	testfs.Write(t, filepath.Join(proj, "package.json"), []byte(`{"scripts": {"test": "npm run lint && jest", "lint": "eslint . && yarn types", "types": "tsc", "build": "npm run bundle"}, "Scripts": {"test": "npm run decoy"}}`), 0o644)
	got := PackageScripts(proj, []string{filepath.Join(proj, ".husky")})
	top, web := filepath.Join(proj, "package.json"), filepath.Join(proj, "web/package.json")
	for _, c := range []struct {
		file string
		want []string
		not  []string
	}{
		{top, []string{"scripts.test", "scripts.pretest", "scripts.posttest", "lint-staged", "scripts.mcp", "scripts.prepare", "scripts.postinstall"}, []string{"scripts.ci", "scripts.prettier", "scripts.-y"}},
		{web, []string{"scripts.lint", "scripts.prelint"}, []string{"scripts.--fix"}},
		{top, []string{"scripts.build", "scripts.e2e"}, []string{"scripts.CI=true", "scripts.--no"}},
		{top, []string{"scripts.lint", "scripts.types", "scripts.bundle"}, []string{"scripts.decoy", "scripts.jest"}},
		{filepath.Join(proj, "api/package.json"), []string{"scripts.types"}, nil},
		{filepath.Join(proj, "ui/package.json"), []string{"scripts.test"}, nil},
	} {
		for _, k := range c.want {
			if !slices.Contains(got[c.file], k) {
				t.Errorf("PackageScripts = %q, want %s of %s", got, k, c.file)
			}
		}
		for _, k := range c.not {
			if slices.Contains(got[c.file], k) {
				t.Errorf("control: PackageScripts = %q holds %s of %s", got, k, c.file)
			}
		}
	}
}

// TestPackageScriptsWorkspaces: the fifty-third attack run's forms past
// PackageScripts: a hook's npm test --workspaces (each workspace's
// scripts.test), -ws, pnpm -r (pnpm-workspace.yaml), yarn workspace NAME,
// npm -w by a package's name, npx npm test, npm exec -- npm test, npm it
// (an install, then the tests), npm restart (stop and start), a script
// the hook runs (./scripts/check.sh's npm run lint), and a hook that is
// a link. Controls: a workspace's other scripts, and a package no
// workspace list names.
func TestPackageScriptsWorkspaces(t *testing.T) {
	proj := realDir(t, t.TempDir())
	w := func(rel, s string) { testfs.Write(t, filepath.Join(proj, rel), []byte(s), 0o755) }
	w("package.json", `{"name": "root", "workspaces": ["packages/*", "web"], "scripts": {"test": "x"}}`)
	w("packages/a/package.json", `{"name": "@x/a"}`)
	w("packages/b/package.json", `{"name": "@x/b"}`)
	w("web/package.json", `{"name": "web"}`)
	w("other/package.json", `{"name": "other"}`)
	w("svc/package.json", `{"name": "svc", "workspaces": {"packages": ["api"]}}`)
	w("svc/api/package.json", `{"name": "api"}`)
	w("pn/pnpm-workspace.yaml", "packages:\n  - 'libs/*'\n")
	w("pn/libs/c/package.json", `{"name": "c"}`)
	w("scripts/check.sh", "#!/usr/bin/env bash\nset -e\nnpm run lint\n./scripts/inner.sh\n")
	w("scripts/inner.sh", "#!/bin/sh\nnpm run inner\n")
	w("scripts/hook.sh", "#!/bin/sh\nnpm run fmt\n")
	w(".git/hooks/pre-commit", "#!/bin/sh\nnpm test --workspaces\n./scripts/check.sh\nnpm -ws run build\n(cd svc && npm run e2e -ws)\nyarn workspace web deploy\nnpm -w @x/b run gen\n")
	w(".git/hooks/pre-push", "#!/bin/sh\nnpx npm run push\nnpm exec -- npm run docs\nnpm it\nnpm restart\ncd pn && pnpm -r test\n")
	// The fifty-fourth run's: an option's value before npm's command, a
	// shell function, task runners, -w naming a directory of workspaces.
	w(".git/hooks/post-merge", "#!/bin/sh\nnpm --loglevel error run lv\nrun() { \"$@\"; }; run npm run fnx\nnode --run nodex\nnpm-run-all a1 a2\nconcurrently npm:c1 \"npm run c2\"\nturbo run tb\nnpm run wp -w packages\n")
	if err := os.Symlink("../../scripts/hook.sh", filepath.Join(proj, ".git/hooks/commit-msg")); err != nil {
		t.Fatal(err)
	}
	got, ws := PackageWorkspaceScripts(proj, nil)
	pkg := func(rel string) string { return filepath.Join(proj, rel, "package.json") }
	// A workspace made later is judged by the same entries.
	if k := ws[pkg("")]; !slices.Contains(k, "scripts.test") || !slices.Contains(k, "scripts.tb") {
		t.Errorf("PackageWorkspaceScripts: the root's workspaces run %q, want scripts.test and scripts.tb", k)
	}
	if !slices.Contains(ws[filepath.Join(proj, "pn/pnpm-workspace.yaml")], "scripts.test") {
		t.Errorf("PackageWorkspaceScripts: pnpm's workspaces: %q", ws)
	}
	if !InWorkspace(pkg(""), filepath.Join(proj, "packages/evil")) || InWorkspace(pkg(""), filepath.Join(proj, "other")) || InWorkspace(pkg(""), filepath.Join(proj, "packages/a/deep")) {
		t.Errorf("InWorkspace: packages/evil is one (a glob packages/*), other and packages/a/deep are not")
	}
	for _, c := range []struct {
		file string
		want []string
		not  []string
	}{
		{pkg("packages/a"), []string{"scripts.test", "scripts.build"}, []string{"scripts.lint"}},
		{pkg("packages/b"), []string{"scripts.test", "scripts.build", "scripts.gen"}, nil},
		{pkg("web"), []string{"scripts.test", "scripts.build", "scripts.deploy"}, nil},
		{pkg("svc/api"), []string{"scripts.e2e"}, nil},
		{pkg("pn/libs/c"), []string{"scripts.test"}, nil},
		{pkg(""), []string{"scripts.test", "scripts.lint", "scripts.push", "scripts.docs", "scripts.prepare", "scripts.restart", "scripts.stop", "scripts.start", "scripts.fmt",
			"scripts.inner", "scripts.lv", "scripts.fnx", "scripts.nodex", "scripts.a1", "scripts.a2", "scripts.c1", "scripts.c2", "workspaces"}, []string{"scripts.error", "scripts.--loglevel"}},
		{pkg("packages/a"), []string{"scripts.tb", "scripts.wp"}, nil},
		{pkg("other"), nil, []string{"scripts.test", "scripts.build"}},
	} {
		for _, k := range c.want {
			if !slices.Contains(got[c.file], k) {
				t.Errorf("PackageScripts: %s of %s missing (it has %q)", k, c.file, got[c.file])
			}
		}
		for _, k := range c.not {
			if slices.Contains(got[c.file], k) {
				t.Errorf("control: PackageScripts holds %s of %s", k, c.file)
			}
		}
	}
}
