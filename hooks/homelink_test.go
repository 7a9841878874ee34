package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFileToolsAtTheHomesRealPath: a home reached through a link
// (/home/u -> /var/home/u) keeps its secrets at its real path too: before,
// a Read of /var/home/u/.ssh/id_rsa and a Grep of /var/home/u ran as any
// read outside the project.
func TestFileToolsAtTheHomesRealPath(t *testing.T) {
	h := newHarness(t)
	read := h.fixture("pretooluse-read.json")
	home := h.eng().Env.Home
	real := home + "-real"
	for _, d := range []string{filepath.Join(real, ".ssh"), filepath.Join(real, ".local", "share", "keyrings"), filepath.Join(real, "notes")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.RemoveAll(home)
	if err := os.Symlink(real, home); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".ssh/id_rsa", ".local/share/keyrings/login.keyring", "notes/todo.md"} {
		_ = os.WriteFile(filepath.Join(real, f), []byte("x\n"), 0o600)
	}
	tool := func(name string, in map[string]any) map[string]any {
		return with(read, func(m map[string]any) { m["tool_name"] = name; m["tool_input"] = in })
	}
	for _, at := range []string{home, real} {
		expect(t, "Read the key at "+at, h.decide(tool("Read", map[string]any{"file_path": filepath.Join(at, ".ssh", "id_rsa")})), Deny, ReasonProtected)
		expect(t, "Read the keyring at "+at, h.decide(tool("Read", map[string]any{"file_path": filepath.Join(at, ".local", "share", "keyrings", "login.keyring")})), Deny, ReasonProtected)
		expect(t, "Grep "+at, h.decide(tool("Grep", map[string]any{"pattern": "PRIVATE", "path": at})), Deny, ReasonProtected)
		expect(t, "Glob the keys at "+at, h.decide(tool("Glob", map[string]any{"pattern": ".ssh/*", "path": at})), Deny, ReasonProtected)
		expect(t, "Read notes at "+at+" (control)", h.decide(tool("Read", map[string]any{"file_path": filepath.Join(at, "notes", "todo.md")})), Abstain, ReasonReadOnly)
	}
	expect(t, "Grep the directory above the real home", h.decide(tool("Grep", map[string]any{"pattern": "PRIVATE", "path": filepath.Dir(real)})), Deny, ReasonProtected)
}
