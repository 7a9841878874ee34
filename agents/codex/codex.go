// Package codex is OpenAI Codex CLI's adapter.
//
// Codex's payload is Claude Code's shape plus turn_id and model; its
// canonical tool names are Bash ({command}), apply_patch ({command: the
// patch}) and mcp__server__tool. Its output parser is strict and fails
// open: an allow or ask from PreToolUse, an extra field, an empty reason, a
// timeout or a crash all let the call through. So PreToolUse denies
// (exactly the three documented fields, exit 0), allows only with the
// command to run instead (updatedInput: the canonical, confined rewrite of
// a call a scoped grant covers), or says nothing.
package codex

import (
	"io"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/patch"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
)

// Name is the agent's name in `loopguard hook codex`.
const Name = "codex"

// Events as Codex spells them (the engine's own names).
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
)

// ShellNames are the names Codex looks up on its PATH (which NAME) for the
// shell the model names in an exec_command call (codex-rs/core/src/shell.rs:
// detect_shell_type takes the name, or a path's file stem, as zsh, bash, sh,
// pwsh, powershell or cmd; get_shell_path then uses the user's login shell
// when it is of that type, else which(NAME), else a fixed path; PowerShell
// tries pwsh, then powershell). 0.171.0 ignores the path the model gives
// (the ninety-sixth attack run: project/sh ran as /bin/sh) but looks the
// name up: every name is judged, whichever the login shell.
var ShellNames = []string{"bash", "zsh", "sh", "pwsh", "powershell", "cmd"}

// Adapter is Codex CLI's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	c := &hooks.Call{}
	var sess string
	// Claude Code's fields, and turn_id and transcript_path.
	if err := agents.Strings(m, agents.ClaudeFields(c, &sess)...); err != nil {
		return nil, event, err
	}
	if _, err := agents.String(m, "turn_id", false); err != nil {
		return nil, event, err
	}
	transcript, err := agents.String(m, "transcript_path", false)
	if err != nil {
		return nil, event, err
	}
	if err := agents.SameEvent(event, c.Event); err != nil {
		return nil, event, err
	}
	switch c.Event {
	case PreToolUse, PermissionRequest, PostToolUse:
	default:
		return nil, event, agents.Errorf("unknown Codex event %q", c.Event)
	}
	c.SessionID = agents.Session(Name, sess)
	c.ProjectDir = sessionProject(transcript, sess)
	// Codex runs the updatedInput of a PreToolUse allow in place of the
	// model's command (checked on 0.171.0: exec_command's cmd is replaced);
	// a PermissionRequest answer cannot carry one.
	c.Rewrite = c.Event == PreToolUse
	// exec_command runs its cmd with the shell the model names in the
	// call ("shell":"/bin/sh", "login":false: dash), which the hook's
	// tool_input ({command}) does not carry, while loopguard analyses
	// bash: every allow runs the command pinned to bash (the ninety-second
	// attack run: `: $'\'⏎id⏎#'` is one : to bash, id to dash).
	c.PinBash = true
	// And Codex finds that shell by its name on its own PATH (ShellNames):
	// a program of that name the trusted-directory rule refuses denies
	// every Bash call (hooks.Call.HostShells).
	c.HostShells = ShellNames
	// write_stdin types into a running command and runs no hook
	// (codex-rs/core/src/tools/handlers/unified_exec/write_stdin.rs:
	// pre_tool_use_payload returns None; seen on 0.171.0).
	c.TypesLater = true
	// exec_command's sandbox_permissions: "require_escalated" asks Codex
	// to run the command outside its sandbox (held as sandbox_escape).
	c.Escape = hooks.EscapeCodex
	in, err := agents.InputObject(m["tool_input"], "tool_input", false)
	if err != nil {
		return nil, c.Event, err
	}
	c.ToolInput = in
	if err := mapTool(c); err != nil {
		return nil, c.Event, err
	}
	c, err = agents.Finish(c)
	return c, eventOr(c, event), err
}

// mapTool maps Codex's tools onto the engine's tool classes (the names
// its hooks send, 0.171.0: every function tool, exec_command as Bash).
// Names it does not know stay as they are (an exact approval covers
// them), among them the goal's writers (create_goal, update_goal) and
// the subagents' tools.
func mapTool(c *hooks.Call) error {
	switch c.ToolName {
	case "apply_patch":
		return mapPatch(c)
	case "Bash":
		_, err := mapShellPatch(c)
		return err
	case "view_image":
		// It reads a local image into the conversation.
		return agents.ReadOnly(c, "Read", map[string]any{"file_path": c.ToolInput["path"]})
	case "get_goal":
		return agents.ReadOnly(c, "TaskGet", nil)
	case "update_plan":
		// The session's plan, kept in memory.
		return agents.ReadOnly(c, "TodoWrite", nil)
	case "request_user_input":
		return agents.ReadOnly(c, "AskUserQuestion", nil)
	}
	return nil
}

func eventOr(c *hooks.Call, event string) string {
	if c != nil {
		return c.Event
	}
	return event
}

// mapPatch turns apply_patch into the file tool it is: a patch that adds one
// file is a Write of it, one that updates or deletes one file an Edit of it,
// so the engine binds that file's state, checks it against the protected
// paths and lets Edit(...) and Write(...) rules scope it. The input keeps
// the whole patch (the digest covers it) and gains file_path.
func mapPatch(c *hooks.Call) error {
	body, ok := c.ToolInput["command"].(string)
	if !ok {
		body, ok = c.ToolInput["patch"].(string)
	}
	if !ok {
		return agents.Errorf("apply_patch tool_input.command is not a string")
	}
	return patch.Map(c, body)
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, _ io.Writer) int {
	var out any
	switch event {
	case PermissionRequest:
		switch d.Behavior {
		case hooks.Allow:
			out = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PermissionRequest, Decision: &agents.Behavior{Behavior: "allow"}})
		case hooks.Deny:
			out = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PermissionRequest, Decision: &agents.Behavior{Behavior: "deny", Message: agents.Reason(d)}})
		default:
			return agents.ExitOK // Codex asks the user
		}
	case PostToolUse:
		if d.Behavior != hooks.Alarm {
			return agents.ExitOK
		}
		out = postBlock{Decision: "block", Reason: present.Clip(d.SystemMessage)}
	default:
		// PreToolUse, and any payload that could not be read: a deny, or
		// an allow that carries the command to run in place of the
		// model's (updatedInput). A plain allow and ask are never written
		// (Codex takes them as a failed hook, and ask does not exist
		// there); they, and abstain, are silence.
		if d.Behavior == hooks.Allow && d.UpdatedInput != nil && event == PreToolUse {
			out = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PreToolUse, PermissionDecision: "allow", UpdatedInput: d.UpdatedInput, AdditionalContext: present.Clip(d.Context)})
			break
		}
		if d.Behavior == hooks.Allow || d.Behavior == hooks.Abstain {
			return agents.ExitOK
		}
		// Codex shows the model "Command blocked by PreToolUse hook:
		// REASON. Command: CMD" (codex-rs core/src/hook_runtime.rs): a
		// reason's own last period would make it "approval.. Command:".
		out = agents.PreToolUseDeny(strings.TrimRight(agents.Reason(d), ". "))
	}
	return agents.Output{Deny: agents.HookSpecificDeny}.Write(out, false, "", stdout, nil)
}

type postBlock struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}
