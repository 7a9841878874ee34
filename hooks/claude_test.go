package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type hookOut struct {
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

func runHook(t *testing.T, opts ClaudeOptions, stdin io.Reader) (int, hookOut, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := RunClaude(context.Background(), opts, stdin, &out, &errb)
	var ho hookOut
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &ho); err != nil {
			t.Fatalf("hook output is not JSON: %q", out.String())
		}
		if ho.HSO.UpdatedInput != nil || (ho.HSO.Decision != nil && ho.HSO.Decision.UpdatedInput != nil) {
			t.Fatalf("hook output rewrites input: %s", out.String())
		}
	}
	return code, ho, errb.String()
}

// assertDeny checks a deny in the event's own format.
func assertDeny(t *testing.T, what, event string, code int, ho hookOut, reason string) {
	t.Helper()
	switch event {
	case PermissionRequest:
		if code != ExitOK || ho.HSO.HookEventName != PermissionRequest || ho.HSO.Decision == nil ||
			ho.HSO.Decision.Behavior != "deny" || !strings.Contains(ho.HSO.Decision.Message, reason) {
			t.Errorf("%s: code %d output %+v, want PermissionRequest deny %s", what, code, ho, reason)
		}
	default:
		if code != ExitDeny || ho.HSO.HookEventName != PreToolUse || ho.HSO.PermissionDecision != "deny" ||
			!strings.Contains(ho.HSO.PermissionDecisionReason, reason) {
			t.Errorf("%s: code %d output %+v, want PreToolUse deny %s", what, code, ho, reason)
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
	// bytes.Repeat and copy, not a loop: under -race a byte loop over
	// 32 MiB took seconds on a loaded machine and ran into the deadline.
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

func TestHookFailsClosed(t *testing.T) {
	h := newHarness(t)
	good, _ := json.Marshal(h.fixture("pretooluse-bash.json"))
	eng := func() (*Engine, error) { return h.eng(), nil }
	huge := func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"hook_event_name":"PreToolUse","tool_input":{"content":"`),
			&repeatReader{b: 'a', n: 300 << 20})
	}
	for _, event := range []string{PreToolUse, PermissionRequest, ""} {
		for what, in := range map[string]func() io.Reader{
			"malformed json": func() io.Reader { return strings.NewReader(`{"hook_event_name":`) },
			"empty stdin":    func() io.Reader { return strings.NewReader("") },
			"not an object":  func() io.Reader { return strings.NewReader(`[1,2]`) },
			"duplicate key": func() io.Reader {
				return strings.NewReader(strings.Replace(string(good), `"tool_input":{`, `"tool_input":{"command":"id",`, 1))
			},
			"300 MB payload": huge,
		} {
			// A generous deadline: this test is about decoding, not speed
			// (the deadline has its own test), and -race on a loaded
			// machine is slow.
			code, ho, _ := runHook(t, ClaudeOptions{Event: event, Deadline: time.Minute, NewEngine: eng}, in())
			assertDeny(t, event+": "+what, event, code, ho, ReasonMalformed)
		}
	}
	// Every one of those denies is in the audit log.
	malformedLogged := 0
	_ = h.eng().Audit.Read(func(_ []byte, e auditEntry) error {
		if e.Reason == ReasonMalformed && e.Decision == Deny {
			malformedLogged++
		}
		return nil
	})
	if malformedLogged != 15 {
		t.Errorf("%d malformed denies in the audit log, want 15", malformedLogged)
	}
	// Control: the same engine answers a good payload with a decision of its own.
	code, ho, stderr := runHook(t, ClaudeOptions{Event: PreToolUse, NewEngine: eng}, bytes.NewReader(good))
	assertDeny(t, "good payload, no grant", PreToolUse, code, ho, ReasonNoGrant)
	if !strings.Contains(stderr, ReasonNoGrant) {
		t.Errorf("deny reason not on stderr: %q", stderr)
	}
}

func TestHookDeadlinePanicAndSetupErrors(t *testing.T) {
	h := newHarness(t)
	call := h.fixture("pretooluse-bash.json")
	h.approve(h.decide(call))
	good, _ := json.Marshal(call)
	slow := func() (*Engine, error) {
		e := h.eng()
		e.LoadKey = func(ctx context.Context) ([]byte, error) {
			time.Sleep(3 * time.Second)
			return bytes.Clone(testMaster), nil
		}
		return e, nil
	}
	for _, event := range []string{PreToolUse, PermissionRequest} {
		payload := good
		if event == PermissionRequest {
			m := with(call, func(m map[string]any) { m["hook_event_name"] = PermissionRequest })
			payload, _ = json.Marshal(m)
		}
		start := time.Now()
		code, ho, _ := runHook(t, ClaudeOptions{Event: event, Deadline: 200 * time.Millisecond, NewEngine: slow}, bytes.NewReader(payload))
		assertDeny(t, event+": slow keyring", event, code, ho, ReasonDeadline)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("deadline of 200ms answered after %s", el)
		}
		code, ho, _ = runHook(t, ClaudeOptions{Event: event, NewEngine: func() (*Engine, error) { panic("boom") }}, bytes.NewReader(payload))
		assertDeny(t, event+": panic", event, code, ho, ReasonInternal)
		code, ho, _ = runHook(t, ClaudeOptions{Event: event, NewEngine: func() (*Engine, error) {
			return nil, os.ErrPermission
		}}, bytes.NewReader(payload))
		assertDeny(t, event+": setup error", event, code, ho, ReasonInternal)
	}
	// Control: with a prompt keyring the approved call is allowed.
	code, ho, _ := runHook(t, ClaudeOptions{Event: PreToolUse, NewEngine: func() (*Engine, error) { return h.eng(), nil }}, bytes.NewReader(good))
	if code != ExitOK || ho.HSO.PermissionDecision != "allow" {
		t.Fatalf("approved call: code %d %+v", code, ho)
	}
}

func TestHookEventMismatch(t *testing.T) {
	h := newHarness(t)
	good, _ := json.Marshal(h.fixture("pretooluse-bash.json"))
	code, ho, _ := runHook(t, ClaudeOptions{Event: PermissionRequest, NewEngine: func() (*Engine, error) { return h.eng(), nil }}, bytes.NewReader(good))
	assertDeny(t, "payload for another event", PermissionRequest, code, ho, ReasonMalformed)
}

func TestHookOutputs(t *testing.T) {
	h := newHarness(t)
	eng := func() (*Engine, error) { return h.eng(), nil }
	pre := h.fixture("pretooluse-bash.json")
	h.approve(h.decide(pre))
	b, _ := json.Marshal(pre)
	code, ho, _ := runHook(t, ClaudeOptions{Event: PreToolUse, NewEngine: eng}, bytes.NewReader(b))
	if code != ExitOK || ho.HSO.PermissionDecision != "allow" || !strings.Contains(ho.HSO.PermissionDecisionReason, "alice") {
		t.Errorf("PreToolUse allow: %d %+v", code, ho)
	}
	perm := with(pre, func(m map[string]any) { m["hook_event_name"] = PermissionRequest; delete(m, "tool_use_id") })
	b, _ = json.Marshal(perm)
	code, ho, _ = runHook(t, ClaudeOptions{Event: PermissionRequest, NewEngine: eng}, bytes.NewReader(b))
	if code != ExitOK || ho.HSO.Decision == nil || ho.HSO.Decision.Behavior != "allow" {
		t.Errorf("PermissionRequest allow: %d %+v", code, ho)
	}
	post := with(pre, func(m map[string]any) { m["hook_event_name"] = PostToolUse })
	b, _ = json.Marshal(post)
	var out bytes.Buffer
	if code := RunClaude(context.Background(), ClaudeOptions{Event: PostToolUse, NewEngine: eng}, bytes.NewReader(b), &out, io.Discard); code != ExitOK || out.Len() != 0 {
		t.Errorf("PostToolUse as approved: %d %q", code, out.String())
	}
	// Ask mode: PreToolUse asks with the full call; PermissionRequest then
	// stays silent so the dialog shows.
	askEng := func() (*Engine, error) { e := h.eng(); e.Mode = ModeAsk; return e, nil }
	other := with(pre, func(m map[string]any) { input(m)["command"] = "ls -la" })
	b, _ = json.Marshal(other)
	code, ho, _ = runHook(t, ClaudeOptions{Event: PreToolUse, NewEngine: askEng}, bytes.NewReader(b))
	if code != ExitOK || ho.HSO.PermissionDecision != "ask" || !strings.Contains(ho.HSO.PermissionDecisionReason, `"ls -la"`) {
		t.Errorf("ask mode: %d %+v", code, ho)
	}
	b, _ = json.Marshal(with(other, func(m map[string]any) { m["hook_event_name"] = PermissionRequest }))
	out.Reset()
	if code := RunClaude(context.Background(), ClaudeOptions{Event: PermissionRequest, NewEngine: askEng}, bytes.NewReader(b), &out, io.Discard); code != ExitOK || out.Len() != 0 {
		t.Errorf("ask mode PermissionRequest: %d %q", code, out.String())
	}
	// A Write of 1 MB: the deny reason stays under Claude Code's cap.
	w := with(h.fixture("pretooluse-write.json"), func(m map[string]any) { input(m)["content"] = strings.Repeat("x\n", 1<<19) })
	b, _ = json.Marshal(w)
	code, ho, _ = runHook(t, ClaudeOptions{Event: PreToolUse, Deadline: time.Minute, NewEngine: askEng}, bytes.NewReader(b))
	if len(ho.HSO.PermissionDecisionReason) > 10000 || code != ExitOK {
		t.Errorf("1 MB write in ask mode: code %d, reason of %d bytes", code, len(ho.HSO.PermissionDecisionReason))
	}
}

func FuzzHookPayload(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "payloads", "*.json"))
	if len(files) == 0 {
		f.Fatal("no payload seeds")
	}
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte("\x00"))
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		h := &harness{t: t, project: base, bin: base, now: time.Now()}
		_ = h
		var out bytes.Buffer
		code := RunClaude(context.Background(), ClaudeOptions{Event: PreToolUse, Deadline: 2 * time.Second, NewEngine: func() (*Engine, error) {
			return nil, os.ErrNotExist // decoding is what is fuzzed; any decodable call is denied here
		}}, bytes.NewReader(in), &out, io.Discard)
		if code != ExitDeny {
			t.Fatalf("exit %d for %q", code, in)
		}
		var ho hookOut
		if err := json.Unmarshal(out.Bytes(), &ho); err != nil || ho.HSO.PermissionDecision != "deny" {
			t.Fatalf("not a JSON deny: %q", out.String())
		}
	})
}
