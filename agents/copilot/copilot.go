// Package copilot is GitHub Copilot CLI's adapter (the cloud coding agent
// reads the same hooks).
//
// Copilot sends either its own camelCase payload (sessionId, cwd, toolName,
// toolArgs, which may be a JSON text) or, for hooks registered under
// Claude-style event names (and for hooks it finds in .claude/settings
// files), a PascalCase payload with Claude's tool names. Neither carries a
// call id or an agent id: a grant binds the session, the tool and the
// complete arguments, and the post-tool re-check cannot tell which allowed
// call ran. Copilot denies on a crash or a non-zero exit but allows on a
// timeout; a deny here is JSON and exit 2.
package copilot

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/patch"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
)

// Name is the agent's name in `loopguard hook copilot`.
const Name = "copilot"

// Events as Copilot spells them (camelCase; the PascalCase payload names
// the engine's events).
const (
	PreToolUse        = "preToolUse"
	PostToolUse       = "postToolUse"
	PermissionRequest = "permissionRequest"
)

// Adapter is Copilot CLI's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	if _, pascal := m["hook_event_name"]; pascal {
		return decodePascal(m, event)
	}
	return decodeCamel(m, event)
}

func decodeCamel(m map[string]any, event string) (*hooks.Call, string, error) {
	c := &hooks.Call{}
	ev := event
	if ev == "" {
		// Hooks run from .claude settings get "hookName".
		if hn, err := agents.String(m, "hookName", false); err != nil {
			return nil, ev, err
		} else if hn != "" {
			ev = hn
		}
	}
	if ev == "" {
		// The camelCase payload does not name its event. Unregistered,
		// only a result marks a post hook; anything else is decided as
		// the call it would be (a deny when nothing covers it).
		ev = PreToolUse
		if _, ok := m["toolResult"]; ok {
			ev = PostToolUse
		}
	}
	switch ev {
	case hooks.PreToolUse, hooks.PermissionRequest, hooks.PostToolUse:
		// Registered under Claude's event names.
		ev = strings.ToLower(ev[:1]) + ev[1:]
	}
	switch ev {
	case PreToolUse, PermissionRequest:
		c.Event = hooks.PreToolUse
		// Copilot runs the modifiedArgs of a preToolUse allow in place of
		// the model's arguments (checked on 1.0.102).
		c.Rewrite = true
		if ev == PermissionRequest {
			c.Event, c.Rewrite = hooks.PermissionRequest, false
		}
	case PostToolUse:
		c.Event = hooks.PostToolUse
	default:
		return nil, ev, agents.Errorf("unknown Copilot event %q", ev)
	}
	if err := readCall(c, m, "sessionId", "toolName"); err != nil {
		return nil, ev, err
	}
	args, key := m["toolArgs"], "toolArgs"
	if _, ok := m["toolInput"]; ok {
		// permissionRequest names it toolInput; both at once is malformed.
		if _, both := m["toolArgs"]; both {
			return nil, ev, agents.Errorf("both toolArgs and toolInput")
		}
		args, key = m["toolInput"], "toolInput"
	}
	return finish(c, ev, args, key)
}

func decodePascal(m map[string]any, event string) (*hooks.Call, string, error) {
	c := &hooks.Call{}
	ev, err := agents.EventField(m, "hook_event_name", event)
	if err != nil {
		return nil, event, err
	}
	switch ev {
	case hooks.PreToolUse, hooks.PostToolUse, hooks.PermissionRequest:
		c.Event = ev
		c.Rewrite = ev == hooks.PreToolUse
	default:
		return nil, ev, agents.Errorf("unknown Copilot event %q", ev)
	}
	if err := readCall(c, m, "session_id", "tool_name"); err != nil {
		return nil, ev, err
	}
	// Claude's tool names already; Copilot's own names (a tool it does not
	// map) are mapped as in the camelCase form.
	return finish(c, ev, m["tool_input"], "tool_input")
}

// readCall reads what both payload forms carry, the session and the tool
// under each form's own keys, the directory and the call's time.
func readCall(c *hooks.Call, m map[string]any, sessionKey, toolKey string) error {
	if err := (agents.Keys{Agent: Name, Session: sessionKey, Cwd: "cwd", Tool: toolKey}).Read(c, m); err != nil {
		return err
	}
	c.CallKey = callKey(m["timestamp"])
	return nil
}

