package claude

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// TestPostOutput: after the call, the result's text reaches the engine
// (Call.Output), and a context from it reaches the model as the event's
// additionalContext; a plain PostToolUse stays silent.
func TestPostOutput(t *testing.T) {
	base := `{"session_id":"s","cwd":"/p","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1",`
	for _, c := range []struct{ payload, want string }{
		{base + `"hook_event_name":"PostToolUse","tool_response":{"stdout":"a\n","stderr":"ls: x: Permission denied","interrupted":false}}`, "a\n\nls: x: Permission denied"},
		{base + `"hook_event_name":"PostToolUseFailure","error":"Exit code 1\ncat: y: Permission denied","is_interrupt":false}`, "Exit code 1\ncat: y: Permission denied"},
		{base + `"hook_event_name":"PostToolUse","tool_response":"text"}`, ""},
		{base + `"hook_event_name":"PreToolUse"}`, ""},
	} {
		got, err := Decode([]byte(c.payload))
		if err != nil {
			t.Fatalf("%s: %v", c.payload, err)
		}
		if got.Output != c.want {
			t.Errorf("%s: output %q, want %q", c.payload, got.Output, c.want)
		}
	}

	type out struct {
		SystemMessage string `json:"systemMessage"`
		HSO           *struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	write := func(event string, d hooks.Decision) (int, out, string) {
		var b bytes.Buffer
		code := Write(event, d, &b, io.Discard)
		var o out
		if b.Len() > 0 {
			if err := json.Unmarshal(b.Bytes(), &o); err != nil {
				t.Fatalf("%s: %v: %s", event, err, b.String())
			}
		}
		return code, o, b.String()
	}
	for _, ev := range []string{hooks.PostToolUse, hooks.PostToolUseFailure} {
		code, o, raw := write(ev, hooks.Decision{Behavior: hooks.Abstain, Reason: hooks.ReasonRan, Context: "loopguard: the jail (read-only) has no network"})
		if code != agents.ExitOK || o.HSO == nil || o.HSO.HookEventName != ev || o.HSO.AdditionalContext != "loopguard: the jail (read-only) has no network" || o.SystemMessage != "" {
			t.Errorf("%s with a context: %d %s", ev, code, raw)
		}
		// Control: no context, no alarm: nothing at all.
		if code, _, raw := write(ev, hooks.Decision{Behavior: hooks.Abstain, Reason: hooks.ReasonRan}); code != agents.ExitOK || raw != "" {
			t.Errorf("%s as approved: %d %q", ev, code, raw)
		}
	}
	// What the sweep of a killed call held back: for the user and the model.
	held := "loopguard: a call in \"/p\" was killed before its sweep: swept now, its sweep says"
	code, o, raw := write(hooks.PostToolUse, hooks.Decision{Behavior: hooks.Abstain, Reason: hooks.ReasonRan, Context: held, SystemMessage: held})
	if code != agents.ExitOK || o.SystemMessage != held || o.HSO == nil || o.HSO.AdditionalContext != held {
		t.Errorf("a recovery's lines: %d %s", code, raw)
	}
	// An alarm keeps its system message, for the user, and no context.
	code, o, raw = write(hooks.PostToolUse, hooks.Decision{Behavior: hooks.Alarm, Reason: hooks.ReasonInputChanged, SystemMessage: "loopguard: ALARM"})
	if code != agents.ExitOK || o.SystemMessage != "loopguard: ALARM" || o.HSO != nil {
		t.Errorf("alarm: %d %s", code, raw)
	}
}
