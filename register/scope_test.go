package register_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents/codex"
	"github.com/loopguard/loopguard/agents/copilot"
	"github.com/loopguard/loopguard/register"
)

// Copilot's registrations name their file (--scope), which the hook reads
// back to tell the user's registration from the repository's; an agent
// whose hooks are not Scoped writes no scope (Codex: its trust hashes
// stay as they were).
func TestScopeNamesTheRegistration(t *testing.T) {
	for _, scope := range []string{register.ScopeUser, register.ScopeProject} {
		cmd := register.Options{Binary: "/opt/lg/loopguard", Scope: scope}.Command(copilot.Name, copilot.PreToolUse, "")
		cmd.Scope = scope
		c, err := register.ParseShell(cmd.String(), "")
		if err != nil || c.Scope != scope {
			t.Errorf("%s: read back %+v, %v", cmd, c, err)
		}
	}
	user := copilotLines(t, register.ScopeUser)
	project := copilotLines(t, register.ScopeProject)
	for i := range user {
		if !strings.HasSuffix(user[i], " --scope user") || !strings.HasSuffix(project[i], " --scope project") {
			t.Errorf("copilot's lines do not name their file: %q, %q", user[i], project[i])
		}
	}
	// Control: Codex's lines are as before.
	for _, e := range codex.Registration.File(register.Options{Binary: "/opt/lg/loopguard", Scope: register.ScopeProject}).Entries {
		if s := marshal(t, e.Handler); strings.Contains(s, "--scope") {
			t.Errorf("codex's line names a scope: %s", s)
		}
	}
	if _, err := register.ParseArgs([]string{"copilot", "--event", "preToolUse", "--scope", "team"}); err == nil {
		t.Error("--scope team was accepted")
	}
}

func copilotLines(t *testing.T, scope string) []string {
	t.Helper()
	var out []string
	for _, e := range copilot.Registration.File(register.Options{Binary: "/opt/lg/loopguard", Scope: scope}).Entries {
		var h struct {
			Bash string `json:"bash"`
		}
		unmarshal(t, marshal(t, e.Handler), &h)
		c, err := register.ParseShell(h.Bash, "")
		if err != nil || c.Scope != scope {
			t.Errorf("%q read back as %+v, %v", h.Bash, c, err)
		}
		out = append(out, h.Bash)
	}
	return out
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func unmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
