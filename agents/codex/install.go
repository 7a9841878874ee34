package codex

import (
	"encoding/json"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

// Matcher reaches every tool Codex runs hooks for, future ones included:
// "*" is Codex's match-all (codex-rs hooks is_match_all_matcher, as "";
// otherwise a regex). A tool the adapter does not know needs an exact
// approval.
const Matcher = "*"

type handler struct {
	Type          string `json:"type"`
	Command       string `json:"command"`
	Timeout       int    `json:"timeout"`
	StatusMessage string `json:"statusMessage,omitempty"`
}

// fallbackFor is the deny echoed when loopguard cannot run (Codex lets the
// call through on a failed hook).
func fallbackFor(event string) string {
	var v any
	switch event {
	case PreToolUse:
		v = agents.PreToolUseDeny(register.FallbackReason)
	case PermissionRequest:
		v = agents.HookSpecificOutput(agents.HookSpecific{HookEventName: PermissionRequest, Decision: &agents.Behavior{Behavior: "deny", Message: register.FallbackReason}})
	default:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// handlers are loopguard's handlers in the file, one per event.
var handlers = register.Hooks{Agent: Name, Events: []string{PreToolUse, PermissionRequest, PostToolUse}, Nested: true, Matcher: Matcher,
	Handler: func(command string, timeout int) any {
		return handler{Type: "command", Command: command, Timeout: timeout, StatusMessage: "loopguard"}
	},
	CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1, Fallback: fallbackFor, Host: "Codex",
	Also: func(r register.Found) string {
		if r.Event == PreToolUse && !r.Ours {
			return "PreToolUse: another hook runs too; Codex runs hooks concurrently and the last updatedInput wins, which can change a call after loopguard decided"
		}
		return ""
	}}

// Registration is Codex's: $CODEX_HOME/hooks.json (~/.codex/hooks.json
// when it is not set: policy.CodexHome) or <project>/.codex/hooks.json.
// Codex runs a user or project hook only once it is trusted: the user
// reviews it with /hooks in the Codex TUI, which records its hash under
// [hooks.state] in ~/.codex/config.toml (doctor looks for that entry).
var Registration = register.Registration{
	Agent:   Name,
	User:    "hooks.json",
	Project: ".codex/hooks.json",
	Hooks:   handlers,
	Binding: "session_id (+ turn_id), agent_id of subagents, tool_use_id, the tool and its complete input; apply_patch is bound as the Write or Edit of the one file it changes, with that file's state (a patch over several files is refused)",
	Host: agents.Host{Client: "Codex 0.171.0",
		Rewrite:     "a PreToolUse allow's updatedInput replaces the command Codex runs",
		Timeout:     "Codex runs the call when a hook times out (and when it cannot start: the registration echoes a deny then)",
		TimeoutOpen: true},
}
