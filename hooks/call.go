// Package hooks decides, for each tool call a coding agent is about to make,
// whether it carries a valid approval. The decision engine (Engine.Decide) is
// agent-neutral; adapters (Claude Code first) decode payloads into a Call and
// encode the Decision in the agent's own protocol.
package hooks

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/token"
)

// Events the engine understands.
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	PostToolUse       = "PostToolUse"
)

// MaxPayload bounds a hook payload. A Write carries a whole file, so it is
// generous; anything larger is denied as malformed.
const MaxPayload = token.MaxJSONSize

// Call is a tool call as the engine sees it.
type Call struct {
	Event          string
	SessionID      string
	AgentID        string // "" for the main agent
	AgentType      string
	Cwd            string
	ToolName       string
	ToolUseID      string
	PermissionMode string
	// ToolInput is the complete tool_input, decoded by token.Decode (strict:
	// duplicate keys, invalid UTF-8 and lone surrogates are malformed).
	ToolInput map[string]any
	// ProjectDir is the project the host names for this call when the
	// hook's environment does not (CLAUDE_PROJECT_DIR): Codex's session
	// directory, read from its session record. "" when unknown.
	ProjectDir string
	// CallKey is the identity the agent's host gives every hook it runs for
	// this one call (Copilot's timestamp, a tool_use_id), "" when there is
	// none: another registration of loopguard asked about the same call
	// answers as the first did (answer.go).
	CallKey string
	// TypesLater says the host lets the model type into a command after it
	// started, and no hook sees what it types (Codex's write_stdin): an
	// approval of a program that reads commands from its standard input
	// then approves whatever is typed into it, and the human and the model
	// are told so.
	TypesLater bool
	// Rewrite says the agent's host runs the input an allow returns
	// (Decision.UpdatedInput) in place of the model's: Claude Code's
	// updatedInput. Without it a scope covers only a Bash command whose
	// text is already canonical (rewrite.go).
	Rewrite bool
}

// Agent is the agent identity grants bind to: the subagent's agent_id, or
// "main".
func (c *Call) Agent() string {
	if c.AgentID != "" {
		return c.AgentID
	}
	return token.MainAgent
}

// MalformedError is a payload the engine refuses to decide on.
type MalformedError struct{ Msg string }

func (e *MalformedError) Error() string { return "malformed hook payload: " + e.Msg }

// DecodeObject decodes payload strictly (token.Decode: duplicate keys,
// invalid UTF-8 and lone surrogates are malformed) and requires a JSON
// object. A hook run calls it once (agents.Run) and hands the object to the
// agent's detection and its adapter.
func DecodeObject(payload []byte) (map[string]any, error) {
	v, err := token.Decode(payload)
	if err != nil {
		return nil, &MalformedError{Msg: err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &MalformedError{Msg: "payload is not a JSON object"}
	}
	return m, nil
}

// DecodeClaude decodes a Claude Code hook payload strictly.
func DecodeClaude(payload []byte) (*Call, error) {
	m, err := DecodeObject(payload)
	if err != nil {
		return nil, err
	}
	return ClaudeCall(m)
}

// ClaudeCall reads the call from a decoded Claude Code payload, strictly. It
// does not change m.
func ClaudeCall(m map[string]any) (*Call, error) {
	c := &Call{}
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{
		{"hook_event_name", &c.Event, true},
		{"session_id", &c.SessionID, true},
		{"tool_name", &c.ToolName, true},
		{"cwd", &c.Cwd, true},
		{"agent_id", &c.AgentID, false},
		{"agent_type", &c.AgentType, false},
		{"tool_use_id", &c.ToolUseID, false},
		{"permission_mode", &c.PermissionMode, false},
	} {
		raw, present := m[f.key]
		if !present {
			if f.required {
				return nil, &MalformedError{Msg: fmt.Sprintf("missing %s", f.key)}
			}
			continue
		}
		s, ok := raw.(string)
		if !ok {
			return nil, &MalformedError{Msg: fmt.Sprintf("%s is not a string", f.key)}
		}
		if f.required && s == "" {
			return nil, &MalformedError{Msg: fmt.Sprintf("empty %s", f.key)}
		}
		if len(s) > token.MaxFieldLen {
			return nil, &MalformedError{Msg: fmt.Sprintf("%s longer than %d bytes", f.key, token.MaxFieldLen)}
		}
		*f.dst = s
	}
	if present := m["agent_id"] != nil; present && c.AgentID == "" {
		return nil, &MalformedError{Msg: "empty agent_id"}
	}
	if c.AgentID == token.MainAgent || c.AgentID == token.Any || strings.HasPrefix(c.AgentID, "type:") || c.SessionID == token.Any {
		return nil, &MalformedError{Msg: "reserved agent_id or session_id"}
	}
	if !filepath.IsAbs(c.Cwd) {
		return nil, &MalformedError{Msg: "cwd is not an absolute path"}
	}
	in, ok := m["tool_input"].(map[string]any)
	if !ok {
		return nil, &MalformedError{Msg: "tool_input missing or not an object"}
	}
	c.ToolInput = in
	// Claude Code runs the updatedInput of a PreToolUse or
	// PermissionRequest allow in place of the model's input.
	c.Rewrite = c.Event == PreToolUse || c.Event == PermissionRequest
	return c, nil
}
