// Package claude is Claude Code's adapter: its payload is the engine's own
// shape (hooks.DecodeClaude) and its output is hooks.WriteClaude's.
package claude

import (
	"io"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// Name is the agent's name in `loopguard hook claude`.
const Name = "claude"

// Host is what Claude Code does with loopguard's answers.
var Host = agents.Host{Client: "Claude Code 2.1.328",
	Rewrite: "a PreToolUse allow's updatedInput replaces the command Claude Code runs",
	Timeout: "Claude Code blocks the call when a hook registered with \"onFailure\": \"block\" times out, crashes or cannot start (2.1.295 and later)"}

// Adapter is Claude Code's hook contract.
type Adapter struct{}

// Name implements agents.Adapter.
func (Adapter) Name() string { return Name }

// Decode implements agents.Adapter. A payload naming another event than the
// registered one is malformed.
func (Adapter) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	c, err := hooks.ClaudeCall(m)
	if err != nil {
		return nil, event, err
	}
	if event != "" && c.Event != event {
		return nil, event, &hooks.MalformedError{Msg: "registered for " + event + " but the payload says " + c.Event}
	}
	return c, c.Event, nil
}

// Encode implements agents.Adapter.
func (Adapter) Encode(event string, d hooks.Decision, stdout, stderr io.Writer) int {
	return hooks.WriteClaude(event, d, stdout, stderr)
}
