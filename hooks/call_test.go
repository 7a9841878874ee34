package hooks

import (
	"bytes"
	"reflect"
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

// DecodeObject decodes a payload once however many times a hook run asks
// for it, and never answers for other bytes with a remembered object.
func TestDecodeObjectOnce(t *testing.T) {
	a := []byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`)
	m1, err := DecodeObject(a)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := DecodeObject(bytes.Clone(a))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(m1).Pointer() != reflect.ValueOf(m2).Pointer() {
		t.Error("the same payload was decoded twice")
	}
	// Other bytes, even one byte apart, are decoded afresh.
	b := bytes.Replace(a, []byte(`"ls"`), []byte(`"rm"`), 1)
	m3, err := DecodeObject(b)
	if err != nil {
		t.Fatal(err)
	}
	if m3["tool_input"].(map[string]any)["command"] != "rm" {
		t.Fatalf("got %v for %s", m3, b)
	}
	// A malformed payload after a good one is still malformed.
	for _, bad := range [][]byte{a[:len(a)-1], []byte(`{"a":1,"a":2}`), []byte(`[1]`)} {
		if _, err := DecodeObject(bad); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if m, err := DecodeObject(a); err != nil || m["tool_input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("back to the first payload: %v %v", m, err)
	}
}
