package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestJailFilesVersionFile: with init's defaults, a Write or an Edit
// that leaves a version file mise reads (.nvmrc, .python-version)
// holding path:, ref: or a path is decided as executable configuration
// (the ninety-third attack run's .python-version of path:$PWD/build/py
// made python3 its script on the user's next cd). Controls: one holding
// a version, or nvm's lts/iron, is written.
func TestJailFilesVersionFile(t *testing.T) {
	h, _ := jailHarness(t)
	nvmrc := filepath.Join(h.Project, ".nvmrc")
	if err := os.WriteFile(nvmrc, []byte("20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(rel, content string) map[string]any {
		return withInput(h.writeCall(filepath.Join(h.Project, rel)), "content", content)
	}
	edit := func(old, repl string) map[string]any {
		return with(h.fixture("pretooluse-edit.json"), func(m map[string]any) {
			m["tool_input"] = map[string]any{"file_path": nvmrc, "old_string": old, "new_string": repl}
		})
	}
	expect(t, "Write .python-version path:", h.decide(write(".python-version", "path:"+h.Project+"/build/py\n")), Deny, ReasonExecConfig)
	expect(t, "Write .node-version ref:", h.decide(write(".node-version", "ref:main\n")), Deny, ReasonExecConfig)
	expect(t, "Write sub/.ruby-version a path", h.decide(write("sub/.ruby-version", "../build/rb\n")), Deny, ReasonExecConfig)
	expect(t, "Edit .nvmrc to path:", h.decide(edit("20", "path:/tmp/nd")), Deny, ReasonExecConfig)
	expect(t, "control: Edit .nvmrc to 22", h.decide(edit("20", "22")), Allow, ReasonScopedGrant)
	expect(t, "control: Write .python-version 3.12.1", h.decide(write(".python-version", "3.12.1\n")), Allow, ReasonScopedGrant)
	expect(t, "control: Write .nvmrc lts/iron", h.decide(write(".nvmrc", "lts/iron\n")), Allow, ReasonScopedGrant)
}
