// Package claude is Claude Code's hook contract: its payload (the fields of
// a PreToolUse, PermissionRequest, PostToolUse or PostToolUseFailure call) decoded strictly
// into the engine's Call, and the engine's Decision written as Claude
// Code's hook output with its exit code. agents.Run holds it to the
// deadline like every other agent's.
package claude

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/token"
)

// Name is the agent's name in `loopguard hook claude`.
const Name = "claude"

// Host is what Claude Code does with loopguard's answers.
var Host = agents.Host{Client: "Claude Code 2.1.332",
	Rewrite: "a PreToolUse allow's updatedInput replaces the command Claude Code runs",
	Timeout: "Claude Code blocks the call when a hook registered with \"onFailure\": \"block\" times out, crashes or cannot start (2.1.295 and later)"}

// Adapter is Claude Code's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter. A payload naming another event than the
// registered one is malformed.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	c, err := Call(m)
	if err != nil {
		return nil, event, err
	}
	if err := agents.SameEvent(event, c.Event); err != nil {
		return nil, event, err
	}
	return c, c.Event, nil
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, stderr io.Writer) int {
	return Write(event, d, stdout, stderr)
}

// Decode reads a Claude Code hook payload strictly (agents.Object, then
// Call).
func Decode(payload []byte) (*hooks.Call, error) {
	m, err := agents.Object(payload)
	if err != nil {
		return nil, err
	}
	return Call(m)
}

// Call reads the call from a decoded Claude Code payload, strictly. It does
// not change m.
func Call(m map[string]any) (*hooks.Call, error) {
	c := &hooks.Call{}
	if err := agents.StrictStrings(m, agents.ClaudeFields(c, &c.SessionID)...); err != nil {
		return nil, err
	}
	if present := m["agent_id"] != nil; present && c.AgentID == "" {
		return nil, agents.Errorf("empty agent_id")
	}
	if c.AgentID == token.MainAgent || c.AgentID == token.Any || strings.HasPrefix(c.AgentID, "type:") || c.SessionID == token.Any {
		return nil, agents.Errorf("reserved agent_id or session_id")
	}
	if !filepath.IsAbs(c.Cwd) {
		return nil, agents.Errorf("cwd is not an absolute path")
	}
	in, ok := m["tool_input"].(map[string]any)
	if !ok {
		return nil, agents.Errorf("tool_input missing or not an object")
	}
	c.ToolInput = in
	// Claude Code runs the updatedInput of a PreToolUse or
	// PermissionRequest allow in place of the model's input.
	c.Rewrite = c.Event == hooks.PreToolUse || c.Event == hooks.PermissionRequest
	c.Escape = hooks.EscapeClaude
	c.Output = output(m)
	return c, nil
}

// output is what a call's result said, after it ran: a Bash result's
// stdout and stderr (PostToolUse's tool_response), or the failure's text
// (PostToolUseFailure's error), each string as sent; anything else (another
// tool's result, a field of another type) is left out.
func output(m map[string]any) string {
	var parts []string
	if r, ok := m["tool_response"].(map[string]any); ok {
		for _, k := range []string{"stdout", "stderr", "output"} {
			if s, ok := r[k].(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
	}
	if s, ok := m["error"].(string); ok && s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// Write writes d as Claude Code's answer to event and returns the exit
// code: a PreToolUse deny is exit 2 with the reason on stderr as well, an
// ask or an abstention on PermissionRequest is no output at all (Claude
// Code's own dialog shows), and an event the payload did not name ("": it
// could not be read) is a PreToolUse deny.
func Write(event string, d hooks.Decision, stdout, stderr io.Writer) int {
	msg := present.Clip(d.Message)
	var out map[string]any
	code := agents.ExitOK
	switch event {
	case hooks.PermissionRequest:
		switch d.Behavior {
		case hooks.Allow:
			dec := map[string]any{"behavior": "allow"}
			if d.UpdatedInput != nil {
				dec["updatedInput"] = d.UpdatedInput
			}
			out = hso(event, map[string]any{"decision": dec})
		case hooks.Deny:
			out = hso(event, map[string]any{"decision": map[string]any{"behavior": "deny", "message": msg}})
		default:
			// Ask and abstain: no decision, so Claude Code shows its dialog.
			return agents.ExitOK
		}
	case hooks.PostToolUse, hooks.PostToolUseFailure:
		// An alarm, or what the sweep of a killed call held back, for
		// the user; and for the model, what the jail refused the call
		// (additionalContext, beside the result).
		if d.Behavior != hooks.Alarm && d.Context == "" && d.SystemMessage == "" {
			return agents.ExitOK
		}
		out = map[string]any{}
		if d.Behavior == hooks.Alarm || d.SystemMessage != "" {
			out["systemMessage"] = present.Clip(d.SystemMessage)
		}
		if d.Context != "" {
			out["hookSpecificOutput"] = map[string]any{"hookEventName": event, "additionalContext": present.Clip(d.Context)}
		}
	case hooks.PreToolUse, "":
		if d.Behavior == hooks.Abstain && event == hooks.PreToolUse {
			return agents.ExitOK
		}
		beh := d.Behavior
		if beh != hooks.Allow && beh != hooks.Ask {
			beh = hooks.Deny
		}
		out = hso(hooks.PreToolUse, map[string]any{"permissionDecision": beh, "permissionDecisionReason": msg})
		if beh == hooks.Allow && d.UpdatedInput != nil {
			out["hookSpecificOutput"].(map[string]any)["updatedInput"] = d.UpdatedInput
			if d.Context != "" {
				out["hookSpecificOutput"].(map[string]any)["additionalContext"] = d.Context
			}
		}
		if beh == hooks.Deny {
			code = agents.ExitDeny
		}
	default:
		if d.Behavior != hooks.Deny {
			return agents.ExitOK
		}
		out = hso(hooks.PreToolUse, map[string]any{"permissionDecision": "deny", "permissionDecisionReason": msg})
		code = agents.ExitDeny
	}
	return agents.Output{Deny: agents.HookSpecificDeny, ExitDeny: true}.Write(out, code == agents.ExitDeny, msg, stdout, stderr)
}

func hso(event string, fields map[string]any) map[string]any {
	fields["hookEventName"] = event
	return map[string]any{"hookSpecificOutput": fields}
}
