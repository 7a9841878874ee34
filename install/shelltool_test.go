package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init --agent gemini --ticket writes the shell tool's settings beside the
// hooks; uninstall gives the original bytes back. A call command of the
// user's own is never replaced.
func TestShellToolSettingsRoundTrip(t *testing.T) {
	const bin = "/opt/lg/loopguard-hook"
	const launcher = "/opt/lg/loopguard-exec"
	f := agentFiles(bin)["nested"]
	orig := "{\n    \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n    \"tools\": {\"exclude\": [\"web_fetch\"]}\n}\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	backups := filepath.Join(dir, "backups")
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ApplyAgentShellTool(path, backups, f, launcher, false)
	if err != nil || !res.Changed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	got, _ := os.ReadFile(path)
	if !HasShellTool(got, launcher) || !RegistersAgent(got, f) || !strings.Contains(string(got), `"web_fetch"`) {
		t.Fatalf("after apply:\n%s", got)
	}
	if HasShellTool(got, "/elsewhere/loopguard-exec") {
		t.Error("HasShellTool accepts another launcher")
	}
	// Idempotent.
	if res, err := ApplyAgentShellTool(path, backups, f, launcher, false); err != nil || res.Changed {
		t.Fatalf("second apply changed the file: %v", err)
	}
	if _, err := RemoveAgentShellTool(path, backups, f, false); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if !bytes.Equal(got, []byte(orig)) {
		t.Errorf("after remove:\n%s\nwant the original:\n%s", got, orig)
	}

	// A call command of the user's own is refused, the file unchanged.
	own := `{"tools": {"callCommand": "/home/u/bin/tools"}}`
	if err := os.WriteFile(path, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyAgentShellTool(path, backups, f, launcher, false); err == nil || !strings.Contains(err.Error(), "tools.callCommand") {
		t.Errorf("apply over the user's call command: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != own {
		t.Errorf("the file changed: %s", got)
	}
	// Control: remove leaves a call command that is not loopguard's.
	if out, changed, err := removeFrom([]byte(own), func(r *node) (bool, error) { return unmergeShellTool(r), nil }); err != nil || changed || string(out) != own {
		t.Errorf("remove touched the user's call command: %s %v %v", out, changed, err)
	}
}
