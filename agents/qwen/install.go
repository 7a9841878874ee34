package qwen

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/install"
)

// Matcher is the tools loopguard guards in Qwen Code (a regex): the shell,
// file writes and edits, web fetches, subagent launches (a subagent can be
// another agent's CLI) and every MCP tool. Its read tools (read_file, glob,
// grep_search) are not hooked, as in Gemini CLI.
const Matcher = "^(run_shell_command|write_file|edit|notebook_edit|web_fetch|agent|mcp__.*)$"

// Events loopguard registers for.
var Events = []string{PreToolUse, PostToolUse}

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name"`
	Timeout int    `json:"timeout"` // seconds
}

// fallback is the deny echoed when loopguard cannot run: Qwen Code lets
// the call through when a hook cannot start.
func fallback() string {
	b, _ := json.Marshal(wrap(hso{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: agents.FallbackReason}))
	return string(b)
}

// Registration is Qwen Code's: the "hooks" key of ~/.qwen/settings.json or
// <project>/.qwen/settings.json (Claude Code's nested shape).
var Registration = agents.Registration{
	Agent:       Name,
	UserFile:    func(home string) string { return filepath.Join(home, ".qwen", "settings.json") },
	ProjectFile: func(project string) string { return filepath.Join(project, ".qwen", "settings.json") },
	File: func(o agents.RegOptions) install.AgentFile {
		f := install.AgentFile{Nested: true, Self: o.Binary}
		for _, ev := range Events {
			fb := ""
			if ev == PreToolUse {
				fb = fallback()
			}
			f.Entries = append(f.Entries, install.AgentEntry{Event: ev, Matcher: Matcher, Handler: handler{
				Type: "command", Command: agents.Command(o, Name, ev, fb), Name: "loopguard",
				Timeout: agents.TimeoutSeconds(o.Deadline),
			}})
		}
		return f
	},
	Check: func(regs []install.AgentRegistered, o agents.RegOptions) []string {
		problems := agents.CheckCommon(regs, o, Name, Events, "command", "timeout", 1)
		for _, r := range regs {
			cmd, _ := r.Fields["command"].(string)
			if r.Ours && r.Event == PreToolUse && !strings.Contains(cmd, "|| echo '") {
				problems = append(problems, "PreToolUse: no deny fallback (`|| echo ...`): Qwen Code lets the call through when the hook cannot start")
			}
		}
		return problems
	},
	Binding: "session_id, the tool and its complete input, the subagent's agent_id; Qwen Code runs the model's own command text, so a scope covers only a command already written plainly",
	Host: agents.Host{Client: "Qwen Code 0.24.4",
		Timeout:     "Qwen Code runs the call when a hook times out, fails or cannot start (the registration echoes a deny for the last)",
		TimeoutOpen: true},
}
