package qwentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// monitorCalls is a Script that asks for a run_shell_command, then Qwen
// Code's monitor (its background shell, a deferred tool: the model finds
// it with tool_search), called directly and through the tool_call bridge,
// each with one of cmds.
func monitorCalls(cmds [3]string) agenttest.Script {
	return agenttest.Script{
		Tools:    []string{"run_shell_command", "monitor", "tool_call"},
		Keys:     []string{"", "", "name"},
		Commands: []string{cmds[0], cmds[1], "monitor"},
		Extra: []map[string]any{nil, {"description": "watch"},
			{"arguments": map[string]any{"command": cmds[2], "description": "watch"}}},
	}
}

// appeared waits for a background command's file: the monitor runs its
// command after the call returns.
func appeared(path string) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// TestQwenMonitorIsDecided: the eighty-ninth attack run. Under the default
// `init --agent qwen`, Qwen Code 0.24.4's monitor ran `echo pwned >
// $HOME/pwned.txt` with no decision of loopguard's: its registration was a
// list of tool names without monitor. Registered for every tool, and with
// monitor decided as Bash, the same call is held, called directly and
// through tool_call, as the run_shell_command control is, and nothing is
// written; so is a monitor command with a shell in it, which Qwen Code
// would rewrite before it ran it.
func TestQwenMonitorIsDecided(t *testing.T) {
	e := qwen.NewEnv(t)
	s := monitorCalls([3]string{"echo ctl > $HOME/ctl.txt", "echo pwned > $HOME/pwned.txt; echo done", "echo pwned > $HOME/bridged.txt; echo done"})
	s.Tools = append(s.Tools, "monitor")
	s.Commands = append(s.Commands, "bash -c 'echo pwned > $HOME/wrapped.txt'")
	s.Extra = append(s.Extra, map[string]any{"description": "watch"})
	api := e.RunAnyExit(s)
	for i, reason := range []string{"indirect_command", "chained_command", "chained_command", "malformed_input"} {
		agenttest.WantBlocked(t, api, i, reason)
	}
	// What a monitor runs, it runs after the call returned: the control
	// below sees a monitor's mkdir land within a second.
	time.Sleep(3 * time.Second)
	for _, f := range []string{"ctl.txt", "pwned.txt", "bridged.txt", "wrapped.txt"} {
		if _, err := os.Stat(filepath.Join(e.G.Home, f)); err == nil {
			t.Errorf("%s was written: a call ran that loopguard held", f)
		}
	}
	out, err := e.G.Run(e.Ctx, e.Dir, "audit", "--json", "-n", "0")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, `"tool":"Bash","digest"`); n < 3 {
		t.Errorf("%d Bash decisions in the audit log, want one for each of the 3 shell calls:\n%s", n, out)
	}
}

// TestQwenMonitorRunsUnderAGrant: the control of the test above. Under a
// grant of mkdir, the monitor runs a mkdir as run_shell_command does,
// called directly and through tool_call (Qwen Code runs the model's own
// text, so a plain one), and a text that is not plain is refused
// (not_canonical) and does not run.
func TestQwenMonitorRunsUnderAGrant(t *testing.T) {
	e := qwen.NewEnv(t)
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(mkdir *)"); err != nil {
		t.Fatal(err)
	}
	s := monitorCalls([3]string{"mkdir viashell", "mkdir viamonitor", "mkdir viatoolcall"})
	s.Tools = append(s.Tools, "monitor")
	s.Commands = append(s.Commands, "mkdir $'quoted'")
	s.Extra = append(s.Extra, map[string]any{"description": "watch"})
	api := e.RunAnyExit(s)
	for i, d := range []string{"viashell", "viamonitor", "viatoolcall"} {
		if !appeared(filepath.Join(e.Dir, d)) {
			t.Errorf("mkdir %s under the grant did not run; the client reported %q", d, api.Output(i))
		}
	}
	agenttest.WantBlocked(t, api, 3, "not_canonical")
	if _, err := os.Stat(filepath.Join(e.Dir, "quoted")); err == nil {
		t.Error("mkdir $'quoted' ran in the monitor under the grant: Qwen Code runs the text the model wrote, which no scope was checked against")
	}
}
