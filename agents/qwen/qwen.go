// Package qwen is Qwen Code's adapter.
//
// Qwen Code (a Gemini CLI fork) runs Claude Code-style hooks: PreToolUse,
// PostToolUse, with session_id, cwd, permission_mode, tool_name and
// tool_input in Qwen's own tool names (run_shell_command, write_file,
// edit, ...), a tool_use_id it makes up and the model's tool_call_id
// (checked on 0.24.4). It takes Claude's hookSpecificOutput deny, but fails
// open on everything else: a hook that times out, cannot start or exits
// with anything but 0 or 2 lets the call through, so the registration
// echoes a deny when loopguard cannot run, and every answer here is JSON
// with exit 0. It does not run the updatedInput of an allow (0.24.4
// ignores it): a scope covers only a command whose text is already plain.
package qwen

import (
	"io"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shelltool"
)

// Name is the agent's name in `loopguard hook qwen`.
const Name = "qwen"

// Events as Qwen Code spells them.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// Adapter is Qwen Code's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	c := &hooks.Call{}
	keys := agents.ClaudeKeys(Name)
	if err := keys.Read(c, m, agents.Field{Key: "hook_event_name", Dst: &c.Event, Required: true},
		agents.Field{Key: "agent_id", Dst: &c.AgentID}, agents.Field{Key: "tool_use_id", Dst: &c.ToolUseID},
		agents.Field{Key: "permission_mode", Dst: &c.PermissionMode}); err != nil {
		return nil, event, err
	}
	if err := agents.SameEvent(event, c.Event); err != nil {
		return nil, event, err
	}
	switch c.Event {
	case PreToolUse, PostToolUse:
	default:
		return nil, c.Event, agents.Errorf("unknown Qwen Code event %q", c.Event)
	}
	ev := c.Event
	c, err := keys.Mapped(c, m, mapTool)
	return c, ev, err
}

// mapTool maps Qwen Code's tool names onto the engine's tool classes.
// Names it does not know stay as they are (an exact approval covers them);
// its MCP tools are already named mcp__server__tool.
func mapTool(c *hooks.Call) error {
	switch c.ToolName {
	case "run_shell_command":
		return agents.Shell(c, "directory")
	case shelltool.Name:
		// loopguard's own shell tool (package shelltool): a command in
		// the host's cwd.
		return agents.Shell(c, "")
	case "write_file":
		return agents.FileTool(c, "file_path", "file_path", "Write")
	case "edit":
		return agents.FileTool(c, "file_path", "file_path", "Edit")
	case "notebook_edit":
		return agents.FileTool(c, "notebook_path", "notebook_path", "NotebookEdit")
	case "web_fetch":
		c.ToolName = "WebFetch"
	case "agent":
		// A subagent of Qwen Code's own runs its calls through these
		// hooks, one by one; a subagent with another executor (the
		// built-in "codex" and "claude-code" run those CLIs, which run
		// their calls under their own hooks, if any) is an exact approval.
		if t, _ := c.ToolInput["subagent_type"].(string); inProcess[t] {
			c.ToolName = "Task"
		}
	}
	return nil
}

// inProcess are Qwen Code's built-in subagents that run in its own process
// (checked on 0.24.4), under its hooks.
var inProcess = map[string]bool{"general-purpose": true, "Explore": true, "statusline-setup": true, "review-agent": true}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, _ io.Writer) int {
	var out any
	switch event {
	case PostToolUse:
		if d.Behavior != hooks.Alarm {
			return agents.ExitOK
		}
		out = struct {
			SystemMessage string `json:"systemMessage"`
		}{present.Clip(d.SystemMessage)}
	default:
		switch d.Behavior {
		case hooks.Abstain:
			return agents.ExitOK
		case hooks.Allow:
			out = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PreToolUse, PermissionDecision: "allow"})
		case hooks.Ask:
			out = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PreToolUse, PermissionDecision: "ask", PermissionDecisionReason: agents.Reason(d)})
		default:
			out = agents.PreToolUseDeny(agents.Reason(d))
		}
	}
	return agents.Output{Deny: agents.HookSpecificDeny}.Write(out, false, "", stdout, nil)
}
