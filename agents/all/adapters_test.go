package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/token"
)

// harness is a real engine (real state, audit log and grants; a fixed key
// in place of the keyring) over a project dir and a trusted bin dir.
type harness struct {
	t testing.TB
	enginetest.World
	mode string
	now  time.Time
	// named: the host names the project (CLAUDE_PROJECT_DIR), as Claude
	// Code, Copilot, Gemini and Qwen Code do for their hooks.
	named bool
	// keyErr, when set, is the keyring's answer.
	keyErr error
	// launcher, when set, is the launcher the engine rewrites Bash into.
	launcher string
	// path, when set, is the PATH the hook sees (the host's), in place of
	// the trusted bin dir alone.
	path string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return &harness{t: t, World: enginetest.New(t, "echo", "ls"), now: time.Now()}
}

func (h *harness) engine() (*hooks.Engine, error) {
	named := ""
	if h.named {
		named = h.Project
	}
	path := h.Bin
	if h.path != "" {
		path = h.path
	}
	return &hooks.Engine{
		Store:   h.Store,
		Audit:   audit.Open(filepath.Join(h.Store.Dir, "audit")),
		LoadKey: enginetest.LoadKey(&h.keyErr),
		Now:     func() time.Time { return h.now },
		Mode:    h.mode,
		Env: hooks.Env{Path: path, Home: h.Home, Trusted: []string{h.Bin}, ProjectDir: named,
			Self: filepath.Join(h.Bin, "loopguard"), StateDir: h.Store.Dir, Launcher: h.launcher},
	}, nil
}

// payload reads a recorded payload, with {{CWD}} set to the project dir.
func (h *harness) payload(name string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		h.t.Fatal(err)
	}
	return bytes.ReplaceAll(b, []byte("{{CWD}}"), []byte(h.Project))
}

type answer struct {
	code   int
	stdout string
	stderr string
}

// run is one hook process: agent "" is the unnamed (Claude Code)
// registration.
func (h *harness) run(agent, event string, payload []byte) answer {
	h.t.Helper()
	opts := agents.Options{Event: event, NewEngine: func() (*hooks.Engine, error) {
		e, err := h.engine()
		if e != nil {
			// As hookmain names it: the registration's agent, event, mode.
			e.Registration = agent + "|" + event + "|" + h.mode
		}
		return e, err
	}}
	if agent == "" {
		opts.Detect, opts.Fallback = all.Detect, all.Adapters["claude"]
	} else {
		a, err := all.Lookup(agent)
		if err != nil {
			h.t.Fatal(err)
		}
		opts.Adapter = a
	}
	var out, errb bytes.Buffer
	code := agents.Run(context.Background(), opts, bytes.NewReader(payload), &out, &errb)
	return answer{code, out.String(), errb.String()}
}

// approve plays the human: approve the pending call the answer names.
func (h *harness) approve(a answer) {
	h.t.Helper()
	m := approveID.FindStringSubmatch(a.stdout + a.stderr)
	if m == nil {
		h.t.Fatalf("answer %+v names no pending call", a)
	}
	p, err := h.Store.GetPending(m[1])
	if err != nil {
		h.t.Fatal(err)
	}
	keys, _ := token.NewKeys(enginetest.Master)
	if _, err := hooks.Approve(h.Store, keys, p, "alice", 10*time.Minute, h.now); err != nil {
		h.t.Fatal(err)
	}
}

var approveID = regexp.MustCompile("loopguard approve ([A-Za-z0-9_-]+)")

func edit(t *testing.T, payload []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shape checks an answer: the exit code, and stdout as JSON equal to want
// once every string that starts with "loopguard:" is cut to its reason code.
func shape(t *testing.T, what string, got answer, code int, want string) {
	t.Helper()
	if got.code != code {
		t.Errorf("%s: exit %d, want %d (stdout %q, stderr %q)", what, got.code, code, got.stdout, got.stderr)
	}
	if want == "" {
		if got.stdout != "" {
			t.Errorf("%s: stdout %q, want nothing", what, got.stdout)
		}
		return
	}
	var v any
	if err := json.Unmarshal([]byte(got.stdout), &v); err != nil {
		t.Errorf("%s: stdout %q is not JSON: %v", what, got.stdout, err)
		return
	}
	b, _ := json.Marshal(reasons(v))
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	wb, _ := json.Marshal(w)
	if string(b) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, b, wb)
	}
}

// reasons cuts "loopguard: <code>: ..." messages to "<code>".
func reasons(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = reasons(e)
		}
	case string:
		if rest, ok := strings.CutPrefix(x, "loopguard: "); ok {
			if strings.HasPrefix(rest, "approved by ") {
				return "approved"
			}
			code, _, _ := strings.Cut(rest, ":")
			return code
		}
		if strings.HasPrefix(x, "loopguard (ask mode): ") {
			return "ask"
		}
	}
	return v
}

// agentCase is one agent's recorded shell call and its answers.
type agentCase struct {
	agent, event, file string
	deny, allow        string // stdout shapes; "" means nothing
	denyCode           int
	abstain            string
	changed            func(m map[string]any)
	unknownTool        func(m map[string]any)
}

