// Package opencode is OpenCode's adapter.
//
// OpenCode has no external hooks: it loads JavaScript plugins in process,
// and a plugin's tool.execute.before hook may change the call's arguments
// (output.args, which OpenCode then runs) or throw, which blocks the call.
// `loopguard init --agent opencode` writes a plugin of loopguard's own
// (plugin.js) that runs `loopguard hook opencode` for every tool call,
// blocks on anything but an allow (an answer it cannot read, a hook that
// cannot start or takes too long included), and runs the arguments the
// hook gives back (the canonical rewrite). The plugin hands the hook the
// session id, the call id, the tool, its arguments and the directory
// OpenCode runs in; this package decodes that and answers with a decision.
//
// A plugin that fails to load is skipped by OpenCode, and the calls then
// run unguarded: doctor checks the plugin is the one init writes. With
// `init --agent opencode --ticket` they do not run: loopguard-exec is
// OpenCode's shell (package shellwrap) and runs a command only on the
// ticket the hook issued for it (hookmain's opencode.go).
package opencode

import (
	"io"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/patch"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
)

// Name is the agent's name in `loopguard hook opencode`.
const Name = "opencode"

// Events as the plugin names them (OpenCode's hook names).
const (
	Before = "tool.execute.before"
	After  = "tool.execute.after"
)

// Adapter is the contract of loopguard's OpenCode plugin.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	// The plugin runs the arguments an allow gives back.
	c, ev, err := agents.BeforeAfter(m, "event", event, Before, After, "OpenCode")
	if err != nil {
		return nil, ev, err
	}
	c, err = keys.Call(c, m, mapTool, agents.Field{Key: "call_id", Dst: &c.ToolUseID})
	return c, ev, err
}

// keys are where the plugin's payload holds the session, the directory
// OpenCode runs in, the tool and its arguments.
var keys = agents.Keys{Agent: Name, Session: "session_id", Cwd: "directory", Tool: "tool", Input: "args"}

// mapTool maps OpenCode's tools onto the engine's tool classes, with the
// path fields the engine reads. Names it does not know (its MCP tools,
// named <server>_<tool>, included) stay as they are: an exact approval
// covers them.
func mapTool(c *hooks.Call) error {
	// A search tool's path is optional: absolute when given.
	search := func(tool string) {
		c.ToolName = tool
		c.ToolInput, _ = agents.WithPath(c.ToolInput, "path", "path", c.Cwd)
	}
	switch c.ToolName {
	case "bash":
		return agents.Shell(c, "workdir")
	case "write":
		return agents.FileTool(c, "filePath", "file_path", "Write")
	case "edit":
		return agents.FileTool(c, "filePath", "file_path", "Edit")
	case "read":
		return agents.FileTool(c, "filePath", "file_path", "Read")
	case "list":
		search("LS")
	case "glob":
		search("Glob")
	case "grep":
		search("Grep")
		if inc, ok := c.ToolInput["include"].(string); ok {
			c.ToolInput = agents.With(c.ToolInput, "glob", inc)
		}
	case "patch", "apply_patch":
		body, ok := c.ToolInput["patchText"].(string)
		if !ok {
			return agents.Errorf("%s patchText is not a string", c.ToolName)
		}
		return patch.Map(c, body)
	case "webfetch":
		c.ToolName = "WebFetch"
	case "task":
		c.ToolName = "Task"
	case "todowrite":
		c.ToolName = "TodoWrite"
	case "todoread":
		c.ToolName = "TodoRead"
	case "skill":
		c.ToolName = "Skill"
	}
	return nil
}

// answer is what the plugin reads: decision is allow (the call runs, as
// args when they are given), deny (it throws reason) or, after a call,
// alarm (reason is put before the call's output).
type answer struct {
	Decision string         `json:"decision"`
	Reason   string         `json:"reason,omitempty"`
	Args     map[string]any `json:"args,omitempty"`
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, _ io.Writer) int {
	var a answer
	switch event {
	case After:
		a.Decision = "ok"
		if d.Behavior == hooks.Alarm {
			a = answer{Decision: "alarm", Reason: present.Clip(d.SystemMessage)}
		}
	default:
		switch d.Behavior {
		case hooks.Allow:
			a = answer{Decision: "allow", Args: d.UpdatedInput}
		case hooks.Abstain:
			// No decision: OpenCode's own permissions decide.
			a = answer{Decision: "allow"}
		default:
			// Deny, and ask (a plugin cannot ask the user): blocked.
			a = answer{Decision: "deny", Reason: agents.Reason(d)}
		}
	}
	return agents.Output{Deny: `{"decision":"deny","reason":"loopguard: internal_error"}`}.Write(a, false, "", stdout, nil)
}
