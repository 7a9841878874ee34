package codex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/present"
)

// TestDenyReasonEndsWithoutPeriod: Codex appends ". Command: CMD" to a
// PreToolUse deny's reason, so the reason carries no last period of its
// own (the model saw "approval.. Command:"); the words are otherwise whole.
func TestDenyReasonEndsWithoutPeriod(t *testing.T) {
	msg := "loopguard: no_grant: held for a human's approval; any change needs a new approval."
	var out bytes.Buffer
	Adapter{}.Encode(PreToolUse, hooks.Decision{Behavior: hooks.Deny, Reason: "no_grant", Message: msg}, &out, nil)
	var got struct {
		HookSpecificOutput struct {
			Reason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	r := got.HookSpecificOutput.Reason
	if strings.HasSuffix(r, ".") || !strings.HasSuffix(r, "needs a new approval") || !strings.HasPrefix(r, "loopguard: no_grant") {
		t.Errorf("reason %q: want the message without its last period", r)
	}
}

// TestPatchSummaryNamesItsFile: a Codex apply_patch is summarised (show,
// review, audit) by the file it changes, not by the patch's first bytes.
func TestPatchSummaryNamesItsFile(t *testing.T) {
	c := &hooks.Call{Cwd: "/home/u/proj", ToolName: "apply_patch", ToolInput: map[string]any{"command": "*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** End Patch\n"}}
	if err := mapPatch(c); err != nil {
		t.Fatal(err)
	}
	if got := present.SummaryOfInput(c.ToolName, c.ToolInput); got != "Edit /home/u/proj/src/a.go" {
		t.Errorf("summary %q, want the file", got)
	}
	// Control: a Bash call is still summarised by its command.
	if got := present.SummaryOfInput("Bash", map[string]any{"command": "go test ./..."}); got != "Bash go test ./..." {
		t.Errorf("Bash summary %q", got)
	}
}
