package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/claude"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/internal/enginetest"
)

// Claude Code's contract through the one runner every agent has
// (agents.Run), its adapter (agents/claude) and a real engine: what the
// hook answers on bad input, its own deadline, a panic, an engine that
// cannot be built, and the shape of each answer.

// claudeOut is Claude Code's hook output.
type claudeOut struct {
	HSO struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		Decision                 *struct {
			Behavior     string `json:"behavior"`
			Message      string `json:"message"`
			UpdatedInput any    `json:"updatedInput"`
		} `json:"decision"`
		UpdatedInput any `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
	SystemMessage string `json:"systemMessage"`
}

// claudeRun runs one hook call as Claude Code's registration for event.
func (h *harness) claudeRun(event string, deadline time.Duration, newEngine func() (*hooks.Engine, error), stdin io.Reader) (int, claudeOut, string) {
	h.t.Helper()
	if newEngine == nil {
		newEngine = h.engine
	}
	var out, errb bytes.Buffer
	code := agents.Run(context.Background(), agents.Options{Adapter: claude.Adapter{}, Event: event, Deadline: deadline, NewEngine: newEngine}, stdin, &out, &errb)
	var co claudeOut
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &co); err != nil {
			h.t.Fatalf("hook output is not JSON: %q", out.String())
		}
	}
	return code, co, errb.String()
}

// claudeDeny checks a deny in the event's own format.
func claudeDeny(t *testing.T, what, event string, code int, co claudeOut, reason string) {
	t.Helper()
	switch event {
	case hooks.PermissionRequest:
		if code != agents.ExitOK || co.HSO.HookEventName != hooks.PermissionRequest || co.HSO.Decision == nil ||
			co.HSO.Decision.Behavior != "deny" || !strings.Contains(co.HSO.Decision.Message, reason) {
			t.Errorf("%s: code %d output %+v, want PermissionRequest deny %s", what, code, co, reason)
		}
	default:
		if code != agents.ExitDeny || co.HSO.HookEventName != hooks.PreToolUse || co.HSO.PermissionDecision != "deny" ||
			!strings.Contains(co.HSO.PermissionDecisionReason, reason) {
			t.Errorf("%s: code %d output %+v, want PreToolUse deny %s", what, code, co, reason)
		}
	}
}

// repeatReader yields n bytes of b repeated, without holding them.
type repeatReader struct {
	b     byte
	n     int64
	chunk []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	if len(r.chunk) == 0 {
		r.chunk = bytes.Repeat([]byte{r.b}, 64<<10)
	}
	n := 0
	for n < len(p) {
		n += copy(p[n:], r.chunk)
	}
	r.n -= int64(n)
	return n, nil
}

func TestClaudeFailsClosed(t *testing.T) {
	h := newHarness(t)
	good := h.bash("echo hi > a.txt")
	huge := func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"hook_event_name":"PreToolUse","tool_input":{"content":"`),
			&repeatReader{b: 'a', n: 300 << 20})
	}
	for _, event := range []string{hooks.PreToolUse, hooks.PermissionRequest, ""} {
		for what, in := range map[string]func() io.Reader{
			"malformed json": func() io.Reader { return strings.NewReader(`{"hook_event_name":`) },
			"empty stdin":    func() io.Reader { return strings.NewReader("") },
			"not an object":  func() io.Reader { return strings.NewReader(`[1,2]`) },
			"duplicate key": func() io.Reader {
				return strings.NewReader(strings.Replace(string(good), `"tool_input":{`, `"tool_input":{"command":"id",`, 1))
			},
			"null agent_id": func() io.Reader {
				return strings.NewReader(strings.Replace(string(good), `{`, `{"agent_id":null,`, 1))
			},
			"300 MB payload": huge,
		} {
			// A generous deadline: this is about decoding, not speed.
			code, co, _ := h.claudeRun(event, time.Minute, nil, in())
			claudeDeny(t, event+": "+what, event, code, co, hooks.ReasonMalformed)
		}
	}
	// Every one of those denies is in the audit log.
	n := 0
	for _, e := range h.entries() {
		if e.Reason == hooks.ReasonMalformed && e.Decision == hooks.Deny {
			n++
		}
	}
	if n != 18 {
		t.Errorf("%d malformed denies in the audit log, want 18", n)
	}
	// Control: the same engine answers a good payload with a decision of
	// its own, on stderr too.
	code, co, stderr := h.claudeRun(hooks.PreToolUse, 0, nil, bytes.NewReader(good))
	claudeDeny(t, "good payload, no grant", hooks.PreToolUse, code, co, hooks.ReasonNoGrant)
	if !strings.Contains(stderr, hooks.ReasonNoGrant) {
		t.Errorf("deny reason not on stderr: %q", stderr)
	}
}

