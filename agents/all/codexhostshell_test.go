package all_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// TestCodexShellShadowedOnPath: Codex runs exec_command through the shell
// the model names ("shell":"zsh"), which it finds by name on its own PATH,
// and the payload does not carry. The ninety-sixth attack run: under `npx
// codex` the project's node_modules/.bin is first on that PATH; a jailed
// call wrote node_modules/.bin/zsh, and the next call ran it, unjailed.
// While a shell name Codex may look up resolves into the project (or
// through a relative PATH entry) every Bash call is denied path_shadowed,
// whatever covers it; the control: the same call, with no such file, runs
// as before, and another host (which runs its own shell) is not refused.
func TestCodexShellShadowedOnPath(t *testing.T) {
	h := newHarness(t)
	h.named = true
	h.grantAny("Bash(echo *)")
	bin := filepath.Join(h.Project, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	h.path = bin + string(os.PathListSeparator) + h.Bin
	call := func(agent, event, file string) answer {
		return h.run(agent, event, edit(t, h.payload(file), func(m map[string]any) {
			if in, ok := m["tool_input"].(map[string]any); ok {
				in["command"] = "echo hello"
			}
		}))
	}
	if got := call("codex", "PreToolUse", "codex-pre-bash.json"); !strings.Contains(got.stdout, `"allow"`) {
		t.Fatalf("control, no shell on the project's PATH entry: %+v, want the scoped allow", got)
	}
	for _, name := range []string{"zsh", "pwsh", "cmd", "sh"} {
		zsh := filepath.Join(bin, name)
		if err := os.WriteFile(zsh, []byte("#!/bin/sh\nid > pwned\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got := call("codex", "PreToolUse", "codex-pre-bash.json")
		if !strings.Contains(got.stdout, `"deny"`) || !strings.Contains(got.stdout, hooks.ReasonShadowed) ||
			!strings.Contains(got.stdout, zsh) || !strings.Contains(got.stdout, "remove the file") {
			t.Errorf("%s on the PATH, inside the project: %+v, want path_shadowed naming it", name, got)
		}
		if got := call("codex", "PermissionRequest", "codex-permission-bash.json"); !strings.Contains(got.stdout, hooks.ReasonShadowed) {
			t.Errorf("%s on the PATH, PermissionRequest: %+v, want path_shadowed", name, got)
		}
		if got := call("copilot", "preToolUse", "copilot-pre-bash.json"); strings.Contains(got.stdout+got.stderr, hooks.ReasonShadowed) {
			t.Errorf("%s on the PATH, Copilot (runs its own shell): %+v, want no path_shadowed", name, got)
		}
		if err := os.Remove(zsh); err != nil {
			t.Fatal(err)
		}
	}
	// A relative PATH entry that finds one is refused too.
	if err := os.WriteFile(filepath.Join(bin, "zsh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.path = filepath.Join("node_modules", ".bin") + string(os.PathListSeparator) + h.Bin
	if got := call("codex", "PreToolUse", "codex-pre-bash.json"); !strings.Contains(got.stdout, hooks.ReasonShadowed) {
		t.Errorf("zsh through a relative PATH entry: %+v, want path_shadowed", got)
	}
	// Control: the file gone, the call runs as before.
	h.path = bin + string(os.PathListSeparator) + h.Bin
	_ = os.Remove(filepath.Join(bin, "zsh"))
	if got := call("codex", "PreToolUse", "codex-pre-bash.json"); !strings.Contains(got.stdout, `"allow"`) {
		t.Errorf("control, the file removed: %+v, want the scoped allow", got)
	}
}
