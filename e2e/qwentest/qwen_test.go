// Package qwentest runs loopguard under the real Qwen Code (pinned in
// e2e/agenttest), registered by `loopguard init --agent qwen`, against a
// scripted fake Chat Completions API on loopback. Each test is one
// `qwen --yolo` run (Qwen Code's own confirmations off: what stops a call
// is the hook); the side effect on disk and what Qwen Code reported back to
// the model say what happened. Needs a Secret Service session (make test).
package qwentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
var qwen = &agenttest.Agent{
	Name:    "qwen",
	Title:   "Qwen Code",
	Client:  agenttest.Qwen,
	NewAPI:  agenttest.NewChatAPI,
	Start:   agenttest.Run.Qwen,
	Hooks:   ".qwen/settings.json",
	Refused: []string{"loopguard"},
}

func TestMain(m *testing.M) { qwen.Main(m) }

func TestQwenShellCallNeedsApproval(t *testing.T) {
	agenttest.ShellCallNeedsApproval(qwen.NewEnv(t))
}

// Qwen Code lets a call through when its hook cannot start. loopguard's
// registration echoes Qwen Code's deny when the binary is gone.
func TestQwenHookThatCannotStartBlocks(t *testing.T) {
	agenttest.HookThatCannotStartBlocks(qwen.NewEnv(t), agenttest.BlockedWith("hook_failed"))
}

// The deny of a hook that hung is in the audit log once the lock is free,
// with what the model was told.
func TestQwenHookThatHangsBlocks(t *testing.T) {
	e := qwen.NewEnv(t)
	agenttest.HookThatHangsBlocks(e)
	out, err := e.G.Run(e.Ctx, e.Dir, "audit", "--json", "-n", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"reason":"deadline"`) || !strings.Contains(out, `"told":"loopguard: deadline`) {
		t.Errorf("no deadline entry recording what the model was told:\n%s", out)
	}
}

// Pins the host behaviour the two tests above guard against: Qwen Code
// runs the call when a PreToolUse hook times out.
func TestQwenFailsOpenOnHookTimeout(t *testing.T) {
	agenttest.FailsOpenOnHookTimeout(qwen.NewEnv(t),
		`{"hooks":{"PreToolUse":[{"matcher":"","hooks":[{"type":"command","command":"sleep 30","timeout":1}]}]}}`)
}

// Qwen Code runs the model's own command text (it ignores a hook's
// updatedInput), so a scope covers only a command written plainly: under
// a grant of mkdir, `mkdir plain` runs (the control) and
// `mkdir $'quoted'` is refused as not_canonical. The control is told by
// the directory it makes, not by what Qwen Code reports: its child_process shell
// settles on the child's exit rather than on its pipes' close, and under
// load drops a fast command's output ("Output: (empty)", seen in CI).
func TestQwenScopeCoversOnlyPlainText(t *testing.T) {
	e := qwen.NewEnv(t)
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(mkdir *)"); err != nil {
		t.Fatal(err)
	}
	api := e.Run(agenttest.Script{Commands: []string{"mkdir plain", "mkdir $'quoted'"}})
	if _, err := os.Stat(filepath.Join(e.Dir, "plain")); err != nil {
		t.Errorf("control: mkdir plain under the grant did not run (%v); the client reported %q", err, api.Output(0))
	}
	agenttest.WantBlocked(t, api, 1, "not_canonical")
	if _, err := os.Stat(filepath.Join(e.Dir, "quoted")); err == nil {
		t.Error("mkdir $'quoted' ran under the grant: Qwen Code runs the text the model wrote, which no scope was checked against")
	}
}

// TestQwenEditShownIsWhatRuns: Qwen Code's edit is the oracle of what an
// edit loopguard shows as a diff writes (agenttest.EditCases).
func TestQwenEditShownIsWhatRuns(t *testing.T) {
	agenttest.EditShownIsWhatRuns(qwen.NewEnv(t), "edit", nil)
}
