package gemini

import (
	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/register"
)

// Matcher reaches every tool, future ones included: "*" is Gemini CLI's
// match-all (HookPlanner.matchesContext, as ""; 0.61.0). A tool the
// adapter does not know needs an exact approval; its read-only tools
// abstain on the engine's fast path (mapTool).
const Matcher = "*"

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name"`
	Timeout int    `json:"timeout"` // milliseconds
}

// handlers are loopguard's handlers in the file, one per event.
var handlers = register.Hooks{Agent: Name, Events: []string{BeforeTool, AfterTool}, Nested: true, Matcher: Matcher,
	Handler: func(command string, timeout int) any {
		return handler{Type: "command", Command: command, Name: "loopguard", Timeout: timeout}
	},
	CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1000,
	// The deny echoed when loopguard cannot run: Gemini lets the call
	// through when a hook cannot start.
	Fallback: register.DenyOn(BeforeTool, func() any { return answer{Decision: "deny", Reason: register.FallbackReason} }),
	Host:     "Gemini"}

// Registration is Gemini CLI's: the "hooks" key of ~/.gemini/settings.json
// or <project>/.gemini/settings.json. Gemini registers settings hooks only
// in trusted folders.
var Registration = register.Registration{
	Agent:   Name,
	User:    "settings.json",
	Project: ".gemini/settings.json",
	Hooks:   handlers,
	Binding: "session_id, the tool and its complete input (Gemini sends no call id and no agent id: subagents share the session's approvals, and the AfterTool re-check cannot tell which allowed call ran)",
	Host: agents.Host{Client: "Gemini CLI 0.61.0",
		Rewrite:     "a BeforeTool allow's hookSpecificOutput.tool_input is merged over the call's arguments",
		Timeout:     "Gemini runs the call when a hook times out (and when it cannot start: the registration echoes a deny then)",
		TimeoutOpen: true,
		// write-file.ts getCorrectedFileContent: aggressiveUnescape where
		// the model is neither Gemini 2 or 3 nor a custom one, and the LLM
		// correction (ensureCorrectFileContent) where it is on.
		Files: present.Client{Name: "Gemini CLI", WriteEscapes: "when its model is not a Gemini 2 or 3 model, and has a model rewrite such content where its LLM correction is on"}},
}
