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

// TestMonitorRunsInItsDirectory: monitor is Bash run in its directory
// (relative to the cwd, as run_shell_command's), its input kept whole for
// the digest; no directory keeps the cwd.
func TestMonitorRunsInItsDirectory(t *testing.T) {
	for dir, want := range map[any]string{nil: "/p", "": "/p", "sub": "/p/sub", "/srv/app": "/srv/app"} {
		in := map[string]any{"command": "tail -f log", "description": "d", "directory": dir}
		c := &hooks.Call{ToolName: "monitor", Cwd: "/p", ToolInput: in}
		if err := mapTool(c); err != nil || c.ToolName != "Bash" || c.Cwd != want || c.ToolInput["directory"] != dir || len(c.ToolInput) != 3 {
			t.Errorf("directory %v: %s in %s %v (%v), want Bash in %s", dir, c.ToolName, c.Cwd, c.ToolInput, err, want)
		}
	}
}
