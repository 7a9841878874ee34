package hooks

import (
	"bytes"
	"strings"
	"testing"
)

func TestDecodeClaudeRejects(t *testing.T) {
	good := `{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}`
	if _, err := DecodeClaude([]byte(good + `}`)); err != nil {
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
	} {
		if _, err := DecodeClaude([]byte(payload)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// DecodeObject remembers nothing: each payload is decoded on its own, and a
// malformed one after a good one is still malformed.
func TestDecodeObjectStrict(t *testing.T) {
	a := []byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`)
	if m, err := DecodeObject(a); err != nil || m["tool_input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("%s: %v %v", a, m, err)
	}
	for _, bad := range [][]byte{a[:len(a)-1], []byte(`{"a":1,"a":2}`), []byte(`[1]`)} {
		if _, err := DecodeObject(bad); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	b := bytes.Replace(a, []byte(`"ls"`), []byte(`"rm"`), 1)
	if m, err := DecodeObject(b); err != nil || m["tool_input"].(map[string]any)["command"] != "rm" {
		t.Fatalf("%s: %v %v", b, m, err)
	}
}
