// Package gemini is Google Gemini CLI's adapter.
//
// Gemini runs BeforeTool and AfterTool hooks with session_id, cwd,
// tool_name and tool_input, but no call id and no agent id. It fails open
// on a timeout, a spawn error, exit 1 and an exit 2 with no text, and takes
// non-JSON stderr on exit 0 as an allow with a message: so every answer
// here is JSON on stdout with exit 0, and nothing is ever written to stderr.
package gemini

import (
	"io"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/shelltool"
)

// Name is the agent's name in `loopguard hook gemini`.
const Name = "gemini"

// Events as Gemini spells them.
const (
	BeforeTool = "BeforeTool"
	AfterTool  = "AfterTool"
)

// Adapter is Gemini CLI's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	// Gemini merges a BeforeTool allow's hookSpecificOutput.tool_input over
	// the model's arguments before the tool runs (checked on 0.61.0).
	c, ev, err := agents.BeforeAfter(m, "hook_event_name", event, BeforeTool, AfterTool, "Gemini")
	if err != nil {
		return nil, ev, err
	}
	c, err = agents.ClaudeKeys(Name).Call(c, m, func(c *hooks.Call) error { return mapTool(c, m["mcp_context"]) })
	return c, ev, err
}

// mapTool maps Gemini's tool names onto the engine's tool classes (the
// names its hooks send, 0.61.0). Names it does not know stay as they are:
// the engine then needs an exact approval, as for the tools that write
// (save_memory, the tracker's), change the session's permissions
// (enter_plan_mode, exit_plan_mode), load instructions (activate_skill) or
// hand work to an agent that may run elsewhere (invoke_agent).
func mapTool(c *hooks.Call, mcp any) error {
	in := c.ToolInput
	switch c.ToolName {
	case "read_file":
		return agents.ReadOnly(c, "Read", map[string]any{"file_path": in["file_path"]})
	case "list_directory":
		return agents.ReadOnly(c, "LS", map[string]any{"path": in["dir_path"]})
	case "glob":
		return agents.ReadOnly(c, "Glob", map[string]any{"path": in["dir_path"], "pattern": in["pattern"]})
	case "grep_search":
		return agents.ReadOnly(c, "Grep", map[string]any{"path": in["dir_path"], "glob": in["include_pattern"]})
	case "ask_user":
		return agents.ReadOnly(c, "AskUserQuestion", nil)
	case "update_topic", "write_todos":
		// The session's topic and task list, kept in memory.
		return agents.ReadOnly(c, "TodoWrite", nil)
	case "list_background_processes", "read_background_output":
		// The output of the session's own background shells.
		return agents.ReadOnly(c, "TaskOutput", nil)
	case "google_web_search":
		// As Claude Code's WebSearch: the query leaves the machine, so it
		// is held (a bare WebSearch grant covers it).
		c.ToolName = "WebSearch"
	case "run_shell_command":
		// Judged as the text Gemini runs of it (shell.go).
		cmd, ok := in["command"].(string)
		if !ok {
			return agents.Errorf("run_shell_command tool_input.command is not a string")
		}
		text, err := Runs(cmd)
		if err != nil {
			return err
		}
		c.ToolInput = withCommand(in, text)
		return agents.Shell(c, "dir_path")
	case shelltool.HostName:
		// loopguard's own shell tool (package shelltool): a command in
		// the host's cwd.
		return agents.Shell(c, "")
	case "write_file":
		return agents.FileTool(c, "file_path", "file_path", "Write")
	case "replace":
		return agents.FileTool(c, "file_path", "file_path", "Edit")
	default:
		if strings.HasPrefix(c.ToolName, "mcp_") {
			// mcp_<server>_<tool>: the split is known only from
			// mcp_context, and only used when the name agrees with it.
			if ctx, ok := mcp.(map[string]any); ok {
				srv, _ := ctx["server_name"].(string)
				tool, _ := ctx["tool_name"].(string)
				if srv != "" && tool != "" && !strings.Contains(srv, "__") && c.ToolName == "mcp_"+srv+"_"+tool {
					c.ToolName = "mcp__" + srv + "__" + tool
				}
			}
		}
	}
	return nil
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, _ io.Writer) int {
	var out any
	switch event {
	case AfterTool:
		if d.Behavior != hooks.Alarm {
			return agents.ExitOK
		}
		msg := present.Clip(d.SystemMessage)
		out = answer{Decision: "deny", Reason: msg, SystemMessage: msg}
	default:
		switch d.Behavior {
		case hooks.Abstain:
			return agents.ExitOK
		case hooks.Allow:
			a := answer{Decision: "allow"}
			if d.UpdatedInput != nil {
				a.HookSpecificOutput = &specific{HookEventName: BeforeTool, ToolInput: d.UpdatedInput}
			}
			out = a
		case hooks.Ask:
			out = answer{Decision: "ask", Reason: agents.Reason(d)}
		default:
			out = answer{Decision: "deny", Reason: agents.Reason(d)}
		}
	}
	return agents.Output{Deny: `{"decision":"deny","reason":"loopguard: internal_error"}`}.Write(out, false, "", stdout, nil)
}

// withCommand is a copy of in with command as its command.
func withCommand(in map[string]any, command string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	out["command"] = command
	return out
}

type answer struct {
	Decision           string    `json:"decision"`
	Reason             string    `json:"reason,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
}

// specific carries the input Gemini runs in place of the model's: it is
// merged over the model's arguments, so it holds every one of them.
type specific struct {
	HookEventName string         `json:"hookEventName"`
	ToolInput     map[string]any `json:"tool_input"`
}