var shellCases = []agentCase{
	{
		agent: "codex", event: "PreToolUse", file: "codex-pre-bash.json",
		deny: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no_grant"}}`,
		// The approved command runs pinned to bash (hooks.Call.PinBash).
		denyCode: 0, allow: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":` + jsonString(pinned("echo hi > ran.txt")) + `}}}`, abstain: "",
		changed: func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = "echo hello2" },
		unknownTool: func(m map[string]any) {
			m["tool_name"] = "spawn_agent"
			m["tool_input"] = map[string]any{"message": "hi"}
		},
	},
	{
		agent: "gemini", event: "BeforeTool", file: "gemini-before-shell.json",
		deny:     `{"decision":"deny","reason":"no_grant"}`,
		denyCode: 0, allow: `{"decision":"allow"}`, abstain: "",
		changed:     func(m map[string]any) { m["tool_input"].(map[string]any)["dir_path"] = "/" },
		unknownTool: func(m map[string]any) { m["tool_name"] = "save_memory"; m["tool_input"] = map[string]any{"fact": "x"} },
	},
	{
		agent: "copilot", event: "preToolUse", file: "copilot-pre-bash.json",
		deny:     `{"permissionDecision":"deny","permissionDecisionReason":"no_grant"}`,
		denyCode: 2, allow: `{"permissionDecision":"allow"}`, abstain: "",
		changed: func(m map[string]any) { m["toolArgs"] = `{"command":"echo hello2","description":"Print hello"}` },
		unknownTool: func(m map[string]any) {
			m["toolName"] = "github-create_issue"
			m["toolArgs"] = map[string]any{"title": "x"}
		},
	},
	{
		agent: "cursor", event: "preToolUse", file: "cursor-pre-shell.json",
		deny:     `{"permission":"deny","user_message":"no_grant","agent_message":"no_grant"}`,
		denyCode: 2, allow: `{"permission":"allow"}`, abstain: `{}`,
		changed: func(m map[string]any) { m["tool_input"].(map[string]any)["working_directory"] = "/tmp" },
		unknownTool: func(m map[string]any) {
			m["tool_name"] = "MCP:create_issue"
			m["tool_input"] = map[string]any{"title": "x"}
		},
	},
	{
		agent: "cursor", event: "beforeShellExecution", file: "cursor-before-shell.json",
		deny:     `{"permission":"deny","user_message":"no_grant","agent_message":"no_grant"}`,
		denyCode: 2, allow: `{"permission":"allow"}`, abstain: `{}`,
		changed: func(m map[string]any) { m["command"] = "echo hello2" },
	},
}

