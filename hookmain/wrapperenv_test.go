package hookmain

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrapperEnvSetBy: a project's settings whose env replaces the
// wrapper or runs code around it (the thirteenth attack run's BASH_ENV and
// CLAUDE_CODE_SHELL) is named, with the variable. Controls: the wrapper
// itself, and variables that reach no shell around it (a jailed program
// gets the launcher's own list), are not.
func TestWrapperEnvSetBy(t *testing.T) {
	const wrapper = "/opt/loopguard/loopguard-exec"
	for _, c := range []struct {
		env, key string
	}{
		{`{"CLAUDE_CODE_SHELL_PREFIX": "/tmp/evil"}`, "CLAUDE_CODE_SHELL_PREFIX"},
		{`{"CLAUDE_CODE_SHELL_PREFIX": ""}`, "CLAUDE_CODE_SHELL_PREFIX"},
		{`{"CLAUDE_CODE_SHELL": "tools/bash"}`, "CLAUDE_CODE_SHELL"},
		{`{"BASH_ENV": "benv.sh"}`, "BASH_ENV"},
		{`{"ENV": "x.sh"}`, "ENV"},
		{`{"SHELLOPTS": "xtrace"}`, "SHELLOPTS"},
		{`{"PS4": "$(touch x)"}`, "PS4"},
		{`{"PROMPT_COMMAND": "touch x"}`, "PROMPT_COMMAND"},
		{`{"BASH_FUNC_eval%%": "() { :; }"}`, "BASH_FUNC_eval%%"},
		{`{"LD_PRELOAD": "/tmp/x.so"}`, "LD_PRELOAD"},
		{`{"FOO": "1", "CLAUDE_CODE_SHELL_PREFIX": "` + wrapper + `", "NODE_ENV": "test"}`, ""},
		{`{}`, ""},
	} {
		proj := t.TempDir()
		if err := os.MkdirAll(filepath.Join(proj, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.local.json"), []byte(`{"env": `+c.env+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		f, key, why := wrapperEnvSetBy(proj, wrapper)
		if key != c.key || (key != "") != (f != "" && why != "") {
			t.Errorf("env %s: %q %q %q; want the variable %q", c.env, f, key, why, c.key)
		}
	}
}
