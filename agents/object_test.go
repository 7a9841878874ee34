package agents

import (
	"bytes"
	"testing"
)

// Object remembers nothing: each payload is decoded on its own, and a
// malformed one after a good one is still malformed.
func TestObjectStrict(t *testing.T) {
	a := []byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`)
	if m, err := Object(a); err != nil || m["tool_input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("%s: %v %v", a, m, err)
	}
	for _, bad := range [][]byte{a[:len(a)-1], []byte(`{"a":1,"a":2}`), []byte(`[1]`)} {
		if _, err := Object(bad); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	b := bytes.Replace(a, []byte(`"ls"`), []byte(`"rm"`), 1)
	if m, err := Object(b); err != nil || m["tool_input"].(map[string]any)["command"] != "rm" {
		t.Fatalf("%s: %v %v", b, m, err)
	}
}