// pinned is cmd as Codex runs an allowed Bash call: pinned to bash,
// whatever shell the model picked.
func pinned(cmd string) string {
	q := func(s string) string { return "'" + strings.NewReplacer(`'`, `'\''`, `\`, `'\\'`).Replace(s) + "'" }
	return "exec " + q(policy.BashPath()) + " -c " + q(cmd)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAdapterShellCall plays each agent's recorded shell call through its
// adapter and a real engine: denied without approval (and nothing an agent
// reads as "no decision"), allowed once approved, denied when changed or
// retried, abstaining in audit mode, denied when malformed, and an unknown
// tool is decided (pending an exact approval), not let through.
func TestAdapterShellCall(t *testing.T) {
	for _, tc := range shellCases {
		t.Run(tc.agent+"/"+tc.event, func(t *testing.T) {
			h := newHarness(t)
			p := h.payload(tc.file)

			first := h.run(tc.agent, tc.event, p)
			shape(t, "no approval", first, tc.denyCode, tc.deny)
			h.approve(first)
			shape(t, "approved", h.run(tc.agent, tc.event, p), 0, tc.allow)
			// The control above ran; now the same call again: single use.
			got := h.run(tc.agent, tc.event, p)
			shape(t, "retried", got, tc.denyCode, strings.ReplaceAll(tc.deny, "no_grant", "approval_consumed"))

			h.approve(first)
			changed := edit(t, p, tc.changed)
			got = h.run(tc.agent, tc.event, changed)
			if !strings.Contains(got.stdout+got.stderr, "approved_call_changed") || got.code != tc.denyCode {
				t.Errorf("changed call: %+v, want approved_call_changed", got)
			}

			h.mode = hooks.ModeAudit
			shape(t, "audit mode", h.run(tc.agent, tc.event, edit(t, p, tc.changed)), 0, tc.abstain)
			h.mode = ""

			for what, bad := range map[string][]byte{
				"not JSON":        []byte(`{"session_id":`),
				"duplicate key":   bytes.Replace(p, []byte(`{`), []byte(`{"cwd":"/","cwd":"/",`), 1),
				"empty":           nil,
				"relative cwd":    bytes.ReplaceAll(p, []byte(h.Project), []byte("project")),
				"reserved agent":  edit(t, p, func(m map[string]any) { m["agent_id"] = "main" }),
				"number for text": edit(t, p, func(m map[string]any) { m["cwd"] = 7 }),
			} {
				if what == "reserved agent" && tc.agent != "codex" {
					continue
				}
				got := h.run(tc.agent, tc.event, bad)
				shape(t, "malformed: "+what, got, tc.denyCode, strings.ReplaceAll(tc.deny, "no_grant", "malformed_input"))
			}

			if tc.unknownTool != nil {
				got := h.run(tc.agent, tc.event, edit(t, p, tc.unknownTool))
				shape(t, "unknown tool", got, tc.denyCode, tc.deny)
				h.approve(got)
				allow := tc.allow
				if tc.agent == "codex" {
					// Not a shell call: nothing to pin, a plain allow is silence.
					allow = ""
				}
				shape(t, "unknown tool approved", h.run(tc.agent, tc.event, edit(t, p, tc.unknownTool)), 0, allow)
			}
		})
	}
}

// TestAdapterDeadline: a hook that cannot decide in time denies in the
// agent's own form (the hosts let a silent or timed-out hook through).
func TestAdapterDeadline(t *testing.T) {
	for _, tc := range shellCases {
		r, w, _ := os.Pipe() // stdin that never ends
		defer w.Close()
		a, _ := all.Lookup(tc.agent)
		var out, errb bytes.Buffer
		// The engine is never reached; it would write state after the test.
		noEngine := func() (*hooks.Engine, error) { return nil, os.ErrClosed }
		code := agents.Run(context.Background(), agents.Options{Adapter: a, Event: tc.event, Deadline: 50 * time.Millisecond, NewEngine: noEngine}, r, &out, &errb)
		shape(t, tc.agent+" deadline", answer{code, out.String(), errb.String()}, tc.denyCode, strings.ReplaceAll(tc.deny, "no_grant", "deadline"))
		r.Close()
	}
}

// TestClaudeRegistrationRecognisesOtherAgents: Cursor and Copilot CLI run
// hooks registered in .claude/settings.json. Their payloads arriving at the
// unnamed registration are decided and answered in their own format, not
// mistaken for Claude Code's; a Claude payload still gets Claude's answer.
func TestClaudeRegistrationRecognisesOtherAgents(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		file, event string
		code        int
		want        string
	}{
		{"cursor-claude-pre-bash.json", "PreToolUse", 2, `{"permission":"deny","user_message":"no_grant","agent_message":"no_grant"}`},
		{"copilot-pascal-pre-bash.json", "PreToolUse", 2, `{"permissionDecision":"deny","permissionDecisionReason":"no_grant"}`},
		{"copilot-pre-bash.json", "PreToolUse", 2, `{"permissionDecision":"deny","permissionDecisionReason":"no_grant"}`},
		{"copilot-pre-bash-argstring.json", "PreToolUse", 2, `{"permissionDecision":"deny","permissionDecisionReason":"no_grant"}`},
		// Captured: Copilot runs .claude hooks without their args, so no
		// --event either.
		// (its command is two commands, so: chained_command)
		{"copilot-pascal-pre-bash-real.json", "", 2, `{"permissionDecision":"deny","permissionDecisionReason":"chained_command"}`},
		{"copilot-claude-permission.json", "", 2, `{"behavior":"deny","message":"chained_command"}`},
	} {
		shape(t, tc.file, h.run("", tc.event, h.payload(tc.file)), tc.code, tc.want)
	}
	// Control: the same registration with a Claude Code payload.
	claude := []byte(`{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"` + h.Project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hello"},"tool_use_id":"toolu_1"}`)
	first := h.run("", "PreToolUse", claude)
	shape(t, "claude", first, 2,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no_grant"}}`)
	h.approve(first)
	shape(t, "claude approved", h.run("", "PreToolUse", claude), 0,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"approved"}}`)

	// The Cursor payload's grant was minted for Cursor's session: approving
	// it and replaying it as a Copilot call of the same session id fails.
	shape(t, "cursor again", h.run("", "PreToolUse", h.payload("cursor-claude-pre-bash.json")), 2,
		`{"permission":"deny","user_message":"no_grant","agent_message":"no_grant"}`)

	// Marks of two agents: refused, not guessed.
	mixed := edit(t, h.payload("cursor-claude-pre-bash.json"), func(m map[string]any) { m["turn_id"] = "t1" })
	got := h.run("", "PreToolUse", mixed)
	if got.code != 2 || !strings.Contains(got.stdout, "malformed_input") {
		t.Errorf("mixed payload: %+v, want a malformed_input deny", got)
	}
	// A named registration refuses another agent's payload.
	got = h.run("codex", "PreToolUse", h.payload("cursor-claude-pre-bash.json"))
	if got.code != 0 || !strings.Contains(got.stdout, `"permissionDecision":"deny"`) {
		t.Errorf("cursor payload at the codex registration: %+v, want Codex's deny", got)
	}
}

// TestSessionsAreBoundToTheAgent: an approval given for one agent's session
// does not cover the same call from another agent whose session id is equal.
func TestSessionsAreBoundToTheAgent(t *testing.T) {
	h := newHarness(t)
	claude := []byte(`{"session_id":"same","transcript_path":"/tmp/t.jsonl","cwd":"` + h.Project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hello"},"tool_use_id":"toolu_1"}`)
	h.approve(h.run("", "PreToolUse", claude))
	gem := edit(t, h.payload("gemini-before-shell.json"), func(m map[string]any) { m["session_id"] = "same" })
	shape(t, "gemini with claude's session id", h.run("gemini", "BeforeTool", gem), 0, `{"decision":"deny","reason":"no_grant"}`)
	shape(t, "control: claude", h.run("", "PreToolUse", claude), 0,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"approved"}}`)
}

