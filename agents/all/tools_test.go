package all_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/hooks"
)

// host is one agent's recorded PreToolUse payload, retargeted at another
// tool, and what the agent reads from loopguard's answers.
type host struct {
	agent, event, file string
	// tool puts a tool and its input in the payload.
	tool func(m map[string]any, name string, in map[string]any)
	// deny is the shape of its deny (reason NOGO), exit denyCode; abstain
	// is the answer that lets the call go on to the host.
	deny     string
	denyCode int
	abstain  string
}

func claudeShaped(m map[string]any, name string, in map[string]any) {
	m["tool_name"], m["tool_input"] = name, in
}

const hookSpecificDeny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"NOGO"}}`

var hosts = map[string]host{
	"qwen":   {agent: "qwen", event: "PreToolUse", file: "qwen-pre-monitor.json", tool: claudeShaped, deny: hookSpecificDeny},
	"gemini": {agent: "gemini", event: "BeforeTool", file: "gemini-before-shell.json", tool: claudeShaped, deny: `{"decision":"deny","reason":"NOGO"}`},
	"codex":  {agent: "codex", event: "PreToolUse", file: "codex-pre-bash.json", tool: claudeShaped, deny: hookSpecificDeny},
	"copilot": {agent: "copilot", event: "preToolUse", file: "copilot-pre-bash.json", deny: `{"permissionDecision":"deny","permissionDecisionReason":"NOGO"}`, denyCode: 2,
		tool: func(m map[string]any, name string, in map[string]any) { m["toolName"], m["toolArgs"] = name, in }},
}

// denied is h's deny for reason.
func (h host) denied(reason string) string { return strings.ReplaceAll(h.deny, "NOGO", reason) }

// TestEveryToolDecidedPerAgent: every agent's registration reaches every
// tool (its matcher is the catch-all), so every tool its host has is
// decided. Its read-only tools (reading, listing, searching, asking, the
// session's own notes kept in memory) abstain on the engine's read-only
// fast path, as Claude Code's Read and Grep do, unless they read what the
// guard stands on (the keyrings, from the home or through a "~" the host
// expands); every tool that writes, runs anything or is not known holds
// for an exact approval, among them the memory and todo tools that write
// files, web searches (as Claude Code's WebSearch) and a tool no version
// has yet.
func TestEveryToolDecidedPerAgent(t *testing.T) {
	type row struct {
		tool string
		in   map[string]any
		want string // "abstain", "held" or a deny reason
	}
	keyring := func(h *harness) string { return filepath.Join(h.Home, ".local", "share", "keyrings", "login.keyring") }
	rows := map[string]func(h *harness) []row{
		"qwen": func(h *harness) []row {
			return []row{
				{"read_file", map[string]any{"file_path": filepath.Join(h.Project, "a.go")}, "abstain"},
				{"read_file", map[string]any{"file_path": keyring(h)}, hooks.ReasonProtected},
				{"zoom_image", map[string]any{"file_path": keyring(h), "x1": 0, "y1": 0, "x2": 1, "y2": 1}, hooks.ReasonProtected},
				{"list_directory", map[string]any{"path": h.Project}, "abstain"},
				{"list_directory", map[string]any{"path": "~/.local/share/keyrings"}, hooks.ReasonProtected},
				{"glob", map[string]any{"pattern": "**/*.go"}, "abstain"},
				{"glob", map[string]any{"pattern": ".local/share/key*/*", "path": "~"}, hooks.ReasonProtected},
				{"grep_search", map[string]any{"pattern": "x", "glob": "*.go"}, "abstain"},
				{"grep_search", map[string]any{"pattern": "x", "path": h.Home}, hooks.ReasonProtected},
				{"tool_search", map[string]any{"query": "monitor"}, "abstain"},
				{"list_agents", map[string]any{}, "abstain"},
				{"cron_list", map[string]any{}, "abstain"},
				{"task_list", map[string]any{}, "abstain"},
				{"get_goal", map[string]any{}, "abstain"},
				{"ask_user_question", map[string]any{"questions": []any{}}, "abstain"},
				{"todo_write", map[string]any{"todos": []any{}}, "held"},
				{"save_memory", map[string]any{"fact": "x"}, "held"},
				{"update_goal", map[string]any{"status": "complete", "reason": "x"}, "held"},
				{"cron_create", map[string]any{"cron": "* * * * *", "prompt": "x"}, "held"},
				{"exec", map[string]any{"code": "1"}, "held"},
				{"skill", map[string]any{"skill": "review"}, "held"},
				{"web_search", map[string]any{"query": "x"}, "held"},
				{"a_future_tool", map[string]any{"x": "y"}, "held"},
			}
		},
		"gemini": func(h *harness) []row {
			return []row{
				{"read_file", map[string]any{"file_path": "a.go"}, "abstain"},
				{"read_file", map[string]any{"file_path": keyring(h)}, hooks.ReasonProtected},
				{"list_directory", map[string]any{"dir_path": "."}, "abstain"},
				{"list_directory", map[string]any{"dir_path": filepath.Dir(keyring(h))}, hooks.ReasonProtected},
				{"glob", map[string]any{"pattern": "*.go"}, "abstain"},
				{"glob", map[string]any{"pattern": ".local/share/key*/*", "dir_path": h.Home}, hooks.ReasonProtected},
				// The host's own field decides, not one it ignores.
				{"glob", map[string]any{"pattern": ".local/share/key*/*", "dir_path": h.Home, "path": h.Project}, hooks.ReasonProtected},
				{"grep_search", map[string]any{"pattern": "x", "include_pattern": "*.go"}, "abstain"},
				{"grep_search", map[string]any{"pattern": "x", "dir_path": h.Home}, hooks.ReasonProtected},
				{"update_topic", map[string]any{"title": "t", "summary": "s"}, "abstain"},
				{"write_todos", map[string]any{"todos": []any{}}, "abstain"},
				{"ask_user", map[string]any{"questions": []any{}}, "abstain"},
				{"list_background_processes", map[string]any{}, "abstain"},
				{"read_background_output", map[string]any{"pid": 1}, "abstain"},
				{"google_web_search", map[string]any{"query": "x"}, "held"},
				{"save_memory", map[string]any{"fact": "x"}, "held"},
				{"enter_plan_mode", map[string]any{"reason": "x"}, "held"},
				{"activate_skill", map[string]any{"name": "x"}, "held"},
				{"invoke_agent", map[string]any{"agent_name": "generalist", "prompt": "x"}, "held"},
				{"a_future_tool", map[string]any{"x": "y"}, "held"},
			}
		},
		"codex": func(h *harness) []row {
			return []row{
				{"view_image", map[string]any{"path": filepath.Join(h.Project, "a.png")}, "abstain"},
				{"view_image", map[string]any{"path": keyring(h)}, hooks.ReasonProtected},
				{"get_goal", map[string]any{}, "abstain"},
				{"update_plan", map[string]any{"plan": []any{}}, "abstain"},
				{"request_user_input", map[string]any{"questions": []any{}}, "abstain"},
				{"create_goal", map[string]any{"objective": "x"}, "held"},
				{"update_goal", map[string]any{"status": "complete"}, "held"},
				{"spawn_agent", map[string]any{"message": "x"}, "held"},
				{"a_future_tool", map[string]any{"x": "y"}, "held"},
			}
		},
		"copilot": func(h *harness) []row {
			return []row{
				{"glob", map[string]any{"pattern": "*.go"}, "abstain"},
				{"glob", map[string]any{"pattern": "*.go", "paths": []any{h.Project}}, "abstain"},
				{"glob", map[string]any{"pattern": ".local/share/key*/*", "paths": []any{h.Home}}, hooks.ReasonProtected},
				{"rg", map[string]any{"pattern": "x", "glob": "*.go"}, "abstain"},
				{"rg", map[string]any{"pattern": "x", "paths": []any{h.Home}}, hooks.ReasonProtected},
				// Several directories are not one the engine can judge.
				{"rg", map[string]any{"pattern": "x", "paths": []any{h.Project, h.Project}}, "held"},
				{"list_bash", map[string]any{}, "abstain"},
				{"read_bash", map[string]any{"shellId": "1"}, "abstain"},
				{"list_agents", map[string]any{}, "abstain"},
				{"read_agent", map[string]any{"agent_id": "a"}, "abstain"},
				{"report_intent", map[string]any{"intent": "x"}, "abstain"},
				{"sql", map[string]any{"query": "select 1", "description": "x"}, "held"},
				{"session_store_sql", map[string]any{"query": "select 1", "description": "x"}, "held"},
				{"task", map[string]any{"prompt": "x", "description": "y", "agent_type": "explore"}, "held"},
				{"write_bash", map[string]any{"shellId": "1", "input": "rm -rf ~\n"}, "held"},
				{"stop_bash", map[string]any{"shellId": "1"}, "held"},
				{"a_future_tool", map[string]any{"x": "y"}, "held"},
			}
		},
	}
	for name, hs := range hosts {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			base := h.payload(hs.file)
			for _, r := range rows[name](h) {
				p := edit(t, base, func(m map[string]any) { hs.tool(m, r.tool, r.in) })
				before := len(h.auditReasons())
				got := h.run(hs.agent, hs.event, p)
				what := name + " " + r.tool + " " + strings.Join(strings.Fields(strings.TrimSpace(string(edit(t, []byte("{}"), func(m map[string]any) { m["in"] = r.in })))), "")
				switch r.want {
				case "abstain":
					shape(t, what, got, 0, hs.abstain)
					if n := len(h.auditReasons()); n != before {
						t.Errorf("%s: the read-only fast path wrote %d audit entries", what, n-before)
					}
				case "held":
					shape(t, what, got, hs.denyCode, hs.denied(hooks.ReasonNoGrant))
				default:
					shape(t, what, got, hs.denyCode, hs.denied(r.want))
				}
			}
		})
	}
}

// TestQwenMonitorIsBash: Qwen Code's monitor (a background shell, found
// through tool_search; the attack ran `echo pwned > $HOME/pwned.txt` in it
// with no decision) is decided as its run_shell_command is, the same input
// answered the same way: held without a grant, recorded as Bash; run where
// a grant covers its plain text (Qwen Code runs the model's own text), and
// refused as not_canonical where the text is not plain. A monitor command
// with a shell in it is refused: Qwen Code rewrites such a command before
// it runs it.
func TestQwenMonitorIsBash(t *testing.T) {
	h := newHarness(t)
	h.named = true
	h.grantAny("Bash(ls *)")
	if err := os.Mkdir(filepath.Join(h.Project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	call := func(tool, cmd string, more map[string]any) answer {
		return h.run("qwen", "PreToolUse", edit(t, h.payload("qwen-pre-monitor.json"), func(m map[string]any) {
			in := map[string]any{"command": cmd, "description": "watch"}
			for k, v := range more {
				in[k] = v
			}
			m["tool_name"], m["tool_input"] = tool, in
		}))
	}
	for _, c := range []struct {
		cmd  string
		more map[string]any
		want string
	}{
		{"echo pwned > $HOME/pwned.txt; echo done", nil, "chained_command"},
		{"echo pwned", nil, "no_grant"},
		{"ls -la", nil, "allow"},
		{"ls -la", map[string]any{"directory": filepath.Join(h.Project, "sub")}, "allow"},
		{"ls $'-la'", nil, "not_canonical"},
		{"ls -la ~/.local/share/keyrings", nil, "protected_resource"},
	} {
		var answers []string
		for _, tool := range []string{"monitor", "run_shell_command"} {
			got := call(tool, c.cmd, c.more)
			if !strings.Contains(got.stdout, c.want) || got.code != 0 {
				t.Errorf("%s %q %v: %+v, want %s", tool, c.cmd, c.more, got, c.want)
			}
			answers = append(answers, reasons(decodeJSON(t, got.stdout)).(map[string]any)["hookSpecificOutput"].(map[string]any)["permissionDecision"].(string))
			if es := h.entries(); len(es) == 0 || es[len(es)-1].Tool != "Bash" {
				t.Errorf("%s %q: the audit log does not record it as Bash", tool, c.cmd)
			}
		}
		if answers[0] != answers[1] {
			t.Errorf("%q: monitor %s, run_shell_command %s", c.cmd, answers[0], answers[1])
		}
	}
	for _, cmd := range []string{"bash -c 'echo hi'", "FOO=1 /bin/sh -c 'id'", "true\n'/usr/bin/BASH.exe' -x", "tail -f log | xargs zsh"} {
		if got := call("monitor", cmd, nil); !strings.Contains(got.stdout, "malformed_input") || !strings.Contains(got.stdout, "without the shell") {
			t.Errorf("monitor %q: %+v, want it refused", cmd, got)
		}
	}
	// Controls: a word that only contains a shell's name is not one.
	for _, cmd := range []string{"tail -f bash.log", "ls ./sh.d", "echo ssh"} {
		if got := call("monitor", cmd, nil); strings.Contains(got.stdout, "malformed_input") {
			t.Errorf("monitor %q: %+v, refused as naming a shell", cmd, got)
		}
	}
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestReadOnlyAfterTheCall: a read-only tool's after-call event (every
// registration has one now, for every tool) has nothing to check, since
// nothing was allowed, and writes nothing, as its before-call fast path;
// the control, a Bash call's, is recorded.
func TestReadOnlyAfterTheCall(t *testing.T) {
	h := newHarness(t)
	read := map[string]any{"file_path": filepath.Join(h.Project, "a.go")}
	for _, c := range []struct {
		agent, event string
		payload      []byte
	}{
		{"", "", h.claude("PostToolUse", "Read", read, "toolu_r")},
		{"qwen", "PostToolUse", edit(t, h.payload("qwen-pre-monitor.json"), func(m map[string]any) {
			m["hook_event_name"], m["tool_name"], m["tool_input"], m["tool_response"] = "PostToolUse", "read_file", read, "x"
		})},
		{"gemini", "AfterTool", edit(t, h.payload("gemini-after-shell.json"), func(m map[string]any) {
			m["tool_name"], m["tool_input"] = "grep_search", map[string]any{"pattern": "x"}
		})},
	} {
		got := h.run(c.agent, c.event, c.payload)
		if got.code != 0 || got.stdout != "" || len(h.auditReasons()) != 0 {
			t.Errorf("%s %s: %+v, audit %v; want nothing", c.agent, c.event, got, h.auditReasons())
		}
	}
	h.run("", "", h.claude("PostToolUse", "Bash", map[string]any{"command": "ls"}, "toolu_b"))
	if r := h.auditReasons(); len(r) != 1 || r[0] != hooks.ReasonNotGuarded {
		t.Errorf("control, Bash after the call: audit %v", r)
	}
}
