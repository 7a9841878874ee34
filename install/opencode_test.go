package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init --agent opencode --ticket sets the shell in the user's
// opencode.json and uninstall gives back the user's bytes; a shell of the
// user's own is never replaced.
func TestOpenCodeShellRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path, backups := filepath.Join(dir, "opencode.json"), filepath.Join(dir, "backups")
	const launcher = "/opt/lg/loopguard-exec"
	orig := "{\n    \"model\": \"fake/fake-model\",\n    \"autoupdate\": false\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ApplyOpenCodeShell(path, backups, launcher, false)
	if err != nil || !res.Changed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	got, _ := os.ReadFile(path)
	if OpenCodeShell(got) != launcher || !strings.Contains(string(got), `"model": "fake/fake-model"`) {
		t.Fatalf("after apply:\n%s", got)
	}
	if res, err := ApplyOpenCodeShell(path, backups, launcher, false); err != nil || res.Changed {
		t.Fatalf("a second apply changed the file: %v %+v", err, res)
	}
	if _, err := RemoveOpenCodeShell(path, backups, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != orig {
		t.Fatalf("uninstall did not give back the user's bytes:\n%s", got)
	}
	// The user's own shell stays; control: another loopguard-exec is
	// loopguard's and is replaced.
	own := "{\"shell\": \"/usr/bin/fish\"}\n"
	if err := os.WriteFile(path, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyOpenCodeShell(path, backups, launcher, false); err == nil {
		t.Fatal("apply replaced the user's own shell")
	}
	if got, _ := os.ReadFile(path); string(got) != own {
		t.Fatalf("the refused apply changed the file:\n%s", got)
	}
	if err := os.WriteFile(path, []byte("{\"shell\": \"/old/loopguard-exec\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := ApplyOpenCodeShell(path, backups, launcher, false); err != nil || !res.Changed {
		t.Fatalf("apply over an older loopguard-exec: %v", err)
	}
	// No file: created, and deleted again.
	path2 := filepath.Join(dir, "new", "opencode.json")
	if _, err := ApplyOpenCodeShell(path2, backups, launcher, false); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveOpenCodeShell(path2, backups, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path2); !os.IsNotExist(err) {
		t.Fatalf("the file init created is still there: %v", err)
	}
}
