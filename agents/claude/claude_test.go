package claude

import (
	"strings"
	"testing"
)

func TestDecodeRejects(t *testing.T) {
	good := `{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}`
	if _, err := Decode([]byte(good + `}`)); err != nil {
		t.Fatalf("control payload: %v", err)
	}
	for name, payload := range map[string]string{
		"agent_id main":        good + `,"agent_id":"main"}`,
		"agent_id wildcard":    good + `,"agent_id":"*"}`,
		"agent_id type form":   good + `,"agent_id":"type:Explore"}`,
		"empty agent_id":       good + `,"agent_id":""}`,
		"session wildcard":     strings.Replace(good, `"session_id":"s"`, `"session_id":"*"`, 1) + `}`,
		"relative cwd":         strings.Replace(good, `"/p"`, `"p"`, 1) + `}`,
		"tool_input not obj":   strings.Replace(good, `{"command":"ls"}`, `"ls"`, 1) + `}`,
		"number session":       strings.Replace(good, `"session_id":"s"`, `"session_id":1`, 1) + `}`,
		"missing tool_name":    strings.Replace(good, `"tool_name":"Bash",`, ``, 1) + `}`,
		"duplicate tool_input": good + `,"tool_input":{"command":"id"}}`,
		"null agent_id":        good + `,"agent_id":null}`,
		"null permission_mode": good + `,"permission_mode":null}`,
	} {
		if _, err := Decode([]byte(payload)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
