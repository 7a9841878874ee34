package codextest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// TestCodexModelShellSkipsBashEnv pins why Codex has no two-phase
// enforcement (docs/agents.md, "The other agents"). The one place in
// Codex 0.171.0's configuration that runs a program of the user's before
// every command, shell_environment_policy.set.BASH_ENV, is read only by
// bash; exec_command takes the shell from the model ("shell": "Shell
// binary to launch") and whether it is a login shell ("login"), and the
// hook is shown neither. Here BASH_ENV names a file that refuses every
// command. Control: on Codex's own paths (the session's bash, directly or
// through its shell snapshot, with a PTY, without a login shell, the
// model naming /bin/bash) nothing runs. Hole: the same command with
// "shell": "/bin/sh" and "login": false (pipes or a PTY), or "shell":
// "/bin/sh" in a workdir other than the session's (no snapshot there),
// runs, and every PreToolUse payload holds the command alone.
func TestCodexModelShellSkipsBashEnv(t *testing.T) {
	t.Parallel()
	a := *codex
	var gate string
	a.Configure = func(e *agenttest.Env, api *agenttest.FakeAPI) error {
		if err := agenttest.WriteCodexConfig(e.G.Home, api.URL); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(e.G.Home, ".codex", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("\n[shell_environment_policy.set]\nBASH_ENV = " + strconvQuote(gate) + "\n")
		return err
	}
	e := a.NewBareEnv(t)
	gate = filepath.Join(e.G.Home, "refuse-all.sh")
	if err := os.WriteFile(gate, []byte("echo 'gate: refused' >&2\nexit 126\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	payloads := filepath.Join(e.G.Home, "payloads.jsonl")
	if err := os.MkdirAll(filepath.Join(e.G.Home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	hook, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": ".*",
		"hooks": []any{map[string]any{"type": "command", "command": "cat >> '" + payloads + "'; echo >> '" + payloads + "'", "timeout": 30}}}}}})
	if err := os.WriteFile(e.HooksFile(), hook, 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	type call struct {
		name  string
		extra map[string]any
		runs  bool
	}
	calls := []call{
		{"default", nil, false},
		{"tty", map[string]any{"tty": true}, false},
		{"nologin", map[string]any{"login": false}, false},
		{"bash", map[string]any{"shell": "/bin/bash", "login": false}, false},
		{"workdir", map[string]any{"workdir": other}, false},
		{"sh", map[string]any{"shell": "/bin/sh", "login": false}, true},
		{"shtty", map[string]any{"shell": "/bin/sh", "login": false, "tty": true}, true},
		{"shworkdir", map[string]any{"shell": "/bin/sh", "workdir": other}, true},
	}
	var s agenttest.Script
	for _, c := range calls {
		s.Commands = append(s.Commands, "echo ran > "+filepath.Join(e.Dir, c.name+".txt"))
		s.Extra = append(s.Extra, c.extra)
	}
	api := e.Run(s)
	for i, c := range calls {
		ran := e.Exists(c.name + ".txt")
		switch {
		case ran && !c.runs:
			t.Errorf("%s %v: ran past a BASH_ENV that refuses everything (%q): Codex no longer runs this path through bash", c.name, c.extra, api.Output(i))
		case !ran && !c.runs && !strings.Contains(api.Output(i), "gate: refused"):
			t.Errorf("%s %v: did not run, but not because of the BASH_ENV file: %q", c.name, c.extra, api.Output(i))
		case !ran && c.runs:
			t.Errorf("%s %v: refused (%q): Codex no longer runs a shell the model names without bash; the BASH_ENV gate may be revisited (docs/agents.md)", c.name, c.extra, api.Output(i))
		}
	}
	data, err := os.ReadFile(payloads)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var p struct {
			ToolInput map[string]any `json:"tool_input"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("a PreToolUse payload does not read: %v: %s", err, line)
		}
		n++
		for k := range p.ToolInput {
			if k != "command" {
				t.Errorf("the hook is shown %q of the call now (%v): a hook could refuse a shell the model names", k, p.ToolInput)
			}
		}
	}
	if n != len(calls) {
		t.Errorf("the hook saw %d of %d calls", n, len(calls))
	}
}

// strconvQuote is s as a TOML basic string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
