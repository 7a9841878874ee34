package qwen

import (
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// TestSubagents: a subagent of Qwen Code's own is a subagent launch (its
// calls are hooked one by one); one that runs another agent's CLI (codex,
// claude-code) or that loopguard does not know keeps its name, and needs an
// exact approval.
func TestSubagents(t *testing.T) {
	for typ, want := range map[string]string{"general-purpose": "Task", "Explore": "Task", "codex": "agent", "claude-code": "agent", "mine": "agent"} {
		c := &hooks.Call{ToolName: "agent", Cwd: "/p", ToolInput: map[string]any{"subagent_type": typ, "prompt": "x", "description": "y"}}
		if err := mapTool(c); err != nil || c.ToolName != want {
			t.Errorf("subagent %s: %s (%v), want %s", typ, c.ToolName, err, want)
		}
	}
}
