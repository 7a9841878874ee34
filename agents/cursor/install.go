package cursor

import (
	"fmt"
	"path/filepath"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/register"
)

// Matcher is the tools loopguard guards in Cursor.
const Matcher = "Shell|Write|Edit|Delete|MCP:.*"

// Events loopguard registers for.
var Events = []string{PreToolUse, PostToolUse}

type handler struct {
	Command    string `json:"command"`
	Type       string `json:"type"`
	Timeout    int    `json:"timeout"`
	Matcher    string `json:"matcher,omitempty"`
	FailClosed bool   `json:"failClosed"`
}

// Registration is Cursor's: ~/.cursor/hooks.json or
// <project>/.cursor/hooks.json, with "failClosed": true so that a hook that
// crashes, times out or answers badly blocks the call.
var Registration = register.Registration{
	Agent:       Name,
	UserFile:    func(d register.Dirs) string { return filepath.Join(d.Agent(Name), "hooks.json") },
	ProjectFile: func(project string) string { return filepath.Join(project, ".cursor", "hooks.json") },
	File: func(o register.Options) register.AgentFile {
		f := register.AgentFile{Version: 1, Self: o.Binary}
		for _, ev := range Events {
			f.Entries = append(f.Entries, register.AgentEntry{Event: ev, Handler: handler{
				Command: o.Command(Name, ev, "").String(), Type: "command",
				Timeout: register.TimeoutSeconds(o.Deadline), Matcher: Matcher, FailClosed: true,
			}})
		}
		return f
	},
	Check: func(regs []register.Found, o register.Options) []string {
		problems := register.Common{Agent: Name, Events: Events, CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1}.Check(regs, o)
		for _, r := range regs {
			if r.Ours && r.Event == PreToolUse {
				if fc, _ := r.Fields["failClosed"].(bool); !fc {
					problems = append(problems, fmt.Sprintf("%s: \"failClosed\" is not true: Cursor lets the call through when the hook fails", r.Event))
				}
			}
		}
		return problems
	},
	Binding: "conversation_id, tool_use_id, the tool and its complete input (Cursor sends no subagent id on tool calls)",
	Host: agents.Host{Client: "Cursor (its docs; its agent is not on npm, so nothing was run)",
		Timeout: "Cursor blocks the call when a hook registered with \"failClosed\": true times out, crashes or answers badly (documented, not measured)"},
}
