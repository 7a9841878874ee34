// Package geminitest runs loopguard under the real Gemini CLI (pinned in
// e2e/agenttest), registered by `loopguard init --agent gemini`, against a
// scripted fake Gemini API on loopback. Each test is one `gemini -p --yolo`
// run (Gemini's own confirmations off: what stops a call is the hook); the
// side effect on disk and what Gemini reported back to the model say what
// happened. Needs a Secret Service session (make test).
package geminitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
var gemini = &agenttest.Agent{
	Name:    "gemini",
	Title:   "Gemini",
	Client:  agenttest.Gemini,
	Prepare: agenttest.WriteGeminiSettings,
	NewAPI:  agenttest.NewGeminiAPI,
	Start:   agenttest.Run.Gemini,
	Hooks:   ".gemini/settings.json",
	Refused: []string{"loopguard", "blocked"},
}

func TestMain(m *testing.M) { gemini.Main(m) }

func TestGeminiShellCallNeedsApproval(t *testing.T) {
	agenttest.ShellCallNeedsApproval(gemini.NewEnv(t))
}

// Gemini lets a call through when its hook cannot start. loopguard's
// registration echoes Gemini's deny when the binary is gone, so the call
// still does not run.
func TestGeminiHookThatCannotStartBlocks(t *testing.T) {
	agenttest.HookThatCannotStartBlocks(gemini.NewEnv(t), agenttest.BlockedWith("hook_failed"))
}

func TestGeminiHookThatHangsBlocks(t *testing.T) {
	agenttest.HookThatHangsBlocks(gemini.NewEnv(t))
}

// Pins the host behaviour the two tests above guard against: Gemini runs
// the call when a BeforeTool hook times out.
func TestGeminiFailsOpenOnHookTimeout(t *testing.T) {
	agenttest.FailsOpenOnHookTimeout(gemini.NewEnv(t),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"sleep 30","name":"slow","timeout":1000}]}]}}`)
}

// The model can ask Gemini to run a command in another directory
// (dir_path): the same text with a dir_path is refused and does not run
// there.
func TestGeminiApprovalIsBoundToTheDirectory(t *testing.T) {
	e := gemini.NewEnv(t)
	sub := filepath.Join(e.Dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	agenttest.ApprovalIsBoundToTheDirectory(e, sub, map[string]any{"dir_path": "sub"})
}

// Gemini CLI runs the input a BeforeTool allow gives back (merged over the
// model's); the AfterTool entry is matched by what ran: Gemini sends no
// call id.
func TestGeminiRunsTheRewrite(t *testing.T) {
	agenttest.RunsTheRewrite(gemini.NewEnv(t))
}

// TestGeminiJailedCallRuns: init --agent grants the jail, and Gemini runs the
// jailed rewrite: no decision, the project write lands, the home write is
// refused by the kernel.
func TestGeminiJailedCallRuns(t *testing.T) {
	t.Parallel()
	agenttest.JailedCallRuns(gemini.NewJailedEnv(t))
}
