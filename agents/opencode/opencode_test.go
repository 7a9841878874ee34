package opencode

import (
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// TestGrepInclude: OpenCode's grep names its file filter "include"; the
// engine reads it as Grep's glob, added beside the original fields (which
// the digest covers) without changing the payload's own input. The
// control: a grep with no filter has no glob.
func TestGrepInclude(t *testing.T) {
	in := map[string]any{"pattern": "x", "path": "src", "include": "*.go"}
	c := &hooks.Call{ToolName: "grep", Cwd: "/p", ToolInput: in}
	if err := mapTool(c); err != nil {
		t.Fatal(err)
	}
	if c.ToolName != "Grep" || c.ToolInput["glob"] != "*.go" || c.ToolInput["include"] != "*.go" || c.ToolInput["path"] != "/p/src" {
		t.Errorf("grep with include: %s %v", c.ToolName, c.ToolInput)
	}
	if len(in) != 3 || in["path"] != "src" {
		t.Errorf("the payload's input changed: %v", in)
	}
	c = &hooks.Call{ToolName: "grep", Cwd: "/p", ToolInput: map[string]any{"pattern": "x"}}
	if err := mapTool(c); err != nil || c.ToolName != "Grep" || c.ToolInput["glob"] != nil {
		t.Errorf("control, no include: %s %v %v", c.ToolName, c.ToolInput, err)
	}
}
