package all_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodexApprovalRunsInBash: Codex's exec_command runs its cmd with the
// shell the model names ("shell":"/bin/sh", "login":false), which the hook
// does not see; loopguard analyses bash. The ninety-second attack run's
// F2: `: $'\'⏎id > pwned.txt⏎#'` is one `:` to bash, and runs id under
// dash. An exactly approved call is answered with the command pinned to
// bash, which /bin/sh then runs as bash would; an ordinary command's
// output is unchanged (the control).
func TestCodexApprovalRunsInBash(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct{ cmd, out string }{
		{cmd: ": $'\\'\nid > pwned.txt\n#'"},
		{cmd: "echo hi; printf '%s\\n' \"a b\" $'c\\td'", out: "hi\na b\nc\td\n"},
	} {
		h := newHarness(t)
		p := edit(t, h.payload("codex-pre-bash.json"), func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = tc.cmd })
		h.approve(h.run("codex", "PreToolUse", p))
		got := h.run("codex", "PreToolUse", p)
		var out struct {
			HSO struct {
				Decision     string         `json:"permissionDecision"`
				UpdatedInput map[string]any `json:"updatedInput"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(got.stdout), &out); err != nil || out.HSO.Decision != "allow" {
			t.Fatalf("%q approved: %+v, want an allow with the command to run", tc.cmd, got)
		}
		run, _ := out.HSO.UpdatedInput["command"].(string)
		dir := t.TempDir()
		c := exec.Command(sh, "-c", run)
		c.Dir = dir
		b, err := c.Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", run, err)
		}
		if string(b) != tc.out {
			t.Errorf("sh -c %q: %q, want %q", run, b, tc.out)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned.txt")); err == nil || strings.Contains(string(b), "uid=") {
			t.Errorf("sh -c %q ran id", run)
		}
	}
}
