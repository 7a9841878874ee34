package agents_test

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// recorder is an adapter that remembers the object it was given.
type recorder struct{ got map[string]any }

func (*recorder) Name() string { return "recorder" }
func (r *recorder) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	r.got = m
	return nil, event, &hooks.MalformedError{Msg: "recorder decides nothing"}
}
func (*recorder) Encode(string, hooks.Decision, io.Writer, io.Writer) int { return 2 }

// TestRunDecodesOnce: Run decodes the payload once and hands the same object
// to the agent's detection and to the adapter; a payload that is not one
// strict JSON object reaches neither.
func TestRunDecodesOnce(t *testing.T) {
	run := func(payload string) (detected, decoded map[string]any) {
		ad := &recorder{}
		opts := agents.Options{
			Detect: func(m map[string]any) (agents.Adapter, error) {
				detected = m
				return ad, nil
			},
			NewEngine: func() (*hooks.Engine, error) { return nil, io.EOF },
		}
		var out, errOut bytes.Buffer
		if code := agents.Run(context.Background(), opts, strings.NewReader(payload), &out, &errOut); code != 2 {
			t.Fatalf("%s: exit %d, want the deny", payload, code)
		}
		return detected, ad.got
	}
	detected, decoded := run(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`)
	if detected == nil || decoded == nil {
		t.Fatal("detection or the adapter was not given the payload")
	}
	if reflect.ValueOf(detected).Pointer() != reflect.ValueOf(decoded).Pointer() {
		t.Error("detection and the adapter were given two decodes of one payload")
	}
	if decoded["tool_input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("decoded %v", decoded)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `[1]`, `{"a":1`} {
		if detected, decoded := run(bad); detected != nil || decoded != nil {
			t.Errorf("%s reached detection or the adapter", bad)
		}
	}
}
