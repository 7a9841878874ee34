package geminitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// Gemini CLI 0.61.0 runs no hook of its settings in a folder it does not
// trust, the user's own ~/.gemini/settings.json included: an interactive
// session there runs every call with no hook. doctor --agent gemini fails
// there, with the step that trusts the folder. Headless, Gemini refuses to
// start in such a folder (exit 55), so the call does not run. Control:
// once the folder is trusted as Gemini records it (trustedFolders.json,
// TRUST_FOLDER), doctor passes and the same call is refused by the hook.
func TestGeminiUntrustedFolderFailsDoctor(t *testing.T) {
	asInstalled := *gemini
	asInstalled.Start = agenttest.Run.GeminiAsInstalled
	e := asInstalled.NewEnv(t)
	out, err := e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "gemini")
	if err == nil || !strings.Contains(out, "Gemini does not trust") || !strings.Contains(out, `"Do you trust the files in this folder?"`) {
		t.Errorf("doctor in an untrusted folder (%v):\n%s", err, out)
	}
	r := agenttest.Run{Bin: e.Client, API: agenttest.NewGeminiAPI(t, agenttest.Script{Commands: []string{"echo one >> runs.txt"}}),
		Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv()}
	res, err := r.GeminiAsInstalled(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 55 || !strings.Contains(string(res.Stderr), "not running in a trusted directory") || e.Exists("runs.txt") {
		t.Errorf("gemini -p in an untrusted folder: exit %d, ran: %v\n%s", res.ExitCode, e.Exists("runs.txt"), res.Stderr)
	}

	// Control: trusted as Gemini records it.
	trust := "{\n  \"" + e.Dir + "\": \"TRUST_FOLDER\"\n}"
	if err := os.WriteFile(filepath.Join(e.G.Home, ".gemini", "trustedFolders.json"), []byte(trust), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "gemini")
	if strings.Contains(out, "does not trust") || !strings.Contains(out, "Gemini trusts") {
		t.Errorf("doctor in a trusted folder (%v):\n%s", err, out)
	}
	api := e.Run(agenttest.Script{Commands: []string{"echo one >> runs.txt"}})
	agenttest.WantBlocked(t, api, 0, "no_grant")
	if e.Exists("runs.txt") {
		t.Error("the call ran in a trusted folder without an approval")
	}
}