// TestFileCallsBindTargetState: Codex's apply_patch and Gemini's,
// Copilot's and Cursor's file tools bind the state of the file they change,
// like Claude's Write and Edit: approved while absent, the call does not run
// once the file exists.
func TestFileCallsBindTargetState(t *testing.T) {
	for _, tc := range []struct{ agent, event, file, deny string }{
		{"codex", "PreToolUse", "codex-pre-patch.json", "permissionDecision\":\"deny"},
		{"gemini", "BeforeTool", "gemini-before-write.json", "\"decision\":\"deny"},
		{"copilot", "preToolUse", "copilot-pre-create.json", "permissionDecision\":\"deny"},
		{"copilot", "preToolUse", "copilot-pre-patch-freeform.json", "permissionDecision\":\"deny"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h := newHarness(t)
			p := h.payload(tc.file)
			first := h.run(tc.agent, tc.event, p)
			if !strings.Contains(first.stdout, tc.deny) || !strings.Contains(first.stdout, "no_grant") {
				t.Fatalf("no approval: %+v", first)
			}
			h.approve(first)
			if err := os.WriteFile(filepath.Join(h.Project, "notes.txt"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got := h.run(tc.agent, tc.event, p)
			if !strings.Contains(got.stdout, tc.deny) || !strings.Contains(got.stdout, "target_state_drift") {
				t.Errorf("file changed after approval: %+v, want target_state_drift", got)
			}
			// Control: back as it was approved (absent), it runs.
			if err := os.Remove(filepath.Join(h.Project, "notes.txt")); err != nil {
				t.Fatal(err)
			}
			got = h.run(tc.agent, tc.event, p)
			if strings.Contains(got.stdout, "deny") || got.code != 0 {
				t.Errorf("file as approved: %+v, want the allow", got)
			}
		})
	}
}

// TestProtectedFilesPerAgent: a file call aimed at the agent's hook
// settings is refused whatever grants exist, through every adapter's
// mapping (a patch, a relative path, a path with ..).
func TestProtectedFilesPerAgent(t *testing.T) {
	h := newHarness(t)
	patch := func(body string) func(m map[string]any) {
		return func(m map[string]any) { m["tool_input"] = map[string]any{"command": body} }
	}
	for _, tc := range []struct {
		agent, event, file string
		f                  func(m map[string]any)
	}{
		{"codex", "PreToolUse", "codex-pre-patch.json", patch("*** Begin Patch\n*** Add File: .claude/settings.json\n+{}\n*** End Patch\n")},
		{"codex", "PreToolUse", "codex-pre-patch.json", patch("*** Begin Patch\n*** Update File: sub/../.claude/settings.local.json\n@@\n-a\n+b\n*** End Patch\n")},
		{"gemini", "BeforeTool", "gemini-before-write.json", func(m map[string]any) {
			m["tool_input"].(map[string]any)["file_path"] = ".claude/settings.json"
		}},
		{"copilot", "preToolUse", "copilot-pre-create.json", func(m map[string]any) {
			m["toolArgs"].(map[string]any)["path"] = "x/../.claude/settings.json"
		}},
		{"copilot", "preToolUse", "copilot-pre-patch-freeform.json", func(m map[string]any) {
			m["toolArgs"] = "*** Begin Patch\n*** Update File: sub/../.github/hooks/loopguard.json\n@@\n-a\n+b\n*** End Patch\n"
		}},
		{"cursor", "preToolUse", "cursor-pre-shell.json", func(m map[string]any) {
			m["tool_name"] = "Delete"
			m["tool_input"] = map[string]any{"file_path": ".claude/settings.json"}
		}},
	} {
		got := h.run(tc.agent, tc.event, edit(t, h.payload(tc.file), tc.f))
		if !strings.Contains(got.stdout, "protected_resource") {
			t.Errorf("%s %s: %+v, want protected_resource", tc.agent, tc.file, got)
		}
	}
}

// TestCodexPatchesItCannotBind: a patch over several files, or one loopguard
// reads differently from Codex, is refused as malformed, never allowed; so
// is Copilot's free-form patch, read by the same parser.
func TestCodexPatchesItCannotBind(t *testing.T) {
	h := newHarness(t)
	bodies := map[string]string{
		"two files":       "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch\n",
		"move":            "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .claude/settings.json\n@@\n-a\n+b\n*** End Patch\n",
		"indented header": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n *** Add File: .claude/settings.json\n+{}\n*** End Patch\n",
		"padded path":     "*** Begin Patch\n*** Add File:  .claude/settings.json\n+{}\n*** End Patch\n",
		"no end":          "*** Begin Patch\n*** Add File: a.txt\n+a\n",
	}
	for what, body := range bodies {
		p := edit(t, h.payload("codex-pre-patch.json"), func(m map[string]any) { m["tool_input"] = map[string]any{"command": body} })
		got := h.run("codex", "PreToolUse", p)
		if !strings.Contains(got.stdout, `"permissionDecision":"deny"`) || !strings.Contains(got.stdout, "malformed_input") {
			t.Errorf("codex %s: %+v, want a malformed_input deny", what, got)
		}
		p = edit(t, h.payload("copilot-pre-patch-freeform.json"), func(m map[string]any) { m["toolArgs"] = body })
		got = h.run("copilot", "preToolUse", p)
		if !strings.Contains(got.stdout, `"permissionDecision":"deny"`) || !strings.Contains(got.stdout, "malformed_input") {
			t.Errorf("copilot %s: %+v, want a malformed_input deny", what, got)
		}
	}
	// Control: the one-file patch is read (held for an approval, not malformed).
	got := h.run("copilot", "preToolUse", h.payload("copilot-pre-patch-freeform.json"))
	if !strings.Contains(got.stdout, "no_grant") {
		t.Errorf("copilot one-file patch: %+v, want no_grant", got)
	}
}

// TestPostToolUseRecheck: where the host sends a call id (Codex, Cursor),
// the post hook raises an alarm when what ran is not what was allowed
// (another hook rewrote it), and stays quiet when it is.
func TestPostToolUseRecheck(t *testing.T) {
	for _, tc := range []struct {
		agent, pre, post, preFile, postFile, alarm string
		rewrite                                    func(m map[string]any)
	}{
		{"codex", "PreToolUse", "PostToolUse", "codex-pre-bash.json", "codex-post-bash.json", `"decision":"block"`,
			func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = "echo pwned" }},
		{"cursor", "preToolUse", "postToolUse", "cursor-pre-shell.json", "cursor-post-shell.json", `"additional_context"`,
			func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = "echo pwned" }},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			h := newHarness(t)
			pre := h.payload(tc.preFile)
			h.approve(h.run(tc.agent, tc.pre, pre))
			if got := h.run(tc.agent, tc.pre, pre); strings.Contains(got.stdout, "deny") {
				t.Fatalf("approved call denied: %+v", got)
			}
			post := h.payload(tc.postFile)
			if tc.agent == "codex" {
				// What ran: the command pinned to bash.
				post = edit(t, post, func(m map[string]any) {
					in := m["tool_input"].(map[string]any)
					in["command"] = pinned(in["command"].(string))
				})
			}
			if got := h.run(tc.agent, tc.post, post); strings.Contains(got.stdout, tc.alarm) {
				t.Errorf("post of the allowed call: %+v, want no alarm", got)
			}
			// Once more, with the executed input rewritten.
			h.approve(h.run(tc.agent, tc.pre, edit(t, pre, func(m map[string]any) { m["tool_use_id"] = "call_2" })))
			h.run(tc.agent, tc.pre, edit(t, pre, func(m map[string]any) { m["tool_use_id"] = "call_2" }))
			got := h.run(tc.agent, tc.post, edit(t, h.payload(tc.postFile), func(m map[string]any) {
				m["tool_use_id"] = "call_2"
				tc.rewrite(m)
			}))
			if !strings.Contains(got.stdout, tc.alarm) || !strings.Contains(got.stdout, "ALARM") {
				t.Errorf("post of a rewritten call: %+v, want the alarm", got)
			}
		})
	}
}