// finish reads the call's input (args, named key in the payload), maps the
// tool and finishes the call, for both payload forms.
func finish(c *hooks.Call, ev string, args any, key string) (*hooks.Call, string, error) {
	if err := readInput(c, args, key); err != nil {
		return nil, ev, err
	}
	if err := mapTool(c); err != nil {
		return nil, ev, err
	}
	call, err := agents.Finish(c)
	return call, ev, err
}

// callKey is the identity of one call in Copilot's payloads: the time the
// call was made, which Copilot hands every hook of that call (milliseconds
// in the camelCase form, the same instant in ISO form in the PascalCase
// one; checked on 1.0.102, where a call's two registrations got
// 1796137348869 and "2026-12-01T15:02:28.869Z"). "" when it cannot be read.
func callKey(ts any) string {
	switch v := ts.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil && n > 0 {
			return "t:" + strconv.FormatInt(n, 10)
		}
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return "t:" + strconv.FormatInt(t.UnixMilli(), 10)
		}
	}
	return ""
}

// readInput sets c's input from raw: an object, or a JSON text holding one.
// For GPT-5 models Copilot offers apply_patch as a free-form tool and sends
// the patch itself as the text (checked on 1.0.102): that input is the
// patch, {"patch": text}, mapped by mapTool like Codex's.
func readInput(c *hooks.Call, raw any, key string) error {
	if s, ok := raw.(string); ok && c.ToolName == "apply_patch" && isPatch(s) {
		c.ToolInput = map[string]any{"patch": s}
		return nil
	}
	in, err := agents.InputObject(raw, key, true)
	c.ToolInput = in
	return err
}

// isPatch reports whether s is patch text, not JSON.
func isPatch(s string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "*** Begin Patch")
}

// mapTool maps Copilot's tool names onto the engine's tool classes (the
// names its hooks send, 1.0.102). Names it does not know stay as they are
// (an exact approval then covers them), among them sql (it writes the
// session's database), session_store_sql (every session's history), task
// and write_agent (subagents), write_bash and stop_bash (a running
// shell) and skill. The path field Copilot's file tools read ("path")
// becomes file_path, absolute; an input that also names a file elsewhere
// is refused (copilotFile).
func mapTool(c *hooks.Call) error {
	if tool, ok := readOnly[c.ToolName]; ok {
		return agents.ReadOnly(c, tool, nil)
	}
	rename := func(tool string) error {
		if err := copilotFile(c); err != nil {
			return err
		}
		in, ok := agents.WithPath(c.ToolInput, "path", "file_path", c.Cwd)
		if !ok {
			if in, ok = agents.WithPath(c.ToolInput, "file_path", "file_path", c.Cwd); !ok {
				return agents.Errorf("%s has no path", c.ToolName)
			}
		}
		c.ToolName, c.ToolInput = tool, in
		return nil
	}
	switch c.ToolName {
	case "bash":
		c.ToolName = "Bash"
	case "powershell":
		c.ToolName = "PowerShell"
	case "create":
		return rename("Write")
	case "apply_patch":
		// The free-form patch, or a JSON form holding one.
		for _, k := range []string{"patch", "input"} {
			if body, ok := c.ToolInput[k].(string); ok && isPatch(body) {
				return patch.Map(c, body)
			}
		}
		return rename("Edit")
	case "edit", "str_replace_editor":
		return rename("Edit")
	case "view":
		return rename("Read")
	case "glob", "rg":
		// One directory, or none (the cwd): several are an exact
		// approval's.
		dir, ok := onePath(c.ToolInput["paths"])
		if !ok {
			return nil
		}
		if c.ToolName == "glob" {
			return agents.ReadOnly(c, "Glob", map[string]any{"path": dir, "pattern": c.ToolInput["pattern"]})
		}
		return agents.ReadOnly(c, "Grep", map[string]any{"path": dir, "glob": c.ToolInput["glob"]})
	case "web_fetch":
		c.ToolName = "WebFetch"
	case "Write", "Edit", "Read":
		// PascalCase: Copilot's own input under Claude's name, which its
		// tool reads as it does under its own (path).
		return rename(c.ToolName)
	}
	return nil
}

