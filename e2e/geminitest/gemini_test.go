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
	"slices"
	"strings"
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

// TestGeminiEditShownIsWhatRuns: Gemini CLI's replace is the oracle of
// what an edit loopguard shows as a diff writes (agenttest.EditCases).
// Gemini requires an instruction with it, which makes it another agent's
// edit that loopguard does not show; the test pins why: with one, Gemini
// writes a new_string's CRLF as LF, gives the file back the final newline
// state it had, and writes U+FFFD over bytes that are not UTF-8, where
// the exact replacement would not. Without an instruction (an input
// loopguard shows), Gemini refuses the edit and writes nothing.
func TestGeminiEditShownIsWhatRuns(t *testing.T) {
	e := gemini.NewEnv(t)
	differ := agenttest.EditShownIsWhatRuns(e, "replace", map[string]any{"instruction": "Make the change."})
	for _, c := range []string{"CRLF in new_string", "final newline dropped", "final newline added", "file emptied", "invalid UTF-8 elsewhere in the file"} {
		if !slices.Contains(differ, c) {
			t.Errorf("%s: Gemini wrote the exact replacement: it no longer applies an edit its own way there (differs in: %q)", c, differ)
		}
	}
	e.Write("plain.txt", "a\n")
	f := filepath.Join(e.Dir, "plain.txt")
	api := e.Run(agenttest.Script{Tool: "replace", Arg: "file_path", Commands: []string{f},
		Extra: []map[string]any{{"old_string": "a", "new_string": "b"}}})
	if got := e.Read("plain.txt"); got != "a\n" || !strings.Contains(api.Output(0), "instruction") {
		t.Errorf("a replace without an instruction: Gemini wrote %q and reported %q; want it refused for the missing instruction", got, api.Output(0))
	}
}

// TestGeminiWriteEscapesAsNoted: Gemini CLI is the oracle of the note
// loopguard shows beside a write_file's diff (gemini.Registration's
// Host.Files, present.Client): under a Gemini 2 model it writes the
// content as sent, as the diff shows it; under an older Gemini model it
// writes it with its backslash escapes decoded, as the note says, but
// into a JSON file.
func TestGeminiWriteEscapesAsNoted(t *testing.T) {
	e := gemini.NewEnv(t)
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Edit(**)"); err != nil {
		t.Fatal(err)
	}
	const sent = `say("a\nb", \"c\")` + "\n"
	const decoded = "say(\"a\nb\", \"c\")\n"
	for _, c := range []struct {
		model      string
		text, json string // what Gemini writes into a.txt and a.json
	}{
		{"gemini-2.5-pro", sent, sent},
		{"gemini-1.5-pro", decoded, sent},
	} {
		txt, js := filepath.Join(e.Dir, "a.txt"), filepath.Join(e.Dir, "a.json")
		os.Remove(txt)
		os.Remove(js)
		e.Run(agenttest.Script{Tool: "write_file", Arg: "file_path", Commands: []string{txt, js},
			Extra: []map[string]any{{"content": sent}, {"content": sent}}}, "-m", c.model)
		if got := e.Read("a.txt"); got != c.text {
			t.Errorf("%s: Gemini wrote %q into a.txt, want %q", c.model, got, c.text)
		}
		if got := e.Read("a.json"); got != c.json {
			t.Errorf("%s: Gemini wrote %q into a.json, want %q", c.model, got, c.json)
		}
	}
}
