package cursor

import (
	"fmt"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

// Matcher is none: Cursor runs a preToolUse hook without one for every
// tool (its docs). A tool the adapter does not know needs an exact
// approval.
const Matcher = ""

type handler struct {
	Command    string `json:"command"`
	Type       string `json:"type"`
	Timeout    int    `json:"timeout"`
	Matcher    string `json:"matcher,omitempty"`
	FailClosed bool   `json:"failClosed"`
}

// handlers are loopguard's handlers in the file, one per event.
var handlers = register.Hooks{Agent: Name, Events: []string{PreToolUse, PostToolUse}, Version: 1, Matcher: Matcher,
	Handler: func(command string, timeout int) any {
		return handler{Command: command, Type: "command", Timeout: timeout, Matcher: Matcher, FailClosed: true}
	},
	CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1,
	Also: func(r register.Found) string {
		if fc, _ := r.Fields["failClosed"].(bool); r.Ours && r.Event == PreToolUse && !fc {
			return fmt.Sprintf("%s: \"failClosed\" is not true: Cursor lets the call through when the hook fails", r.Event)
		}
		return ""
	}}

// Registration is Cursor's: ~/.cursor/hooks.json or
// <project>/.cursor/hooks.json, with "failClosed": true so that a hook that
// crashes, times out or answers badly blocks the call.
var Registration = register.Registration{
	Agent:   Name,
	User:    "hooks.json",
	Project: ".cursor/hooks.json",
	Hooks:   handlers,
	Binding: "conversation_id, tool_use_id, the tool and its complete input (Cursor sends no subagent id on tool calls)",
	Host: agents.Host{Client: "Cursor (its docs; its agent is not on npm, so nothing was run)",
		Timeout: "Cursor blocks the call when a hook registered with \"failClosed\": true times out, crashes or answers badly (documented, not measured)"},
}
