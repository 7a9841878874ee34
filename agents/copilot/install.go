package copilot

import (
	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

// Matcher is none: Copilot runs a hook without one for every tool call,
// future ones included. A matcher there is a regular expression that
// must match the whole tool name ("*" alone would not compile). A tool
// the adapter does not know needs an exact approval; its read-only tools
// abstain on the engine's fast path (mapTool).
const Matcher = ""

type handler struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec"`
	Matcher    string `json:"matcher,omitempty"`
}

// handlers are loopguard's handlers in the file, one per event.
var handlers = register.Hooks{Agent: Name, Events: []string{PreToolUse, PostToolUse}, Version: 1, Matcher: Matcher,
	Handler: func(command string, timeout int) any {
		return handler{Type: "command", Bash: command, TimeoutSec: timeout, Matcher: Matcher}
	},
	CmdKey: "bash", TimeoutKey: "timeoutSec", UnitsPerSecond: 1,
	// Copilot runs the user's file and the repository's (and a Claude
	// Code registration in .claude/settings.json) for every call.
	Scoped: true}

// Registration is Copilot CLI's: a file of loopguard's own,
// ~/.copilot/hooks/loopguard.json or <project>/.github/hooks/loopguard.json
// (the cloud agent reads the project one). Copilot denies when a
// preToolUse hook cannot start or exits non-zero, so no fallback is needed.
var Registration = register.Registration{
	Agent:   Name,
	User:    "hooks/loopguard.json",
	Project: ".github/hooks/loopguard.json",
	Hooks:   handlers,
	Binding: "sessionId, the tool and its complete arguments only: Copilot sends no call id and no agent id, so an approval covers that exact call once in the session whichever subagent makes it, and the postToolUse re-check cannot tell which allowed call ran",
	Host: agents.Host{Client: "Copilot CLI 1.0.102",
		Rewrite:     "a preToolUse allow's modifiedArgs replace the call's arguments",
		Timeout:     "Copilot runs the call when a hook times out (it blocks when one cannot start or exits non-zero)",
		TimeoutOpen: true},
}
