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
	"strings"
	"unicode"

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

// mapTool maps Qwen Code's tool names onto the engine's tool classes (the
// names its hooks send, 0.24.4: a tool_call of a deferred tool arrives
// as that tool). Names it does not know stay as they are (an exact
// approval covers them), among them the tools that write (todo_write's
// and save_memory's files, the goal, cron jobs, worktrees) or run code
// (exec, lsp's servers, skill); its MCP tools are already named
// mcp__server__tool.
func mapTool(c *hooks.Call) error {
	if tool, ok := readOnly[c.ToolName]; ok {
		return agents.ReadOnly(c, tool, readPaths(c.ToolName, c.ToolInput))
	}
	switch c.ToolName {
	case "run_shell_command":
		// Qwen Code rewrites a git commit's message and a gh pr create's
		// body in it after the hook (coauthorSafe).
		if cmd, ok := c.ToolInput["command"].(string); ok {
			if err := coauthorSafe(cmd); err != nil {
				return err
			}
		}
		return agents.Shell(c, "directory")
	case "monitor":
		// A background shell (offered through tool_search): Qwen Code
		// runs its command with bash -c in its directory, as
		// run_shell_command's.
		if err := monitorRunsAsWritten(c.ToolInput["command"]); err != nil {
			return err
		}
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

// readOnly are Qwen Code's tools that only read, list, search or ask
// (kind read, search or other in 0.24.4, checked to write nothing), by the
// engine's read-only tool each is.
var readOnly = map[string]string{
	"read_file": "Read", "zoom_image": "Read", "display_image": "Read",
	"list_directory": "LS", "glob": "Glob", "grep_search": "Grep",
	"tool_search": "ToolSearch", "list_agents": "ListAgents", "cron_list": "CronList",
	"task_list": "TaskList", "get_goal": "TaskGet", "ask_user_question": "AskUserQuestion",
}

// readPaths are the paths a read-only tool of Qwen Code's reads, by the
// engine's names for them.
func readPaths(tool string, in map[string]any) map[string]any {
	switch tool {
	case "read_file", "zoom_image", "display_image":
		return map[string]any{"file_path": in["file_path"]}
	case "list_directory":
		return map[string]any{"path": in["path"]}
	case "glob":
		return map[string]any{"path": in["path"], "pattern": in["pattern"]}
	case "grep_search":
		return map[string]any{"path": in["path"], "glob": in["glob"]}
	}
	return nil
}

// shells are the programs Qwen Code's monitor takes for a shell wrapping
// the command (chunk-I3K2QRZ5.js isKnownMonitorWrapperToken, 0.24.4).
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "cmd": true, "powershell": true, "pwsh": true}

// monitorRunsAsWritten refuses a monitor command Qwen Code would not run
// as written. It runs the command trimmed and without a final "&", which
// changes nothing of what runs, but takes one that starts with a shell
// (sh -c '...', with variables before it) apart and joins the parts back
// with single spaces (normalizeMonitorCommand): a line break between them
// becomes a space, and what two commands were runs as one. Any word whose
// last path element, quotes taken out, names one of those shells counts
// (a superset of Qwen Code's own reading, which this does not copy), as
// does every blank Qwen Code splits on. A command that is not a string
// is the engine's to refuse.
func monitorRunsAsWritten(v any) error {
	cmd, ok := v.(string)
	if !ok {
		return nil
	}
	for _, w := range strings.FieldsFunc(cmd, jsSpace) {
		w = strings.ToLower(strings.NewReplacer(`"`, "", "'", "", `\`, "/").Replace(w))
		w = strings.TrimSuffix(w[strings.LastIndex(w, "/")+1:], ".exe")
		if shells[w] {
			return agents.Errorf("monitor: Qwen Code rewrites a command that starts with a shell (%s) before it runs it, so what would run is not what loopguard was shown: write the command itself, without the shell (a monitor command naming a shell anywhere is refused)", w)
		}
	}
	return nil
}

// jsSpace is JavaScript's \s, the blanks Qwen Code splits a command on.
func jsSpace(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' }

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
