// Package all lists every agent adapter and recognises a payload's agent
// when the registration does not name one (`loopguard hook --event ...`,
// Claude Code's registration, which Cursor and Copilot CLI also run).
package all

import (
	"fmt"
	"strings"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/agents/cursor"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/register"
)

// Adapters are the agents loopguard speaks, by name.
var Adapters = map[string]agents.Adapter{
	claude.Name:   claude.Adapter{},
	codex.Name:    codex.Adapter{},
	gemini.Name:   gemini.Adapter{},
	copilot.Name:  copilot.Adapter{},
	cursor.Name:   cursor.Adapter{},
	qwen.Name:     qwen.Adapter{},
	opencode.Name: opencode.Adapter{},
}

// Names lists the agents in the order help and doctor show them.
var Names = []string{claude.Name, codex.Name, gemini.Name, copilot.Name, cursor.Name, qwen.Name, opencode.Name}

// Lookup returns the adapter named name.
func Lookup(name string) (agents.Adapter, error) {
	if a, ok := Adapters[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want one of %s)", name, strings.Join(Names, ", "))
}

// Detect names the agent that sent payload from the keys only that agent
// sends. A payload with marks of two agents is refused (the caller denies);
// one with no other agent's marks is Claude Code's, as before agents were
// told apart (DecodeClaude is strict about the rest).
func Detect(m map[string]any) (agents.Adapter, error) {
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	ev, _ := m["hook_event_name"].(string)
	var found []string
	if has("toolName", "toolArgs", "toolInput", "sessionId", "hookName") {
		found = append(found, copilot.Name)
	}
	if has("cursor_version", "conversation_id", "generation_id") {
		found = append(found, cursor.Name)
	}
	if ev == gemini.BeforeTool || ev == gemini.AfterTool {
		found = append(found, gemini.Name)
	}
	if has("turn_id") {
		found = append(found, codex.Name)
	}
	// Qwen Code's Claude-style payload carries the model's own call id.
	if has("tool_call_id") {
		found = append(found, qwen.Name)
	}
	// Copilot's PascalCase payload: Claude's event names, a timestamp,
	// and neither permission_mode nor transcript_path, which Claude sends.
	if has("timestamp") && !has("permission_mode", "transcript_path") && len(found) == 0 {
		found = append(found, copilot.Name)
	}
	if has("permission_mode", "transcript_path") && len(found) == 0 {
		found = append(found, claude.Name)
	}
	switch len(found) {
	case 0:
		return Adapters[claude.Name], nil
	case 1:
		return Adapters[found[0]], nil
	}
	return nil, fmt.Errorf("the payload has marks of several agents (%s); loopguard does not guess", strings.Join(found, ", "))
}

// Registrations are the agents `loopguard init --agent` can register with,
// in the order doctor shows them (Claude Code's registration is install's).
var Registrations = []register.Registration{
	codex.Registration, gemini.Registration, copilot.Registration, cursor.Registration, qwen.Registration, opencode.Registration,
}

// Others lists the agents other than Claude Code, for help and errors.
const Others = "codex, gemini, copilot, cursor, qwen or opencode"

// Registration returns the registration of the agent named name.
func Registration(name string) (register.Registration, error) {
	for _, r := range Registrations {
		if r.Agent == name {
			return r, nil
		}
	}
	return register.Registration{}, fmt.Errorf("unknown agent %q (want one of %s)", name, Others)
}

// FilesOf is what the client of the host that a session id names
// (agents.Session) does with a file tool's input (agents.Host.Files): the
// zero Client, Claude Code's, for its own sessions and a host it does not
// know.
func FilesOf(session string) present.Client {
	name, _, _ := strings.Cut(session, ":")
	if r, err := Registration(name); err == nil {
		return r.Host.Files
	}
	return present.Client{}
}
