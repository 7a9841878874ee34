package copilottest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// Copilot runs a repository's registration (.github/hooks/loopguard.json)
// only in a folder the user trusts, and ignores it silently elsewhere: the
// call runs with no hook. doctor --agent copilot fails there, with the
// step that trusts the folder. Control: once the folder is trusted as
// Copilot records it (config.json, "trustedFolders", under its comment
// header, as 1.0.102 writes it), doctor passes and the same call is
// refused by the hook.
func TestCopilotUntrustedFolderFailsDoctor(t *testing.T) {
	e := copilot.NewBareEnv(t)
	if out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "copilot", "--project", "--no-jail"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "copilot")
	if err == nil || !strings.Contains(out, "does not trust") || !strings.Contains(out, "Yes, and remember this folder for future sessions") {
		t.Errorf("doctor in an untrusted folder (%v):\n%s", err, out)
	}
	// What doctor warns of: the call runs, loopguard never asked.
	api := e.RunAnyExit(agenttest.Script{Commands: []string{"echo one >> runs.txt"}})
	if !e.Exists("runs.txt") {
		t.Errorf("Copilot did not run the call in an untrusted folder (%q): it reads the repository's hooks there after all", api.Output(0))
	}
	if err := os.Remove(filepath.Join(e.Dir, "runs.txt")); err != nil {
		t.Fatal(err)
	}

	// Control: trusted as Copilot records it.
	cfg := "// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"trustedFolders\": [\n    \"" + e.Dir + "\"\n  ]\n}\n"
	if err := os.MkdirAll(filepath.Join(e.G.Home, ".copilot"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.G.Home, ".copilot", "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "copilot")
	if strings.Contains(out, "does not trust") || !strings.Contains(out, "Copilot trusts") {
		t.Errorf("doctor in a trusted folder (%v):\n%s", err, out)
	}
	api = e.Run(agenttest.Script{Commands: []string{"echo one >> runs.txt"}})
	agenttest.WantBlocked(t, api, 0, "no_grant")
	if e.Exists("runs.txt") {
		t.Error("the call ran in a trusted folder without an approval")
	}
}
