package policy

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentPaths: every registration file `loopguard init --agent` writes is
// in the list (so it is protected), and paths are absolute.
func TestAgentPaths(t *testing.T) {
	home, proj := "/home/u", "/work/p"
	got := map[string]bool{}
	for _, p := range AgentPaths(home, proj, "") {
		if !filepath.IsAbs(p.Path) || p.Agent == "" || p.Why == "" {
			t.Errorf("bad entry %+v", p)
		}
		got[p.Path] = true
	}
	for _, want := range []string{
		"/home/u/.codex/hooks.json", "/home/u/.codex/config.toml", "/work/p/.codex/hooks.json",
		"/home/u/.gemini/settings.json", "/work/p/.gemini/settings.json",
		"/home/u/.copilot/hooks", "/work/p/.github/hooks",
		"/home/u/.cursor/hooks.json", "/work/p/.cursor/hooks.json",
		"/home/u/.qwen/settings.json", "/work/p/.qwen/settings.json",
		"/home/u/.config/opencode", "/work/p/.opencode", "/work/p/opencode.json",
	} {
		if !got[want] {
			t.Errorf("%s is not listed", want)
		}
	}
	for _, p := range AgentPaths(home, proj, "/opt/codex") {
		if p.Agent == "codex" && filepath.Dir(p.Path) == "/home/u/.codex" {
			t.Errorf("CODEX_HOME ignored: %s", p.Path)
		}
	}
	// No project: no project paths.
	for _, p := range AgentPaths(home, "", "") {
		if strings.HasPrefix(p.Path, proj) {
			t.Errorf("project path without a project: %s", p.Path)
		}
	}
}

func TestInsideAgent(t *testing.T) {
	for _, tc := range []struct {
		env   map[string]string
		agent string
	}{
		{map[string]string{}, ""},
		{map[string]string{"CLAUDECODE": "1"}, "Claude Code"},
		{map[string]string{"CODEX_THREAD_ID": "019a"}, "Codex"},
		{map[string]string{"GEMINI_CLI": "1"}, "Gemini CLI"},
		{map[string]string{"COPILOT_CLI": "1"}, "Copilot CLI"},
		{map[string]string{"QWEN_CODE": "1"}, "Qwen Code"},
		{map[string]string{"OPENCODE": "1"}, "OpenCode"},
		{map[string]string{"CODEX_THREAD_ID": ""}, ""},
	} {
		if got, _ := InsideAgent(func(k string) string { return tc.env[k] }); got != tc.agent {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.agent)
		}
	}
}

// TestAgentFilesClassified: the protected set judges every agent's files
// from the same table: home and absolute ones where they are, project ones
// at any depth; ordinary neighbours are not protected.
func TestAgentFilesClassified(t *testing.T) {
	pl := Places{Home: "/home/u"}.Prepare()
	for _, p := range []string{
		"/home/u/.codex/hooks.json", "/home/u/.codex/config.toml", "/home/u/.gemini/settings.json",
		"/home/u/.copilot/hooks/x.json", "/home/u/.cursor/hooks.json", "/etc/codex/requirements.toml",
		"/work/p/.codex/hooks.json", "/work/p/sub/.gemini/settings.json", "/work/p/.github/hooks/loopguard.json",
		"/work/p/.github/copilot/settings.local.json", "/work/p/a/b/.cursor/HOOKS.json",
	} {
		if got := pl.Classify(p); got.Tier != GuardCritical {
			t.Errorf("%s: %+v, want guard-critical", p, got)
		}
	}
	pl = Places{Home: "/home/u", CodexHome: "/opt/codex"}.Prepare()
	if got := pl.Classify("/opt/codex/hooks.json"); got.Tier != GuardCritical {
		t.Errorf("$CODEX_HOME/hooks.json: %+v", got)
	}
	// Controls: neighbours are ordinary.
	for _, p := range []string{"/work/p/.github/workflows/ci.yml", "/work/p/src/hooks.json", "/work/p/codex/hooks.json", "/home/u/.gemini/notes.md"} {
		if got := pl.Classify(p); got.Protected() {
			t.Errorf("%s: %+v, want not protected", p, got)
		}
	}
}

// TestNewAgentFilesProtected: Qwen Code's settings and OpenCode's plugins
// and config are what the guard stands on, at any depth of a project, and
// an ordinary file beside them is not (the control).
func TestNewAgentFilesProtected(t *testing.T) {
	pl := Places{Home: "/home/u"}
	for _, p := range []string{
		"/home/u/.qwen/settings.json", "/work/p/.qwen/settings.json", "/work/p/sub/.qwen/settings.json",
		"/home/u/.config/opencode/plugin/loopguard.js", "/home/u/.config/opencode/opencode.json",
		"/work/p/.opencode/plugin/evil.js", "/work/p/opencode.json", "/work/p/sub/OpenCode.JSONC",
	} {
		if got := pl.Classify(p); got.Tier != GuardCritical {
			t.Errorf("%s: %+v, want guard-critical", p, got)
		}
	}
	for _, p := range []string{"/work/p/opencode.md", "/work/p/src/main.go", "/work/p/qwen/settings.json"} {
		if got := pl.Classify(p); got.Protected() {
			t.Errorf("%s: %+v, want unprotected", p, got)
		}
	}
}
