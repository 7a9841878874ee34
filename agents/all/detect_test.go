package all

import (
	"testing"

	"github.com/loopguard/loopguard/agents"
)

// TestDetect: each agent's distinctive keys name it; a payload with two
// agents' marks is refused; one with none is Claude Code's. (A payload that
// is not one strict JSON object is refused before detection, by
// agents.Object.)
func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		payload, want string // want "" means refused
	}{
		{`{"session_id":"s","transcript_path":"/t","cwd":"/","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":"t"}`, "claude"},
		{`{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`, "claude"},
		{`{"session_id":"s","turn_id":"t","transcript_path":null,"cwd":"/","hook_event_name":"PreToolUse","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{},"tool_use_id":"c"}`, "codex"},
		{`{"session_id":"s","transcript_path":"/t","cwd":"/","hook_event_name":"BeforeTool","timestamp":"x","tool_name":"run_shell_command","tool_input":{}}`, "gemini"},
		{`{"sessionId":"s","timestamp":1,"cwd":"/","toolName":"bash","toolArgs":"{}"}`, "copilot"},
		{`{"hook_event_name":"PreToolUse","session_id":"s","timestamp":"x","cwd":"/","tool_name":"Bash","tool_input":{}}`, "copilot"},
		{`{"conversation_id":"c","generation_id":"g","hook_event_name":"preToolUse","cursor_version":"1","tool_name":"Shell","tool_input":{},"cwd":"/"}`, "cursor"},
		{`{"conversation_id":"c","hook_event_name":"PreToolUse","tool_name":"Shell","tool_input":{},"cwd":"/","transcript_path":null}`, "cursor"},
		{`{"hookName":"permissionRequest","sessionId":"s","timestamp":1,"cwd":"/","toolName":"bash","toolInput":{"command":"x"},"permissionSuggestions":[]}`, "copilot"},
		{`{"conversation_id":"c","turn_id":"t","hook_event_name":"PreToolUse"}`, ""},
		{`{"sessionId":"s","hook_event_name":"BeforeTool"}`, ""},
		{`{"session_id":"s","session_id":"t"}`, ""},
		{`[]`, ""},
	} {
		m, err := agents.Object([]byte(tc.payload))
		var a agents.Adapter
		if err == nil {
			a, err = Detect(m)
		}
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: detected %s, want refused", tc.payload, a.Name())
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v, want %s", tc.payload, err, tc.want)
		case tc.want != "" && a.Name() != tc.want:
			t.Errorf("%s: detected %s, want %s", tc.payload, a.Name(), tc.want)
		}
	}
}
