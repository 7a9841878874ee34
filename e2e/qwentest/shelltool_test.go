package qwentest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
	"github.com/loopguard/loopguard/shelltool"
)

// Two-phase enforcement under the real Qwen Code (issue 37, items 1 and
// 2): the user's settings exclude run_shell_command and list loopguard's
// shell tool (tools.discoveryCommand), which Qwen Code runs by spawning
// loopguard-exec (tools.callCommand); the hook, registered with --ticket,
// issues a ticket for every shell command it allows, and the wrapper runs
// nothing without one. Qwen Code does not run a hook's rewritten input,
// so the ticket is found by a nonce derived from the host process, the
// cwd and the command.

// newShellToolEnv is a project where `loopguard init --agent qwen
// --ticket` registered loopguard: the hooks with --ticket, and the user's
// settings' tools block loopguard's.
func newShellToolEnv(t *testing.T) *agenttest.Env {
	t.Helper()
	e := qwen.NewBareEnv(t)
	// Qwen Code 0.24.4 runs tools.discoveryCommand only when it discovers
	// tools before the session starts, which it does only with this set
	// (Config.initialize's skipInlineMcpDiscovery): without it there is no
	// loopguard_shell, and no shell at all.
	e.G.Extra = append(e.G.Extra, "QWEN_CODE_LEGACY_MCP_BLOCKING=1")
	out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "qwen", "--ticket", "--no-jail")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, err := os.ReadFile(e.HooksFile())
	wrapper := filepath.Join(filepath.Dir(e.G.Bin), "loopguard-exec")
	if err != nil || !strings.Contains(string(b), "--ticket") || !strings.Contains(string(b), `"callCommand": "`+wrapper+`"`) {
		t.Fatalf("init --ticket did not write the shell tool (%v):\n%s", err, b)
	}
	return e
}

func editSettings(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	m := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	edit(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func shellScript(cmds ...string) agenttest.Script {
	return agenttest.Script{Tool: shelltool.Name, Arg: "command", Commands: cmds}
}

// Control: with the real hook, a call is refused until approved; the
// approved call runs once through the wrapper (on its ticket), a changed
// call and a repeat do not.
func TestQwenShellToolApprovedCallRunsOnce(t *testing.T) {
	e := newShellToolEnv(t)
	const cmd = "echo one >> runs.txt"
	s := shellScript(cmd, "echo two >> runs.txt", cmd, cmd)
	s.Between = e.ApproveAfter(0)
	api := e.Run(s)
	agenttest.WantBlocked(t, api, 0, "no_grant")
	agenttest.WantBlocked(t, api, 1, "approved_call_changed")
	agenttest.WantRan(t, api, 2, "loopguard: ")
	agenttest.WantBlocked(t, api, 3, "approval_consumed")
	e.WantRanOnce()
}

// The must-show: the hook replaced by one that hangs past Qwen Code's
// timeout, by one that exits without output, by one that fails, by one
// whose binary is missing, and no hook at all. Qwen Code runs the call
// each time (it fails open on all of them); the wrapper finds no ticket,
// so the command does not run, and the model is told why (no_decision).
func TestQwenShellToolNoDecisionNoRun(t *testing.T) {
	for _, c := range []struct{ name, command string }{
		{"hangs", "sleep 30"},
		{"silent", "true"},
		{"fails", "exit 1"},
		{"binary missing", "/nonexistent/loopguard-hook hook qwen --event PreToolUse --mode enforce --ticket"},
		{"not registered", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newShellToolEnv(t)
			editSettings(t, e.HooksFile(), func(m map[string]any) {
				delete(m, "hooks")
				if c.command != "" {
					m["hooks"] = map[string]any{"PreToolUse": []any{map[string]any{"matcher": "",
						"hooks": []any{map[string]any{"type": "command", "command": c.command, "timeout": 1}}}}}
				}
			})
			api := e.Run(shellScript("echo ran > marker"))
			if e.Exists("marker") {
				t.Fatalf("marker exists: the call ran with no decision (hook: %q)", c.command)
			}
			agenttest.WantBlocked(t, api, 0, "no_decision")
		})
	}
}

// Qwen Code's own shell is excluded: the model's run_shell_command does
// not run, whatever the hook does (here: none at all), and a project's
// settings that empty the exclusion do not bring it back (Qwen Code
// merges tools.exclude as a union).
func TestQwenBuiltinShellExcluded(t *testing.T) {
	e := newShellToolEnv(t)
	editSettings(t, e.HooksFile(), func(m map[string]any) { delete(m, "hooks") })
	editSettings(t, filepath.Join(e.Dir, ".qwen", "settings.json"), func(m map[string]any) {
		m["tools"] = map[string]any{"exclude": []any{}}
	})
	api := e.RunAnyExit(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if e.Exists("marker") {
		t.Fatalf("marker exists: run_shell_command ran: %q", api.Output(0))
	}
	t.Logf("run_shell_command: %q", api.Output(0))
}
