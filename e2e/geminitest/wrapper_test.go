package geminitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// The ninety-second attack run's F1 (under --no-jail): Gemini CLI runs
// stripShellWrapper's text of a command, inside a subshell
// (agents/gemini/shell.go), not the model's. The approval shows, and the
// hook judges, what Gemini runs.
func wrapperRun(t *testing.T, cmd string) (shown, after string, ran bool) {
	e := gemini.NewEnv(t)
	api := e.RunAnyExit(agenttest.Script{
		Commands: []string{cmd, cmd},
		Between: func(i int, _ string) {
			if i != 0 {
				return
			}
			p, err := e.G.OnlyPending(e.Ctx)
			if err != nil {
				// Refused without a question: nothing to approve.
				return
			}
			shown, _ = e.G.Run(e.Ctx, e.Dir, "show", "--full", p.ID)
			if err := e.ApproveOnly(); err != nil {
				t.Error(err)
			}
		},
	})
	outs := api.Outputs()
	if len(outs) > 1 {
		after = outs[1]
	}
	_, err := os.Stat(filepath.Join(e.Dir, "pwned.txt"))
	return shown, after, err == nil
}

// bash reads `bash -c 'echo hi' 'x; …'` as echo hi alone; Gemini runs
// `echo hi' 'x; id > pwned.txt; echo`: that is what the human approves.
func TestGeminiStripWrapperShownAsRun(t *testing.T) {
	shown, _, ran := wrapperRun(t, `bash -c 'echo hi' 'x; id > pwned.txt; echo '`)
	if !strings.Contains(shown, `command: "echo hi' 'x; id > pwned.txt; echo"`) || strings.Contains(shown, "bash -c") {
		t.Fatalf("the approval does not show what Gemini runs:\n%s", shown)
	}
	if !ran {
		t.Fatal("the approved text did not run")
	}
}

// A `)` that closes Gemini's subshell early is refused, never asked about.
func TestGeminiSubshellEscapeRefused(t *testing.T) {
	shown, after, ran := wrapperRun(t, "echo ok ) ; id > pwned.txt ; ( :")
	if shown != "" || ran {
		t.Fatalf("asked (%q) or ran (%v)", shown, ran)
	}
	if !strings.Contains(after, "subshell") {
		t.Fatalf("the model was not told why: %.400q", after)
	}
}

// The control: `bash -c 'echo hi'` is approved as echo hi, and runs.
func TestGeminiStripWrapperControl(t *testing.T) {
	shown, after, _ := wrapperRun(t, `bash -c 'echo hi'`)
	if !strings.Contains(shown, `command: "echo hi"`) || !strings.Contains(after, "hi") {
		t.Fatalf("shown:\n%s\nafter: %.400q", shown, after)
	}
}
