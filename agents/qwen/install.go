package qwen

import (
	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

// Matcher reaches every tool, future ones included: "*" is Qwen Code's
// match-all (hookPlanner's matchesHookPattern, as "" and ".*"; 0.24.4).
// A tool the adapter does not know needs an exact approval; its read-only
// tools abstain on the engine's fast path (mapTool).
const Matcher = "*"

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name"`
	Timeout int    `json:"timeout"` // seconds
}

// handlers are loopguard's handlers in the file, one per event.
var handlers = register.Hooks{Agent: Name, Events: []string{PreToolUse, PostToolUse}, Nested: true, Matcher: Matcher,
	Handler: func(command string, timeout int) any {
		return handler{Type: "command", Command: command, Name: "loopguard", Timeout: timeout}
	},
	CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1,
	// The deny echoed when loopguard cannot run: Qwen Code lets the call
	// through when a hook cannot start.
	Fallback: register.DenyOn(PreToolUse, func() any { return agents.PreToolUseDeny(register.FallbackReason) }),
	Host:     "Qwen Code",
	// Qwen Code's co-author and PR attribution rewrite of a git commit's
	// message and a gh pr create's body, after the hook (coauthorSafe).
	Off: CoAuthorSettings}

// CoAuthorSettings turn off Qwen Code's rewrite of a command after its
// hooks ran (general.gitCoAuthor, on by default in 0.24.4).
var CoAuthorSettings = []string{"general.gitCoAuthor.commit", "general.gitCoAuthor.pr"}

// Registration is Qwen Code's: the "hooks" key of ~/.qwen/settings.json or
// <project>/.qwen/settings.json (Claude Code's nested shape).
var Registration = register.Registration{
	Agent:   Name,
	User:    "settings.json",
	Project: ".qwen/settings.json",
	Hooks:   handlers,
	Binding: "session_id, the tool and its complete input, the subagent's agent_id; Qwen Code runs the model's own command text, so a scope covers only a command already written plainly",
	Host: agents.Host{Client: "Qwen Code 0.24.4",
		Wrapper:     "with init --agent qwen --ticket, loopguard's own shell tool runs each call through the launcher under the capability its ticket names",
		Timeout:     "Qwen Code runs the call when a hook times out, fails or cannot start (the registration echoes a deny for the last)",
		TimeoutOpen: true},
}
