package gemini

import (
	"encoding/json"
	"path/filepath"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/install"
)

// Matcher is the tools loopguard guards in Gemini CLI: the shell, file
// writes and edits, web fetches and every MCP tool.
const Matcher = "^(run_shell_command|write_file|replace|web_fetch|mcp_.*)$"

// Events loopguard registers for.
var Events = []string{BeforeTool, AfterTool}

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name"`
	Timeout int    `json:"timeout"` // milliseconds
}

// Registration is Gemini CLI's: the "hooks" key of ~/.gemini/settings.json
// or <project>/.gemini/settings.json. Gemini registers settings hooks only
// in trusted folders.
var Registration = agents.Registration{
	Agent:       Name,
	UserFile:    func(home string) string { return filepath.Join(home, ".gemini", "settings.json") },
	ProjectFile: func(project string) string { return filepath.Join(project, ".gemini", "settings.json") },
	File: func(o agents.RegOptions) install.AgentFile {
		f := install.AgentFile{Nested: true, Self: o.Binary}
		deny, _ := json.Marshal(answer{Decision: "deny", Reason: agents.FallbackReason})
		for _, ev := range Events {
			fb := ""
			if ev == BeforeTool {
				fb = string(deny)
			}
			f.Entries = append(f.Entries, install.AgentEntry{Event: ev, Matcher: Matcher, Handler: handler{
				Type: "command", Command: agents.Command(o, Name, ev, fb), Name: "loopguard",
				Timeout: agents.TimeoutSeconds(o.Deadline) * 1000,
			}})
		}
		return f
	},
	Check: func(regs []install.AgentRegistered, o agents.RegOptions) []string {
		return agents.CheckCommon(regs, o, Name, Events, "command", "timeout", 1000)
	},
	Binding: "session_id, the tool and its complete input (Gemini sends no call id and no agent id: subagents share the session's approvals, and the AfterTool re-check cannot tell which allowed call ran)",
	Host: agents.Host{Client: "Gemini CLI 0.61.0",
		Rewrite:     "a BeforeTool allow's hookSpecificOutput.tool_input is merged over the call's arguments",
		Timeout:     "Gemini runs the call when a hook times out (and when it cannot start: the registration echoes a deny then)",
		TimeoutOpen: true},
}
