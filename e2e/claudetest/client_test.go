package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run the real client (Version) against the fake API. They pin
// the client behaviour the guard relies on.

// denyJSON is what the sleeping hooks would answer if the client waited for
// them: a "timeout fails open" run that was denied was not timed out.
const denyJSON = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"the client waited for a timed-out hook"}}`

const allowJSON = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allowed by test hook"}}`

const allowPermissionJSON = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	return exe
}

// project makes a project folder whose settings register hooks for events.
func project(t *testing.T, events map[string][]MatcherGroup) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteSettings(dir, HooksJSON(events)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func preToolUse(h ...Hook) map[string][]MatcherGroup {
	return map[string][]MatcherGroup{"PreToolUse": {{Matcher: "*", Hooks: h}}}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func bashCall(id, command string) ToolCall {
	return Call(id, "Bash", map[string]any{"command": command, "description": "test command"})
}

func mustResult(t *testing.T, api *FakeAPI, id string) ToolResult {
	t.Helper()
	r, ok := api.ToolResult(id)
	if !ok {
		t.Fatalf("no tool_result for %s; requests: %d; tool results: %+v", id, len(api.Requests()), api.ToolResults())
	}
	return r
}

func TestHookAllowRunsCommand(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	rec := t.TempDir()
	dir := project(t, preToolUse(FakeHook(testExe(t), "-record", rec, "-stdout", allowJSON)))
	api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_allow1", "echo hi > marker")), Text("finished")}})
	res := Run(t, Options{Claude: claude, API: api, Dir: dir})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "marker")); err != nil || string(b) != "hi\n" {
		t.Fatalf("marker = %q, %v; want \"hi\\n\"", b, err)
	}
	r := mustResult(t, api, "toolu_allow1")
	if r.IsError {
		t.Errorf("tool_result is an error: %q", r.Content)
	}
	recs, err := ReadRecorded(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Event != "PreToolUse" || recs[0].Tool != "Bash" {
		t.Fatalf("recorded %d payloads, want one PreToolUse Bash: %+v", len(recs), recs)
	}
	var p struct {
		ToolUseID string `json:"tool_use_id"`
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
		Cwd string `json:"cwd"`
	}
	if err := json.Unmarshal(recs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.ToolUseID != "toolu_allow1" || p.ToolInput.Command != "echo hi > marker" || p.Cwd != dir {
		t.Errorf("payload = %+v; want tool_use_id toolu_allow1, the command, cwd %s", p, dir)
	}
	if main, _ := api.Remaining(); main != 0 {
		t.Errorf("%d scripted turns unused", main)
	}
}

func TestHookDenyBlocksCommand(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	const reason = "denied by test hook 7f3a"
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}}`
	dir := project(t, preToolUse(FakeHook(testExe(t), "-stdout", deny, "-exit", "2")))
	api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_deny1", "echo hi > marker"))}})
	res := Run(t, Options{Claude: claude, API: api, Dir: dir})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	if exists(filepath.Join(dir, "marker")) {
		t.Fatal("marker exists: the denied command ran")
	}
	r := mustResult(t, api, "toolu_deny1")
	if !r.IsError || !strings.Contains(r.Content, reason) {
		t.Errorf("tool_result = %+v; want an error carrying %q", r, reason)
	}
}

// Without a hook decision and without an allow rule, -p denies a call that
// would need a prompt, and PermissionRequest fires (without tool_use_id).
func TestNoDecisionDeniesAndFiresPermissionRequest(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	rec := t.TempDir()
	exe := testExe(t)
	dir := project(t, map[string][]MatcherGroup{
		"PreToolUse":        {{Matcher: "*", Hooks: []Hook{FakeHook(exe, "-record", rec)}}},
		"PermissionRequest": {{Matcher: "*", Hooks: []Hook{FakeHook(exe, "-record", rec)}}},
	})
	api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_nd1", "echo hi > marker"))}})
	Run(t, Options{Claude: claude, API: api, Dir: dir})
	if exists(filepath.Join(dir, "marker")) {
		t.Fatal("marker exists: a call with no decision ran in -p")
	}
	if r := mustResult(t, api, "toolu_nd1"); !r.IsError {
		t.Errorf("tool_result = %+v; want an error", r)
	}
	recs, err := ReadRecorded(rec)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
		if r.Event == "PermissionRequest" {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(r.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if _, ok := p["tool_use_id"]; ok {
				t.Errorf("PermissionRequest carries tool_use_id: %s", r.Payload)
			}
			if string(p["tool_name"]) != `"Bash"` {
				t.Errorf("PermissionRequest tool_name = %s", p["tool_name"])
			}
		}
	}
	if strings.Join(events, ",") != "PreToolUse,PermissionRequest" {
		t.Errorf("hook events = %v; want PreToolUse then PermissionRequest", events)
	}
}

// A PermissionRequest allow lets the call run in -p (the control for the
// test above).
func TestPermissionRequestAllowRunsCommand(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	dir := project(t, map[string][]MatcherGroup{
		"PermissionRequest": {{Matcher: "*", Hooks: []Hook{FakeHook(testExe(t), "-stdout", allowPermissionJSON)}}},
	})
	api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_pr1", "echo hi > marker"))}})
	Run(t, Options{Claude: claude, API: api, Dir: dir})
	if !exists(filepath.Join(dir, "marker")) {
		t.Fatalf("marker missing; tool results: %+v", api.ToolResults())
	}
	if r := mustResult(t, api, "toolu_pr1"); r.IsError {
		t.Errorf("tool_result is an error: %q", r.Content)
	}
}

// TestHookFailureModes pins why the guard registers with onFailure "block":
// by default a hook that fails, times out or cannot start lets the call
// through; with onFailure "block" the call is blocked. Every row's project
// has an allow rule for the command, so "ran" means the hook did not block.
func TestHookFailureModes(t *testing.T) {
	t.Parallel()
	exe := testExe(t)
	missing := filepath.Join(t.TempDir(), "no-such-hook")
	tests := []struct {
		name    string
		hook    Hook
		wantRan bool
		wantMsg string // in the tool_result when blocked
	}{
		{"silent exit 0 (control)", FakeHook(exe), true, ""},
		{"exit 1 fails open", FakeHook(exe, "-exit", "1", "-stderr", "boom"), true, ""},
		{"exit 1 onFailure block", withBlock(FakeHook(exe, "-exit", "1", "-stderr", "boom"), 0), false, `onFailure is "block"`},
		{"timeout fails open", withTimeout(FakeHook(exe, "-sleep", "30s", "-stdout", denyJSON, "-exit", "2"), 1), true, ""},
		{"timeout onFailure block", withBlock(FakeHook(exe, "-sleep", "30s"), 1), false, "timed out"},
		{"missing command fails open", Hook{Type: "command", Command: missing, Args: []string{"x"}}, true, ""},
		{"missing command onFailure block", withBlock(Hook{Type: "command", Command: missing, Args: []string{"x"}}, 0), false, "ENOENT"},
		{"exit 0 onFailure block (control)", withBlock(FakeHook(exe), 0), true, ""},
	}
	claude := Install(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, preToolUse(tt.hook))
			local := `{"permissions":{"allow":["Bash(touch marker)"]}}`
			if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte(local), 0o644); err != nil {
				t.Fatal(err)
			}
			api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_f1", "touch marker"))}})
			debug := filepath.Join(t.TempDir(), "debug.txt")
			start := time.Now()
			Run(t, Options{Claude: claude, API: api, Dir: dir, Args: []string{"--debug-file", debug}})
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(debug)
					t.Logf("client debug log (tail):\n%s", Tail(string(b), 60))
				}
			})
			ran := exists(filepath.Join(dir, "marker"))
			r := mustResult(t, api, "toolu_f1")
			if ran != tt.wantRan {
				t.Fatalf("command ran = %v, want %v; tool_result %+v", ran, tt.wantRan, r)
			}
			if r.IsError == tt.wantRan {
				t.Errorf("tool_result is_error = %v, want %v: %q", r.IsError, !tt.wantRan, r.Content)
			}
			if tt.wantMsg != "" && !strings.Contains(r.Content, tt.wantMsg) {
				t.Errorf("tool_result %q does not contain %q", r.Content, tt.wantMsg)
			}
			// The sleeping hooks sleep 30s with a 1s timeout. Whether the
			// timeout applied is proved above (the "fails open" hook would
			// deny after its sleep; the "block" one reports "timed out").
			// Once, under heavy load (before the fail-open hook answered
			// deny), a fail-open run took 30s: either the client waited for
			// the hook or only outlived it; the deny now tells these apart.
			if tt.hook.Timeout > 0 && time.Since(start) > 20*time.Second {
				t.Logf("note: run took %v with a 1s hook timeout", time.Since(start))
			}
		})
	}
}

func withTimeout(h Hook, seconds int) Hook {
	h.Timeout = seconds
	return h
}

func withBlock(h Hook, seconds int) Hook {
	h.OnFailure = "block"
	h.Timeout = seconds
	return h
}

// A Bash call made inside a subagent reaches the same hooks with agent_id
// and agent_type, and the fake serves the subagent from its own script.
func TestSubagentToolCall(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	rec := t.TempDir()
	dir := project(t, preToolUse(FakeHook(testExe(t), "-record", rec, "-stdout", allowJSON)))
	api := NewFakeAPI(t, Script{
		Main: []Turn{Tools(Call("toolu_agent1", "Agent", map[string]any{
			"description": "run a command", "prompt": "run it", "subagent_type": "general-purpose"}))},
		Subagent: []Turn{Tools(bashCall("toolu_sub1", "echo sub > submarker"))},
	})
	Run(t, Options{Claude: claude, API: api, Dir: dir})
	if !exists(filepath.Join(dir, "submarker")) {
		t.Fatalf("subagent command did not run; tool results: %+v", api.ToolResults())
	}
	var sawSub bool
	for _, r := range api.Requests() {
		sawSub = sawSub || r.Subagent
	}
	if !sawSub {
		t.Error("no request was marked as a subagent request")
	}
	recs, err := ReadRecorded(rec)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, r := range recs {
		var p struct {
			Tool      string `json:"tool_name"`
			AgentID   string `json:"agent_id"`
			AgentType string `json:"agent_type"`
		}
		if err := json.Unmarshal(r.Payload, &p); err != nil {
			t.Fatal(err)
		}
		found[p.Tool] = true
		switch p.Tool {
		case "Bash":
			if p.AgentID == "" || p.AgentType != "general-purpose" {
				t.Errorf("subagent Bash payload lacks agent fields: %s", r.Payload)
			}
		case "Agent":
			if p.AgentID != "" || p.AgentType != "" {
				t.Errorf("main-agent payload carries agent fields: %s", r.Payload)
			}
		}
	}
	if !found["Bash"] || !found["Agent"] {
		t.Errorf("recorded tools %v; want Agent and Bash", found)
	}
}

// Parallel tool calls: PreToolUse hooks of read-only calls (Read) run
// concurrently; those of Bash calls run one after another.
func TestParallelCallsHookConcurrency(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	tests := []struct {
		name           string
		calls          func(dir string) []ToolCall
		wantConcurrent bool
	}{
		{"Read", func(dir string) []ToolCall {
			return []ToolCall{
				Call("toolu_r1", "Read", map[string]any{"file_path": filepath.Join(dir, "a.txt")}),
				Call("toolu_r2", "Read", map[string]any{"file_path": filepath.Join(dir, "b.txt")}),
			}
		}, true},
		{"Bash", func(string) []ToolCall {
			return []ToolCall{bashCall("toolu_b1", "echo a > a.out"), bashCall("toolu_b2", "echo b > b.out")}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := t.TempDir()
			dir := project(t, preToolUse(FakeHook(testExe(t), "-record", rec, "-sleep", "2s", "-stdout", allowJSON)))
			for _, n := range []string{"a.txt", "b.txt"} {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			calls := tt.calls(dir)
			api := NewFakeAPI(t, Script{Main: []Turn{Tools(calls...)}})
			Run(t, Options{Claude: claude, API: api, Dir: dir})
			for _, c := range calls {
				if r := mustResult(t, api, c.ID); r.IsError {
					t.Errorf("%s: tool_result is an error: %q", c.ID, r.Content)
				}
			}
			recs, err := ReadRecorded(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 {
				t.Fatalf("recorded %d payloads, want 2", len(recs))
			}
			overlap := recs[1].Start.Before(recs[0].End)
			if overlap != tt.wantConcurrent {
				t.Errorf("hooks overlapped = %v, want %v (%v..%v and %v..%v)", overlap, tt.wantConcurrent,
					recs[0].Start, recs[0].End, recs[1].Start, recs[1].End)
			}
		})
	}
}

// In -p mode a PreToolUse "ask" denies the call with the hook's reason, even
// when an allow rule covers it, and PermissionRequest does not fire: there is
// no one to ask. The control row (no hook decision) runs under the same rule.
func TestAskInPrintModeDenies(t *testing.T) {
	t.Parallel()
	claude := Install(t)
	exe := testExe(t)
	const reason = "asking test 91c"
	ask := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"` + reason + `"}}`
	for _, tt := range []struct {
		name    string
		pre     []string
		wantRan bool
	}{
		{"ask", []string{"-stdout", ask}, false},
		{"no decision (control)", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := t.TempDir()
			dir := project(t, map[string][]MatcherGroup{
				"PreToolUse":        {{Matcher: "*", Hooks: []Hook{FakeHook(exe, append([]string{"-record", rec}, tt.pre...)...)}}},
				"PermissionRequest": {{Matcher: "*", Hooks: []Hook{FakeHook(exe, "-record", rec, "-stdout", allowPermissionJSON)}}},
			})
			local := `{"permissions":{"allow":["Bash(touch marker)"]}}`
			if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte(local), 0o644); err != nil {
				t.Fatal(err)
			}
			api := NewFakeAPI(t, Script{Main: []Turn{Tools(bashCall("toolu_ask1", "touch marker"))}})
			Run(t, Options{Claude: claude, API: api, Dir: dir})
			if ran := exists(filepath.Join(dir, "marker")); ran != tt.wantRan {
				t.Fatalf("command ran = %v, want %v; tool results %+v", ran, tt.wantRan, api.ToolResults())
			}
			r := mustResult(t, api, "toolu_ask1")
			if !tt.wantRan && (!r.IsError || !strings.Contains(r.Content, reason)) {
				t.Errorf("tool_result = %+v; want an error carrying %q", r, reason)
			}
			recs, err := ReadRecorded(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, rc := range recs {
				if rc.Event == "PermissionRequest" {
					t.Errorf("PermissionRequest fired: %s", rc.Payload)
				}
			}
			if len(recs) != 1 {
				t.Errorf("recorded %d payloads, want the one PreToolUse", len(recs))
			}
		})
	}
}
