package hooks

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

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/internal/enginetest"
	"github.com/loopguard/loopguard/token"
)

// harness is an engine over a private state dir, a project dir and a
// trusted bin dir of stub executables.
type harness struct {
	t testing.TB
	enginetest.World
	eng    func() *Engine
	keyErr error
	now    time.Time
}

func newHarness(t *testing.T) *harness { return newHarnessTB(t) }

func newHarnessTB(t testing.TB) *harness {
	t.Helper()
	w := enginetest.New(t, "echo", "ls", "git", "go", "rm", "cat", "curl", "sh", "bash", "secret-tool")
	base, st := w.Base, w.Store
	h := &harness{t: t, World: w, now: time.Now()}
	h.eng = func() *Engine {
		return &Engine{
			Store:   st,
			Audit:   audit.Open(filepath.Join(st.Dir, "audit")),
			LoadKey: enginetest.LoadKey(&h.keyErr),
			Now:     func() time.Time { return h.now },
			// The project named as Claude Code names it (CLAUDE_PROJECT_DIR).
			Env: Env{Path: h.Bin, Home: w.Home, Trusted: []string{h.Bin},
				Self: filepath.Join(base, "bin", "loopguard"), StateDir: st.Dir, ProjectDir: h.Project},
		}
	}
	return h
}

var recordDir = regexp.MustCompile(`/tmp/loopguard-record-[0-9]+/[a-z-]+/project`)

// fixture loads a payload recorded from the real client, with its project
// dir moved to the harness's.
func (h *harness) fixture(name string) map[string]any {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "payloads", name))
	if err != nil {
		h.t.Fatal(err)
	}
	data = recordDir.ReplaceAll(data, []byte(h.Project))
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

func (h *harness) call(payload map[string]any) *Call {
	h.t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		h.t.Fatal(err)
	}
	// Claude Code's payload, read as agents/claude reads it (that package
	// imports this one, so its decoder cannot be used here; agents/all's
	// tests run the two together).
	v, err := token.Decode(b)
	if err != nil {
		h.t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	str := func(k string) string { s, _ := m[k].(string); return s }
	in, _ := m["tool_input"].(map[string]any)
	c := &Call{Event: str("hook_event_name"), SessionID: str("session_id"), AgentID: str("agent_id"), AgentType: str("agent_type"),
		Cwd: str("cwd"), ToolName: str("tool_name"), ToolUseID: str("tool_use_id"), PermissionMode: str("permission_mode"), ToolInput: in}
	c.Rewrite = c.Event == PreToolUse || c.Event == PermissionRequest
	return c
}

func (h *harness) decide(payload map[string]any) Decision {
	h.t.Helper()
	return h.eng().Decide(context.Background(), h.call(payload))
}

// approve plays the human: approve the pending call the decision names.
func (h *harness) approve(d Decision) *token.Grant {
	h.t.Helper()
	if d.Pending == "" {
		h.t.Fatalf("decision %+v has no pending call to approve", d)
	}
	p, err := h.Store.GetPending(d.Pending)
	if err != nil {
		h.t.Fatal(err)
	}
	keys, _ := token.NewKeys(enginetest.Master)
	// The human approves after what the hook let through before it (the
	// file tools' writes it noted, at the real time): an approval made at
	// the harness's frozen clock would come before them
	// (ChangedAfter).
	if now := time.Now(); h.now.Before(now) {
		h.now = now
	}
	g, err := Approve(h.Store, keys, p, "alice", 10*time.Minute, h.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return g
}

// grantScope plays the human minting a scoped grant.
func (h *harness) grantScope(rule, session, agent string) *token.Grant {
	h.t.Helper()
	return h.mintScope("alice", rule, session, agent)
}

// mintScope mints and stores a scoped grant of rule, pinned in the
// harness's project, as principal: with the real key and none of grant's
// refusals.
func (h *harness) mintScope(principal, rule, session, agent string) *token.Grant {
	h.t.Helper()
	return h.PutScoped(h.t, h.Pinned(h.t, rule), principal, agent, session, h.now)
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

func with(m map[string]any, f func(m map[string]any)) map[string]any {
	c := clone(m)
	f(c)
	return c
}

func input(m map[string]any) map[string]any { return m["tool_input"].(map[string]any) }

// bashCall is the Bash fixture with command cmd.
func (h *harness) bashCall(cmd string) map[string]any {
	return withInput(h.fixture("pretooluse-bash.json"), "command", cmd)
}

// writeCall is the Write fixture with file_path path.
func (h *harness) writeCall(path string) map[string]any {
	return withInput(h.fixture("pretooluse-write.json"), "file_path", path)
}

// withInput is a copy of the payload m with its tool input's key set to v.
func withInput(m map[string]any, key string, v any) map[string]any {
	return with(m, func(c map[string]any) { input(c)[key] = v })
}

func expect(t *testing.T, what string, d Decision, behavior, reason string) {
	t.Helper()
	if d.Behavior != behavior || d.Reason != reason {
		t.Errorf("%s: got %s/%s (%s), want %s/%s", what, d.Behavior, d.Reason, d.Message, behavior, reason)
	}
}

type auditEntry = audit.Entry

// wantText reports each of want that got lacks and each of not it has.
func wantText(t *testing.T, what, got string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: lacks %q:\n%s", what, w, got)
		}
	}
	for _, w := range not {
		if strings.Contains(got, w) {
			t.Errorf("%s: has %q:\n%s", what, w, got)
		}
	}
}
