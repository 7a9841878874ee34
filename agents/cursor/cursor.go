// Package cursor is Cursor's adapter (the IDE, cursor-agent and cloud
// agents read the same hooks.json).
//
// Cursor's preToolUse payload carries conversation_id (the session),
// generation_id, tool_use_id, cwd, tool_name (Shell, Write, Delete, Read,
// MCP:<tool>, ...) and tool_input; beforeShellExecution carries the command
// and its cwd. Its answer is {"permission", "user_message",
// "agent_message"}. Cursor fails open on a hook failure unless the hook is
// registered with "failClosed": true, which `loopguard init --agent cursor`
// writes; a deny here is also exit 2, which Cursor takes as a deny.
package cursor

import (
	"io"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
)

// Name is the agent's name in `loopguard hook cursor`.
const Name = "cursor"

// Events as Cursor spells them.
const (
	PreToolUse           = "preToolUse"
	PostToolUse          = "postToolUse"
	BeforeShellExecution = "beforeShellExecution"
	BeforeMCPExecution   = "beforeMCPExecution"
)

// Adapter is Cursor's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	ev, err := agents.String(m, "hook_event_name", true)
	if err != nil {
		return nil, event, err
	}
	// Hooks Cursor runs from Claude settings get Claude's event names.
	switch ev {
	case hooks.PreToolUse:
		ev = PreToolUse
	case hooks.PostToolUse:
		ev = PostToolUse
	}
	if event != "" && ev != event && !(event == hooks.PreToolUse && ev == PreToolUse) && !(event == hooks.PostToolUse && ev == PostToolUse) {
		return nil, event, agents.Errorf("registered for %s but the payload says %s", event, ev)
	}
	c := &hooks.Call{}
	var sess string
	if err := agents.Strings(m,
		agents.Field{Key: "conversation_id", Dst: &sess, Required: true},
		agents.Field{Key: "cwd", Dst: &c.Cwd, Required: false},
	); err != nil {
		return nil, ev, err
	}
	c.SessionID = agents.Session(Name, sess)
	if c.Cwd == "" {
		if roots, ok := m["workspace_roots"].([]any); ok && len(roots) > 0 {
			c.Cwd, _ = roots[0].(string)
		}
	}
	switch ev {
	case PreToolUse, PostToolUse:
		c.Event = hooks.PreToolUse
		if ev == PostToolUse {
			c.Event = hooks.PostToolUse
		}
		if err := agents.Strings(m,
			agents.Field{Key: "tool_name", Dst: &c.ToolName, Required: true},
			agents.Field{Key: "tool_use_id", Dst: &c.ToolUseID, Required: false},
		); err != nil {
			return nil, ev, err
		}
		// Cursor runs the hooks of Claude Code's settings too: both
		// registrations answer one call once.
		if c.ToolUseID != "" {
			c.CallKey = "id:" + c.ToolUseID
		}
		if c.ToolInput, err = agents.InputObject(m["tool_input"], "tool_input", true); err != nil {
			return nil, ev, err
		}
		if err := mapTool(c); err != nil {
			return nil, ev, err
		}
	case BeforeShellExecution:
		c.Event = hooks.PreToolUse
		cmd, err := agents.String(m, "command", true)
		if err != nil {
			return nil, ev, err
		}
		c.ToolName, c.ToolInput = "Bash", map[string]any{"command": cmd}
	case BeforeMCPExecution:
		c.Event = hooks.PreToolUse
		tool, err := agents.String(m, "tool_name", true)
		if err != nil {
			return nil, ev, err
		}
		in, err := agents.InputObject(m["tool_input"], "tool_input", true)
		if err != nil {
			return nil, ev, err
		}
		// The server is part of what runs: bind it.
		server := map[string]any{}
		for _, k := range []string{"url", "command"} {
			if v, ok := m[k]; ok {
				server[k] = v
			}
		}
		c.ToolName = "MCP:" + tool
		c.ToolInput = map[string]any{"arguments": in, "server": server}
	default:
		return nil, ev, agents.Errorf("unknown Cursor event %q", ev)
	}
	c, err = agents.Finish(c)
	return c, ev, err
}

// mapTool maps Cursor's tool names onto the engine's tool classes. Names it
// does not know (Task, Grep, MCP:<tool>: the server is not named) stay as
// they are: an exact approval covers them.
func mapTool(c *hooks.Call) error {
	path := func(tool string) error {
		// Which of these Cursor's own tools read is not known here: an
		// input naming two files in them is refused (agents.SamePath).
		if err := agents.SamePath(c.ToolName, c.ToolInput, c.Cwd, pathFields...); err != nil {
			return err
		}
		for _, k := range pathFields {
			if in, ok := agents.WithPath(c.ToolInput, k, "file_path", c.Cwd); ok {
				c.ToolName, c.ToolInput = tool, in
				return nil
			}
		}
		return agents.Errorf("%s has no file path", c.ToolName)
	}
	switch c.ToolName {
	case "Shell":
		return agents.Shell(c, "working_directory")
	case "Write", "Edit":
		return path(c.ToolName)
	case "Delete":
		// A delete changes a file: bind its state and check it as an edit.
		return path("Edit")
	case "Read":
		return path("Read")
	}
	// Anything else stays as it is; through a Claude registration Cursor
	// may send Claude's own names (Bash, mcp__<server>__<tool>).
	return nil
}

// pathFields are the fields a file tool's input names its file in, through
// Cursor's own hooks or a Claude registration, in the order they are read.
var pathFields = []string{"file_path", "path", "target_file"}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, stderr io.Writer) int {
	var out any
	code := agents.ExitOK
	switch event {
	case PostToolUse:
		if d.Behavior != hooks.Alarm {
			_, _ = io.WriteString(stdout, "{}\n")
			return agents.ExitOK
		}
		out = struct {
			AdditionalContext string `json:"additional_context"`
		}{present.Clip(d.SystemMessage)}
	default:
		switch d.Behavior {
		case hooks.Abstain:
			_, _ = io.WriteString(stdout, "{}\n")
			return agents.ExitOK
		case hooks.Allow:
			out = answer{Permission: "allow"}
		case hooks.Ask:
			if event == BeforeShellExecution || event == BeforeMCPExecution {
				// The human sees the whole rendering, the agent the reason.
				out = answer{Permission: "ask", UserMessage: present.Clip(d.Message), AgentMessage: agents.Reason(d)}
				break
			}
			// preToolUse does not enforce ask: deny instead.
			fallthrough
		default:
			msg := agents.Reason(d)
			out = answer{Permission: "deny", UserMessage: msg, AgentMessage: msg}
			code = agents.ExitDeny
		}
	}
	return output.Write(out, code == agents.ExitDeny, agents.Reason(d), stdout, stderr)
}

var output = agents.Output{ExitDeny: true,
	Deny: `{"permission":"deny","user_message":"loopguard: internal_error","agent_message":"loopguard: internal_error"}`}

type answer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}
