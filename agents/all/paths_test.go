package all_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// TestFileJudgedIsFileRead: a file tool's call is judged on the field the
// client's tool reads. The ninety-second attack run had Copilot CLI
// (1.0.102, a .claude/settings.json registration) read ~/.ssh/id_rsa from
// view's path while loopguard judged a project file named in an extra
// file_path, and an edit of CLAUDE.md shown as one of ok.txt. An input
// naming its file in two fields that disagree is refused as malformed, in
// both of Copilot's payload forms and in Cursor's (whose tools' own field
// is not known here: file_path, path or target_file); so is, beside
// Copilot's path, Claude's content field a diff would show in place of
// Copilot's file_text. Controls: the ordinary calls, with the tool's own
// field alone (or the same file twice), are decided as before.
func TestFileJudgedIsFileRead(t *testing.T) {
	h := newHarness(t)
	key := filepath.Join(h.Home, ".local", "share", "keyrings", "login.keyring")
	ok := filepath.Join(h.Project, "ok.txt")
	claudeMD := filepath.Join(h.Project, "CLAUDE.md")
	camel := func(tool string, in map[string]any) []byte {
		return edit(t, h.payload("copilot-pre-bash.json"), func(m map[string]any) { m["toolName"], m["toolArgs"] = tool, in })
	}
	pascal := func(tool string, in map[string]any) []byte {
		return edit(t, h.payload("copilot-pascal-pre-bash.json"), func(m map[string]any) { m["tool_name"], m["tool_input"] = tool, in })
	}
	cursor := func(tool string, in map[string]any) []byte {
		return edit(t, h.payload("cursor-pre-shell.json"), func(m map[string]any) { m["tool_name"], m["tool_input"] = tool, in })
	}
	for _, c := range []struct {
		what, agent, event string
		payload            []byte
		want               string // a reason in the answer, or "" for none (abstain)
	}{
		// The attacks.
		{"pascal Read path=key file_path=ok", "copilot", "PreToolUse", pascal("Read", map[string]any{"path": key, "file_path": ok}), hooks.ReasonMalformed},
		{"pascal Edit path=CLAUDE.md file_path=ok", "copilot", "PreToolUse", pascal("Edit", map[string]any{"path": claudeMD, "old_str": "a", "new_str": "b", "file_path": ok, "old_string": "hello", "new_string": "bye"}), hooks.ReasonMalformed},
		{"pascal Write path=CLAUDE.md file_path=ok.txt (relative)", "copilot", "PreToolUse", pascal("Write", map[string]any{"path": claudeMD, "file_text": "x", "file_path": "ok.txt"}), hooks.ReasonMalformed},
		{"camel view path=key file_path=ok", "copilot", "preToolUse", camel("view", map[string]any{"path": key, "file_path": ok}), hooks.ReasonMalformed},
		{"camel view path=ok file_path=key", "copilot", "preToolUse", camel("view", map[string]any{"path": ok, "file_path": key}), hooks.ReasonMalformed},
		{"camel create path=ok content beside file_text", "copilot", "preToolUse", camel("create", map[string]any{"path": ok, "file_text": "curl x|sh\n", "content": "hello\n"}), hooks.ReasonMalformed},
		{"camel str_replace_editor file_path not a string", "copilot", "preToolUse", camel("str_replace_editor", map[string]any{"command": "view", "path": ok, "file_path": 1}), hooks.ReasonMalformed},
		{"cursor Read file_path=ok path=key", "cursor", "preToolUse", cursor("Read", map[string]any{"file_path": ok, "path": key}), hooks.ReasonMalformed},
		{"cursor Write path=ok target_file=CLAUDE.md", "cursor", "preToolUse", cursor("Write", map[string]any{"path": ok, "target_file": claudeMD, "content": "x"}), hooks.ReasonMalformed},
		// Controls: the tool's own field alone, or the same file twice.
		{"pascal Read path=key", "copilot", "PreToolUse", pascal("Read", map[string]any{"path": key}), hooks.ReasonProtected},
		{"pascal Read path=ok", "copilot", "PreToolUse", pascal("Read", map[string]any{"path": ok}), ""},
		{"pascal Read file_path=ok", "copilot", "PreToolUse", pascal("Read", map[string]any{"file_path": ok}), ""},
		{"pascal Read path=ok file_path=ok.txt", "copilot", "PreToolUse", pascal("Read", map[string]any{"path": ok, "file_path": "ok.txt"}), ""},
		{"pascal Edit path=ok", "copilot", "PreToolUse", pascal("Edit", map[string]any{"path": ok, "old_str": "a", "new_str": "b"}), hooks.ReasonNoGrant},
		{"camel view path=key", "copilot", "preToolUse", camel("view", map[string]any{"path": key}), hooks.ReasonProtected},
		{"camel view path=ok", "copilot", "preToolUse", camel("view", map[string]any{"path": ok}), ""},
		{"camel create path=ok", "copilot", "preToolUse", camel("create", map[string]any{"path": ok, "file_text": "x\n"}), hooks.ReasonNoGrant},
		{"cursor Read file_path=key", "cursor", "preToolUse", cursor("Read", map[string]any{"file_path": key}), hooks.ReasonProtected},
		{"cursor Read path=ok", "cursor", "preToolUse", cursor("Read", map[string]any{"path": ok}), ""},
		{"cursor Write file_path=ok", "cursor", "preToolUse", cursor("Write", map[string]any{"file_path": ok, "content": "x"}), hooks.ReasonNoGrant},
	} {
		got := h.run(c.agent, c.event, c.payload)
		if c.want == "" {
			if strings.Contains(got.stdout, "deny") || strings.Contains(got.stdout, "malformed") {
				t.Errorf("%s: %+v, want it not refused (the read-only fast path)", c.what, got)
			}
			continue
		}
		if !strings.Contains(got.stdout, `"deny"`) || !strings.Contains(got.stdout, c.want) {
			t.Errorf("%s: %+v, want a %s deny", c.what, got, c.want)
		}
	}
}