// claudeFields are Claude Code's names for a file tool's content, which
// Copilot's file tools do not read (theirs are file_text, old_str and
// new_str), but the edit diff a human reviews would show.
var claudeFields = []string{"content", "old_string", "new_string", "edits"}

// copilotFile refuses a file tool's input that Copilot would read
// otherwise than loopguard judges and shows it. Its view, create, edit,
// str_replace_editor and apply_patch read the file from path (1.0.102:
// their schemas require it, and pass extra fields over): a file_path
// beside it naming another file was judged while Copilot read path (the
// ninety-second attack run read ~/.ssh/id_rsa so, under --yolo). Beside
// path, Claude's content fields are refused too: Copilot writes file_text
// or new_str, not what a diff of content or new_string would show. An
// input without path is judged on file_path, as before (Copilot refuses
// the call itself).
func copilotFile(c *hooks.Call) error {
	if err := agents.SamePath(c.ToolName, c.ToolInput, c.Cwd, "path", "file_path"); err != nil {
		return err
	}
	if _, ok := c.ToolInput["path"]; !ok {
		return nil
	}
	for _, k := range claudeFields {
		if _, ok := c.ToolInput[k]; ok {
			return agents.Errorf("%s holds %s, Claude Code's field, which Copilot's tool does not read (it reads path, file_text, old_str and new_str): what would be shown is not what it would write; send Copilot's own fields alone", c.ToolName, k)
		}
	}
	return nil
}

// readOnly are Copilot's tools that list or read what the session's own
// shells and subagents did, or say what the model is doing, by the
// engine's read-only tool each is.
var readOnly = map[string]string{
	"list_bash": "TaskOutput", "read_bash": "TaskOutput", "read_agent": "TaskOutput",
	"list_agents": "ListAgents", "report_intent": "TodoWrite",
}

// onePath is the one path of a list of at most one (glob's and rg's
// "paths"): nil when there is none, and false when there are several or
// the list is not one of strings.
func onePath(v any) (any, bool) {
	switch l := v.(type) {
	case nil:
		return nil, true
	case []any:
		switch len(l) {
		case 0:
			return nil, true
		case 1:
			_, ok := l[0].(string)
			return l[0], ok
		}
	}
	return nil, false
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, stderr io.Writer) int {
	var out any
	code := agents.ExitOK
	switch event {
	case PostToolUse, hooks.PostToolUse:
		if d.Behavior != hooks.Alarm {
			return agents.ExitOK
		}
		out = struct {
			AdditionalContext string `json:"additionalContext"`
		}{present.Clip(d.SystemMessage)}
	case PermissionRequest, hooks.PermissionRequest:
		switch d.Behavior {
		case hooks.Allow:
			out = agents.Behavior{Behavior: "allow"}
		case hooks.Deny:
			out = agents.Behavior{Behavior: "deny", Message: agents.Reason(d)}
			code = agents.ExitDeny
		default:
			return agents.ExitOK
		}
	default:
		switch d.Behavior {
		case hooks.Abstain:
			return agents.ExitOK
		case hooks.Allow:
			out = permission{Decision: "allow", ModifiedArgs: d.UpdatedInput, AdditionalContext: present.Clip(d.Context)}
		case hooks.Ask:
			out = permission{Decision: "ask", Reason: agents.Reason(d)}
		default:
			out = permission{Decision: "deny", Reason: agents.Reason(d)}
			code = agents.ExitDeny
		}
	}
	return output.Write(out, code == agents.ExitDeny, agents.Reason(d), stdout, stderr)
}

var output = agents.Output{ExitDeny: true,
	Deny: `{"permissionDecision":"deny","permissionDecisionReason":"loopguard: internal_error"}`}

// permission is preToolUse's answer: only documented fields (undocumented
// ones have made Copilot discard a decision); modifiedArgs replaces the
// call's arguments.
type permission struct {
	Decision          string         `json:"permissionDecision"`
	Reason            string         `json:"permissionDecisionReason,omitempty"`
	ModifiedArgs      map[string]any `json:"modifiedArgs,omitempty"`
	AdditionalContext string         `json:"additionalContext,omitempty"`
}