// shellPatch is a Codex Bash call that Codex applies as a patch itself.
func shellPatch(t *testing.T, h *harness, cmd string) []byte {
	return edit(t, h.payload("codex-pre-bash.json"), func(m map[string]any) {
		m["tool_input"] = map[string]any{"command": cmd}
	})
}

// TestCodexShellPatch: Codex applies `apply_patch <<'EOF' ... EOF` itself
// (its hook sees Bash). It is bound like the apply_patch tool: to the file
// and its state, checked against the protected paths; any other apply_patch
// command is refused; a command merely naming apply_patch is plain Bash.
func TestCodexShellPatch(t *testing.T) {
	h := newHarness(t)
	add := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\nEOF\n"
	first := h.run("codex", "PreToolUse", shellPatch(t, h, add))
	if !strings.Contains(first.stdout, "no_grant") {
		t.Fatalf("shell patch without approval: %+v", first)
	}
	ps, _ := h.Store.ListPending()
	if len(ps) != 1 || ps[0].Tool != "Write" {
		t.Fatalf("pending = %+v, want one Write", ps)
	}
	h.approve(first)
	if err := os.WriteFile(filepath.Join(h.Project, "notes.txt"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := h.run("codex", "PreToolUse", shellPatch(t, h, add)); !strings.Contains(got.stdout, "target_state_drift") {
		t.Errorf("file changed after approval: %+v, want target_state_drift", got)
	}
	_ = os.Remove(filepath.Join(h.Project, "notes.txt"))
	if got := h.run("codex", "PreToolUse", shellPatch(t, h, add)); got.stdout != "" {
		t.Errorf("control, the file as approved: %+v, want the (silent) allow", got)
	}

	for what, cmd := range map[string]string{
		"protected":  "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: .claude/settings.json\n+{}\n*** End Patch\nEOF",
		"cd then":    "cd .claude && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: settings.json\n+{}\n*** End Patch\nEOF",
		"dotdot":     "apply_patch <<EOF\n*** Begin Patch\n*** Update File: x/../.claude/settings.local.json\n@@\n-a\n+b\n*** End Patch\nEOF",
		"applypatch": "applypatch <<'P'\n*** Begin Patch\n*** Add File: .claude/settings.json\n+{}\n*** End Patch\nP",
	} {
		if got := h.run("codex", "PreToolUse", shellPatch(t, h, cmd)); !strings.Contains(got.stdout, "protected_resource") {
			t.Errorf("%s: %+v, want protected_resource", what, got)
		}
	}
	for what, cmd := range map[string]string{
		"argument form":   "apply_patch '*** Begin Patch\n*** Add File: a\n+1\n*** End Patch'",
		"delimiter wrong": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\nEOT",
		"trailing cmd":    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\nEOF\nrm -rf x",
		"two files":       "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+1\n*** Add File: b\n+1\n*** End Patch\nEOF",
		"quoted name":     "'apply_patch' <<'EOF'\n*** Begin Patch\n*** Add File: a\n+1\n*** End Patch\nEOF",
	} {
		if got := h.run("codex", "PreToolUse", shellPatch(t, h, cmd)); !strings.Contains(got.stdout, "malformed_input") {
			t.Errorf("%s: %+v, want malformed_input", what, got)
		}
	}
	// Control: naming apply_patch is not a patch.
	got := h.run("codex", "PreToolUse", shellPatch(t, h, "echo apply_patch"))
	if !strings.Contains(got.stdout, "no_grant") {
		t.Errorf("echo apply_patch: %+v, want a plain Bash no_grant", got)
	}
}

// TestCodexPermissionRequest: Codex's PermissionRequest answers through
// decision.behavior, and a PermissionRequest for a call no approval covers
// is denied there too.
func TestCodexPermissionRequest(t *testing.T) {
	h := newHarness(t)
	got := h.run("codex", "PermissionRequest", h.payload("codex-permission-bash.json"))
	shape(t, "no approval", got, 0, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no_grant"}}}`)
	h.approve(got)
	shape(t, "approved", h.run("codex", "PermissionRequest", h.payload("codex-permission-bash.json")), 0,
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
}

// TestUnknownAgentDeniesEverywhere: a registration naming an agent loopguard
// does not know answers with the deny every known agent blocks on: exit 2,
// the reason as plain text on stdout and stderr.
func TestUnknownAgentDeniesEverywhere(t *testing.T) {
	h := newHarness(t)
	var out, errb bytes.Buffer
	code := agents.Run(context.Background(), agents.Options{NewEngine: h.engine,
		Detect: func(map[string]any) (agents.Adapter, error) { return nil, os.ErrNotExist }},
		bytes.NewReader(h.payload("codex-pre-bash.json")), &out, &errb)
	if code != 2 || !strings.HasPrefix(out.String(), "loopguard: malformed_input") || errb.String() != out.String() {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if json.Valid(out.Bytes()) {
		t.Error("the universal deny must not be JSON (Gemini would read JSON without a decision as an allow)")
	}
}

// grantAny plays the human granting rule to every session and agent.
func (h *harness) grantAny(rule string) {
	h.t.Helper()
	h.PutScoped(h.t, h.Pinned(h.t, rule), "alice", token.Any, token.Any, h.now)
}

// auditReasons lists the reason codes of the audit log, in order.
func (h *harness) auditReasons() []string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Store.Dir, "audit", "log.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e.Reason)
		}
	}
	return out
}

// TestRewritePerAgent: a hosts that runs a hook's rewrite (Codex's
// updatedInput, Copilot's modifiedArgs, Gemini's tool_input) is answered
// with the canonical command of a call a scoped grant covers, so a command
// whose text is not plain ($'...') is covered there; where the host cannot
// rewrite (Cursor, unproven) a scope covers only plain text, and the
// non-plain command is refused as not_canonical. The post hook of a host
// without call ids recognises the rewrite that ran by its digest.
func TestRewritePerAgent(t *testing.T) {
	for _, tc := range []struct {
		agent, event, file, post, postFile string
		rewrites                           bool
		// input is the payload's key of the tool's arguments; rewritten the
		// path in the answer to the arguments the host runs instead.
		input     string
		rewritten []string
	}{
		{"codex", "PreToolUse", "codex-pre-bash.json", "PostToolUse", "codex-post-bash.json", true,
			"tool_input", []string{"hookSpecificOutput", "updatedInput"}},
		{"copilot", "preToolUse", "copilot-pre-bash.json", "postToolUse", "copilot-post-bash.json", true,
			"toolArgs", []string{"modifiedArgs"}},
		{"gemini", "BeforeTool", "gemini-before-shell.json", "AfterTool", "gemini-after-shell.json", true,
			"tool_input", []string{"hookSpecificOutput", "tool_input"}},
		{"cursor", "preToolUse", "cursor-pre-shell.json", "", "", false, "tool_input", nil},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			h := newHarness(t)
			h.named = true
			h.grantAny("Bash(ls *)")
			ls := filepath.Join(h.Bin, "ls")
			set := func(m map[string]any, cmd string) { m[tc.input].(map[string]any)["command"] = cmd }
			call := func(cmd string) (answer, map[string]any) {
				got := h.run(tc.agent, tc.event, edit(t, h.payload(tc.file), func(m map[string]any) { set(m, cmd) }))
				var out map[string]any
				_ = json.Unmarshal([]byte(got.stdout), &out)
				return got, out
			}
			got, out := call("ls $'-la'")
			if !tc.rewrites {
				if !strings.Contains(got.stdout, "not_canonical") {
					t.Errorf("ls $'-la' where the host cannot rewrite: %+v, want not_canonical", got)
				}
				// Control: the plain spelling is covered, and runs as written.
				got, _ = call("ls -la")
				if !strings.Contains(got.stdout, `"allow"`) || strings.Contains(got.stdout, ls) {
					t.Errorf("ls -la: %+v, want a plain allow", got)
				}
				return
			}
			want := "'" + ls + "' '-la'"
			if tc.agent == "codex" {
				want = pinned(want)
			}
			for _, k := range tc.rewritten {
				out, _ = out[k].(map[string]any)
			}
			if c, _ := out["command"].(string); c != want || got.code != 0 {
				t.Fatalf("ls $'-la': %+v\nwant it rewritten to %s", got, want)
			}
			// The post hook sees what ran: the rewrite.
			if tc.agent != "codex" {
				h.run(tc.agent, tc.post, edit(t, h.payload(tc.postFile), func(m map[string]any) { set(m, want) }))
				if r := h.auditReasons(); r[len(r)-1] != hooks.ReasonRan {
					t.Errorf("post of the rewrite: audit %v, want %s last", r, hooks.ReasonRan)
				}
				// The model's own text ran instead: not recognised as approved.
				h.run(tc.agent, tc.post, edit(t, h.payload(tc.postFile), func(m map[string]any) { set(m, "ls $'-la'") }))
				if r := h.auditReasons(); r[len(r)-1] != hooks.ReasonNotGuarded {
					t.Errorf("post of the unrewritten text: audit %v, want %s last", r, hooks.ReasonNotGuarded)
				}
			}
		})
	}
}