func TestClaudeDeadlinePanicAndSetupErrors(t *testing.T) {
	h := newHarness(t)
	call := h.bash("echo hi > a.txt")
	h.approve(h.run("claude", hooks.PreToolUse, call))
	// The slow engine goes on deciding after the deadline's answer (a hook
	// process exits there); the test waits for it, or it writes into the
	// test's directory after that is removed.
	var decided sync.WaitGroup
	defer func() {
		end := make(chan struct{})
		go func() { decided.Wait(); close(end) }()
		select {
		case <-end:
		case <-time.After(10 * time.Second):
			t.Error("the slow engine did not finish deciding")
		}
	}()
	slow := func() (*hooks.Engine, error) {
		e, err := h.engine()
		e.LoadKey = func(ctx context.Context) ([]byte, error) {
			select {
			case <-time.After(3 * time.Second):
				return bytes.Clone(enginetest.Master), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return e, err
	}
	for _, event := range []string{hooks.PreToolUse, hooks.PermissionRequest} {
		payload := edit(t, call, func(m map[string]any) { m["hook_event_name"] = event })
		start := time.Now()
		var out, errb bytes.Buffer
		decided.Add(1)
		code := agents.Run(context.Background(), agents.Options{Adapter: claude.Adapter{}, Event: event, Deadline: 200 * time.Millisecond, NewEngine: slow,
			After: func(_ context.Context, _ *hooks.Engine, _ *hooks.Call, d hooks.Decision) hooks.Decision {
				decided.Done()
				return d
			}}, bytes.NewReader(payload), &out, &errb)
		var co claudeOut
		if err := json.Unmarshal(out.Bytes(), &co); err != nil {
			t.Fatalf("hook output is not JSON: %q", out.String())
		}
		claudeDeny(t, event+": slow keyring", event, code, co, hooks.ReasonDeadline)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("a deadline of 200ms answered after %s", el)
		}
		code, co, _ = h.claudeRun(event, 0, func() (*hooks.Engine, error) { panic("boom") }, bytes.NewReader(payload))
		claudeDeny(t, event+": panic", event, code, co, hooks.ReasonInternal)
		code, co, _ = h.claudeRun(event, 0, func() (*hooks.Engine, error) { return nil, os.ErrPermission }, bytes.NewReader(payload))
		claudeDeny(t, event+": setup error", event, code, co, hooks.ReasonInternal)
	}
	// Control: with a prompt keyring the approved call is allowed.
	code, co, _ := h.claudeRun(hooks.PreToolUse, 0, nil, bytes.NewReader(call))
	if code != agents.ExitOK || co.HSO.PermissionDecision != "allow" {
		t.Fatalf("approved call: code %d %+v", code, co)
	}
}

func TestClaudeEventMismatch(t *testing.T) {
	h := newHarness(t)
	code, co, _ := h.claudeRun(hooks.PermissionRequest, 0, nil, bytes.NewReader(h.bash("echo hi > a.txt")))
	claudeDeny(t, "a payload for another event", hooks.PermissionRequest, code, co, hooks.ReasonMalformed)
	// Control: registered for the payload's own event, it is decided.
	code, co, _ = h.claudeRun(hooks.PreToolUse, 0, nil, bytes.NewReader(h.bash("echo hi > a.txt")))
	claudeDeny(t, "registered for its event", hooks.PreToolUse, code, co, hooks.ReasonNoGrant)
}

func TestClaudeOutputs(t *testing.T) {
	h := newHarness(t)
	pre := h.bash("echo hi > a.txt")
	h.approve(h.run("claude", hooks.PreToolUse, pre))
	code, co, _ := h.claudeRun(hooks.PreToolUse, 0, nil, bytes.NewReader(pre))
	if code != agents.ExitOK || co.HSO.PermissionDecision != "allow" || !strings.Contains(co.HSO.PermissionDecisionReason, "alice") {
		t.Errorf("PreToolUse allow: %d %+v", code, co)
	}
	perm := edit(t, pre, func(m map[string]any) { m["hook_event_name"] = hooks.PermissionRequest; delete(m, "tool_use_id") })
	code, co, _ = h.claudeRun(hooks.PermissionRequest, 0, nil, bytes.NewReader(perm))
	if code != agents.ExitOK || co.HSO.Decision == nil || co.HSO.Decision.Behavior != "allow" {
		t.Errorf("PermissionRequest allow: %d %+v", code, co)
	}
	var out bytes.Buffer
	post := edit(t, pre, func(m map[string]any) { m["hook_event_name"] = hooks.PostToolUse })
	if code := agents.Run(context.Background(), agents.Options{Adapter: claude.Adapter{}, Event: hooks.PostToolUse, NewEngine: h.engine},
		bytes.NewReader(post), &out, io.Discard); code != agents.ExitOK || out.Len() != 0 {
		t.Errorf("PostToolUse as approved: %d %q", code, out.String())
	}
	// Ask mode: PreToolUse asks with the full call; PermissionRequest then
	// stays silent so Claude Code's dialog shows.
	h.mode = hooks.ModeAsk
	other := h.bash("ls -la")
	code, co, _ = h.claudeRun(hooks.PreToolUse, 0, nil, bytes.NewReader(other))
	if code != agents.ExitOK || co.HSO.PermissionDecision != "ask" || !strings.Contains(co.HSO.PermissionDecisionReason, `"ls -la"`) {
		t.Errorf("ask mode: %d %+v", code, co)
	}
	out.Reset()
	if code := agents.Run(context.Background(), agents.Options{Adapter: claude.Adapter{}, Event: hooks.PermissionRequest, NewEngine: h.engine},
		bytes.NewReader(edit(t, other, func(m map[string]any) { m["hook_event_name"] = hooks.PermissionRequest })), &out, io.Discard); code != agents.ExitOK || out.Len() != 0 {
		t.Errorf("ask mode PermissionRequest: %d %q", code, out.String())
	}
	// A Write of 1 MB: the reason stays under Claude Code's cap.
	w := h.claude(hooks.PreToolUse, "Write", map[string]any{"file_path": filepath.Join(h.Project, "big.txt"), "content": strings.Repeat("x\n", 1<<19)}, "toolu_big")
	code, co, _ = h.claudeRun(hooks.PreToolUse, time.Minute, nil, bytes.NewReader(w))
	if len(co.HSO.PermissionDecisionReason) > 10000 || code != agents.ExitOK || co.HSO.PermissionDecision != "ask" {
		t.Errorf("1 MB write in ask mode: code %d, %q, a reason of %d bytes", code, co.HSO.PermissionDecision, len(co.HSO.PermissionDecisionReason))
	}
}

// Agent-chosen ESC and BEL bytes in a path reach the client escaped in the
// deny reason, as the CLI shows them.
func TestClaudeDenyReasonEscaped(t *testing.T) {
	h := newHarness(t)
	w := h.claude(hooks.PreToolUse, "Write", map[string]any{"file_path": h.Project + "/.claude/settings\x1b]0;approved\x07\x1b[2J.json", "content": "{}"}, "toolu_esc")
	code, co, stderr := h.claudeRun("", 0, nil, bytes.NewReader(w))
	if code != agents.ExitDeny {
		t.Fatalf("exit %d, want %d", code, agents.ExitDeny)
	}
	for _, s := range []string{co.HSO.PermissionDecisionReason, stderr} {
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("raw ESC or BEL reaches the client: %q", s)
		}
		if !strings.Contains(s, `settings\x1b]0;approved\x07\x1b[2J.json`) || !strings.Contains(s, hooks.ReasonProtected) {
			t.Errorf("the reason does not show the path escaped: %q", s)
		}
	}
}