// TestCodexPermissionRequestAfterRewrite: Codex may ask its permission
// (PermissionRequest) about the command a PreToolUse allow rewrote the call
// into; loopguard recognises its own rewrite, in the same session, and
// allows it. The model's own text is not the rewrite (a PermissionRequest
// cannot carry one: not_canonical), nor is the rewrite in another session.
func TestCodexPermissionRequestAfterRewrite(t *testing.T) {
	h := newHarness(t)
	h.named = true
	h.grantAny("Bash(ls *)")
	pre := edit(t, h.payload("codex-pre-bash.json"), func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = "ls $'-la'" })
	got := h.run("codex", "PreToolUse", pre)
	var out struct {
		HSO struct {
			UpdatedInput map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &out); err != nil || out.HSO.UpdatedInput == nil {
		t.Fatalf("PreToolUse: %+v, want an allow with updatedInput", got)
	}
	rewritten, _ := out.HSO.UpdatedInput["command"].(string)
	perm := func(cmd, session string) answer {
		return h.run("codex", "PermissionRequest", edit(t, h.payload("codex-permission-bash.json"), func(m map[string]any) {
			m["tool_input"] = map[string]any{"command": cmd}
			m["session_id"] = session
		}))
	}
	var pre0 map[string]any
	_ = json.Unmarshal(pre, &pre0)
	session, _ := pre0["session_id"].(string)
	if got := perm(rewritten, session); !strings.Contains(got.stdout, `"behavior":"allow"`) {
		t.Errorf("PermissionRequest of loopguard's rewrite: %+v, want allow", got)
	}
	if got := perm("ls $'-la'", session); !strings.Contains(got.stdout, `"behavior":"deny"`) || !strings.Contains(got.stdout, "not_canonical") {
		t.Errorf("PermissionRequest of the model's text: %+v, want not_canonical", got)
	}
	if got := perm(rewritten, "another-session"); !strings.Contains(got.stdout, `"behavior":"deny"`) {
		t.Errorf("PermissionRequest of the rewrite in another session: %+v, want deny", got)
	}
}

// TestOneDecisionPerCall: Copilot runs every registration of loopguard it
// finds for one call, one after the other, each with the same timestamp
// and the input the one before left. One approval, two registrations: the
// first allows (and rewrites), the second answers the same instead of
// finding the approval consumed. The same registration asked again about
// that identity decides afresh (two identical calls in one millisecond
// get one approval's run, not two), and another call is not answered by
// this one's answer.
func TestOneDecisionPerCall(t *testing.T) {
	h := newHarness(t)
	h.named = true
	camel := h.payload("copilot-pre-bash.json")
	var m map[string]any
	_ = json.Unmarshal(camel, &m)
	args := m["toolArgs"].(map[string]any)
	pascal, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": m["sessionId"],
		"timestamp": time.UnixMilli(1796033981683).UTC().Format("2006-01-02T15:04:05.000Z"), "cwd": h.Project,
		"tool_name": "Bash", "tool_input": args})
	first := h.run("copilot", "preToolUse", camel)
	if !strings.Contains(first.stdout, "no_grant") {
		t.Fatalf("no approval: %+v", first)
	}
	// The second registration of the same call: the same answer.
	if got := h.run("", "", pascal); !strings.Contains(got.stdout, "no_grant") || got.code != 2 {
		t.Fatalf("second registration, no approval: %+v", got)
	}
	if ps, _ := h.Store.ListPending(); len(ps) != 1 {
		t.Fatalf("%d pending calls, want one", len(ps))
	}
	// The retry (a new timestamp), approved: both registrations allow it.
	h.approve(first)
	retry := edit(t, camel, func(m map[string]any) { m["timestamp"] = json.Number("1796033990000") })
	retryPascal := edit(t, pascal, func(m map[string]any) {
		m["timestamp"] = time.UnixMilli(1796033990000).UTC().Format("2006-01-02T15:04:05.000Z")
	})
	if got := h.run("copilot", "preToolUse", retry); !strings.Contains(got.stdout, `"allow"`) {
		t.Fatalf("approved retry, first registration: %+v", got)
	}
	if got := h.run("", "", retryPascal); !strings.Contains(got.stdout, `"allow"`) || got.code != 0 {
		t.Fatalf("approved retry, second registration: %+v, want the same allow (not approval_consumed)", got)
	}
	// A second call with the same identity through the first registration
	// again: a new decision, and the one approval is used.
	if got := h.run("copilot", "preToolUse", retry); !strings.Contains(got.stdout, "approval_consumed") {
		t.Errorf("the same registration again: %+v, want approval_consumed", got)
	}
	// ...and the other registration, asked once more, does not reuse an answer.
	if got := h.run("", "", retryPascal); !strings.Contains(got.stdout, "approval_consumed") {
		t.Errorf("the second registration again: %+v, want approval_consumed", got)
	}
	// Another call (other arguments) with the answered identity decides
	// for itself.
	h.approve(first)
	other := edit(t, retryPascal, func(m map[string]any) {
		m["timestamp"] = time.UnixMilli(1796034000000).UTC().Format("2006-01-02T15:04:05.000Z")
	})
	h.run("copilot", "preToolUse", edit(t, retry, func(m map[string]any) { m["timestamp"] = json.Number("1796034000000") }))
	changed := edit(t, other, func(m map[string]any) { m["tool_input"].(map[string]any)["command"] = "echo other" })
	if got := h.run("", "", changed); strings.Contains(got.stdout, `"allow"`) {
		t.Errorf("another call with an answered identity: %+v, want it decided (denied)", got)
	}
	// A scoped call the first registration rewrites reaches the second
	// as rewritten (Copilot chains hooks): the same allow.
	h.grantAny("Bash(ls *)")
	ls := edit(t, camel, func(m map[string]any) {
		m["timestamp"] = json.Number("1796034100000")
		m["toolArgs"].(map[string]any)["command"] = "ls $'-la'"
	})
	got := h.run("copilot", "preToolUse", ls)
	var out struct {
		ModifiedArgs map[string]any `json:"modifiedArgs"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &out); err != nil || out.ModifiedArgs == nil {
		t.Fatalf("scoped ls, first registration: %+v, want a rewrite", got)
	}
	lsPascal := edit(t, pascal, func(m map[string]any) {
		m["timestamp"] = time.UnixMilli(1796034100000).UTC().Format("2006-01-02T15:04:05.000Z")
		m["tool_input"] = out.ModifiedArgs
	})
	if got := h.run("", "", lsPascal); !strings.Contains(got.stdout, `"allow"`) {
		t.Errorf("scoped ls, second registration seeing the rewrite: %+v, want the same allow", got)
	}
	// The replay is in the audit log as such.
	b, _ := os.ReadFile(filepath.Join(h.Store.Dir, "audit", "log.jsonl"))
	if !strings.Contains(string(b), "another of its registrations") {
		t.Error("the replayed answer left no audit entry saying so")
	}
}

// TestInteractiveCommands: a program that reads commands from its standard
// input (a shell, a REPL, a database client) is never covered by a scope:
// the scope would cover the program's start, not what is typed into it.
// Under Codex, whose write_stdin types into a running command with no hook,
// the model and the human are told plainly that an approval of one approves
// whatever is typed into it later; show and review say it for every agent.
func TestInteractiveCommands(t *testing.T) {
	h := newHarness(t)
	h.named = true
	if err := os.WriteFile(filepath.Join(h.Bin, "sqlite3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.grantAny("Bash(sqlite3 *)")
	codex := func(cmd string) answer {
		return h.run("codex", "PreToolUse", edit(t, h.payload("codex-pre-bash.json"), func(m map[string]any) {
			m["tool_input"].(map[string]any)["command"] = cmd
		}))
	}
	got := codex("sqlite3 app.db")
	if !strings.Contains(got.stdout, hooks.ReasonInteractive) || !strings.Contains(got.stdout, "runs unchecked") {
		t.Errorf("sqlite3 app.db under a scope: %+v, want interactive_command, saying what is typed runs unchecked", got)
	}
	// Given its commands in a file (which the analysis cannot read, and the
	// agent may have written), psql still runs shell commands through them
	// (\!): no scope covers that either.
	if err := os.WriteFile(filepath.Join(h.Bin, "psql"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.grantAny("Bash(psql *)")
	if got := codex("psql -f setup.sql mydb"); !strings.Contains(got.stdout, hooks.ReasonInteractive) {
		t.Errorf("psql -f setup.sql under a scope: %+v, want interactive_command", got)
	}
	// Control: the grants of an ordinary program still cover it.
	h.grantAny("Bash(ls *)")
	if got := codex("ls -la"); strings.Contains(got.stdout, "deny") {
		t.Errorf("ls -la under its grant: %+v, want the scoped allow", got)
	}
	// An interpreter's REPL needs an exact approval anyway; under Codex the
	// model is told, and the pending record warns.
	got = codex("bash")
	if !strings.Contains(got.stdout, "no_grant") && !strings.Contains(got.stdout, "indirect_command") || !strings.Contains(got.stdout, "write_stdin") {
		t.Errorf("bash under Codex: %+v, want it held, saying what is typed into it runs unchecked", got)
	}
	ps, _ := h.Store.ListPending()
	warned := false
	for _, p := range ps {
		for _, w := range p.Warnings {
			warned = warned || strings.Contains(w, "runs unchecked")
		}
		if strings.Contains(present.Summary(p), "bash") {
			dangers := present.Danger(p.Descriptor, p.ProjectDir)
			if len(dangers) == 0 || !strings.Contains(dangers[0], "runs unchecked") {
				t.Errorf("show/review of bash: danger lines %q, want the stdin warning", dangers)
			}
		}
	}
	if !warned {
		t.Error("no pending record warns that what is typed into bash runs unchecked")
	}
	// Behind a wrapper the shell or REPL is the same (issue 37): the model
	// is told; control: a wrapped shell given its script is not.
	for _, cmd := range []string{"env bash", "nice python3", "timeout 600 bash", "exec bash", "xargs sh", "stdbuf -oL node"} {
		if got := codex(cmd); !strings.Contains(got.stdout, "write_stdin") || !strings.Contains(got.stdout, "runs unchecked") {
			t.Errorf("%s under Codex: %+v, want it held, saying what is typed into it runs unchecked", cmd, got)
		}
	}
	if got := codex("timeout 600 bash -c make"); strings.Contains(got.stdout, "runs unchecked") {
		t.Errorf("timeout 600 bash -c make under Codex: %+v, told what is typed into it runs unchecked", got)
	}
	// Under an agent that cannot type into a running command, the model is
	// not told what does not apply to it.
	cursor := h.run("cursor", "preToolUse", edit(t, h.payload("cursor-pre-shell.json"), func(m map[string]any) {
		m["tool_input"].(map[string]any)["command"] = "bash"
	}))
	if strings.Contains(cursor.stdout, "write_stdin") {
		t.Errorf("bash under Cursor: %+v, told about Codex's write_stdin", cursor)
	}
}

// TestSessionIsTheAgents: every adapter but Claude Code's (whose session
// is the host's own id, as grants always had it) binds the session it
// decodes to its own name, so that the same session id sent by two agents
// is two sessions (the attack: another agent's grants). The control: each
// agent's recorded shell call decodes, with the session the payload names.
func TestSessionIsTheAgents(t *testing.T) {
	h := newHarness(t)
	payloads := map[string][]byte{
		"opencode": []byte(`{"event":"tool.execute.before","session_id":"s1","call_id":"c1","directory":"` + h.Project + `","tool":"bash","args":{"command":"echo hello"}}`),
		"qwen":     []byte(`{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"` + h.Project + `","tool_name":"run_shell_command","tool_input":{"command":"echo hello"},"tool_call_id":"c1"}`),
	}
	for _, tc := range shellCases {
		payloads[tc.agent] = h.payload(tc.file)
	}
	for _, name := range all.Names {
		if name == "claude" {
			continue
		}
		m, err := agents.Object(payloads[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, _, err := all.Adapters[name].Decode(m, "")
		if err != nil {
			t.Fatalf("control %s: %v", name, err)
		}
		if !strings.HasPrefix(c.SessionID, name+":") || len(c.SessionID) == len(name)+1 {
			t.Errorf("%s: session %q is not bound to the agent", name, c.SessionID)
		}
	}
}