// FuzzClaudePayload runs whatever bytes the agent sends through the real
// runner, Claude Code's adapter and a real engine with a key, state and an
// audit log but no grant and no approval: the answer is always a JSON
// answer or none (exit 0 or 2, never 1), and never an allow, since nothing
// was approved. A read-only tool is the one abstention (no output).
func FuzzClaudePayload(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "payloads", "*.json"))
	if len(files) == 0 {
		f.Fatal("no payload seeds")
	}
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte("\x00"))
	f.Add([]byte(`{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		h.t = t
		for _, event := range []string{hooks.PreToolUse, hooks.PermissionRequest} {
			var out bytes.Buffer
			code := agents.Run(context.Background(), agents.Options{Adapter: claude.Adapter{}, Event: event, Deadline: 10 * time.Second, NewEngine: h.engine},
				bytes.NewReader(in), &out, io.Discard)
			if code != agents.ExitOK && code != agents.ExitDeny {
				t.Fatalf("%s: exit %d for %q", event, code, in)
			}
			if out.Len() == 0 {
				continue
			}
			var co claudeOut
			if err := json.Unmarshal(out.Bytes(), &co); err != nil {
				t.Fatalf("%s: not JSON: %q", event, out.String())
			}
			if co.HSO.PermissionDecision == hooks.Allow || (co.HSO.Decision != nil && co.HSO.Decision.Behavior == hooks.Allow) {
				t.Fatalf("%s: allowed with no grant and no approval: %q -> %s", event, in, out.String())
			}
		}
	})
}
