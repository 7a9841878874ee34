package claudetest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests need no client: they check the fake API and Install's error
// paths on their own.

type frame struct {
	event string
	data  map[string]any
}

func post(t *testing.T, api *FakeAPI, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(api.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readFrames(t *testing.T, r io.Reader) []frame {
	t.Helper()
	var out []frame
	sc := bufio.NewScanner(r)
	var ev string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != ev {
				t.Errorf("event %q carries data type %v", ev, d["type"])
			}
			out = append(out, frame{ev, d})
		}
	}
	return out
}

func events(fs []frame) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.event)
	}
	return strings.Join(s, ",")
}

const mainReq = `{"model":"m","stream":true,"system":[{"type":"text","text":"You are Claude"}],"tools":[{"name":"Bash"}],"messages":[]}`
const subReq = `{"model":"m","stream":true,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_is_subagent=true;"}],"tools":[{"name":"Bash"}],"messages":[]}`
const sideReq = `{"model":"m","stream":true,"system":"title please","messages":[]}`

func TestFakeAPIScript(t *testing.T) {
	api := NewFakeAPI(t, Script{
		Main: []Turn{Tools(
			Call("toolu_1", "Bash", map[string]any{"command": "ls"}),
			Call("toolu_2", "Read", `{"file_path":"/x"}`),
		)},
		Subagent: []Turn{Text("from the subagent")},
	})

	// A side request does not consume the script.
	side := readFrames(t, post(t, api, "/v1/messages?beta=true", sideReq).Body)
	if got := events(side); got != "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop" {
		t.Fatalf("side frames = %s", got)
	}

	// The subagent request gets the subagent turn, not the main one.
	sub := readFrames(t, post(t, api, "/v1/messages?beta=true", subReq).Body)
	if d := sub[2].data["delta"].(map[string]any); d["text"] != "from the subagent" {
		t.Fatalf("subagent delta = %v", d)
	}

	// The main request gets both tool calls, then stop_reason tool_use.
	m := readFrames(t, post(t, api, "/v1/messages?beta=true", mainReq).Body)
	if got := events(m); got != "message_start,content_block_start,content_block_delta,content_block_stop,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop" {
		t.Fatalf("main frames = %s", got)
	}
	block := m[4].data["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["id"] != "toolu_2" || block["name"] != "Read" || m[4].data["index"] != 1.0 {
		t.Errorf("second block = %v", m[4].data)
	}
	if pj := m[5].data["delta"].(map[string]any)["partial_json"]; pj != `{"file_path":"/x"}` {
		t.Errorf("partial_json = %v", pj)
	}
	if sr := m[7].data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason = %v", sr)
	}

	// The script is used up: the next main request ends with text.
	done := readFrames(t, post(t, api, "/v1/messages", mainReq).Body)
	if d := done[2].data["delta"].(map[string]any); d["text"] != "done" {
		t.Errorf("after the script: %v", d)
	}
	if sr := done[4].data["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
		t.Errorf("stop_reason = %v", sr)
	}

	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(post(t, api, "/v1/messages/count_tokens", mainReq).Body).Decode(&ct); err != nil || ct.InputTokens <= 0 {
		t.Errorf("count_tokens = %+v, %v", ct, err)
	}
	if resp := post(t, api, "/v1/other", "{}"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path status %d", resp.StatusCode)
	}
	if u := api.UnknownPaths(); len(u) != 1 || u[0] != "POST /v1/other" {
		t.Errorf("unknown paths = %v", u)
	}
	reqs := api.Requests()
	if len(reqs) != 4 || !reqs[0].Side || !reqs[1].Subagent || reqs[2].Subagent || reqs[2].Side {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestFakeAPIToolResults(t *testing.T) {
	api := NewFakeAPI(t, Script{})
	msgs := func(s string) string {
		return `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":` + s + `}`
	}
	first := `[{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"denied: nope","is_error":true}]}]`
	second := `[{"role":"user","content":"go"},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"denied: nope","is_error":true}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"line 1"},{"type":"image"},{"type":"text","text":"line 2"}]}]}]`
	post(t, api, "/v1/messages", msgs(first))
	post(t, api, "/v1/messages", msgs(second))
	got := api.ToolResults()
	want := []ToolResult{
		{ToolUseID: "toolu_1", Content: "denied: nope", IsError: true},
		{ToolUseID: "toolu_2", Content: "line 1\nline 2"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ToolResults = %+v, want %+v", got, want)
	}
	if _, ok := api.ToolResult("toolu_3"); ok {
		t.Error("ToolResult found an id that was never sent")
	}
}

func TestInstallWithoutNPM(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := InstallIn(t.TempDir())
	if !errors.Is(err, ErrNoNPM) {
		t.Fatalf("err = %v, want ErrNoNPM", err)
	}
}

// When npm fails, the error carries the tail of its output.
func TestInstallNPMFailure(t *testing.T) {
	bin := t.TempDir()
	npm := "#!/bin/sh\necho 'npm error code E404'\necho 'npm error 404 Not Found' >&2\nexit 1\n"
	for name, body := range map[string]string{"npm": npm, "node": "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	_, err := InstallIn(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "npm error 404 Not Found") || !strings.Contains(err.Error(), Package) {
		t.Fatalf("err = %v, want the npm output tail and the package", err)
	}
}

func TestWriteSettingsRejectsBadJSON(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSettings(dir, `{"PreToolUse": [`); err == nil {
		t.Fatal("WriteSettings accepted invalid JSON")
	}
	if err := WriteSettings(dir, HooksJSON(map[string][]MatcherGroup{"PreToolUse": {{Matcher: "*", Hooks: []Hook{FakeHook("/bin/x", "-exit", "2")}}}})); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]MatcherGroup `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	h := s.Hooks["PreToolUse"][0].Hooks[0]
	if h.Command != "/bin/x" || strings.Join(h.Args, " ") != HookArg+" -exit 2" || h.Type != "command" {
		t.Errorf("hook = %+v", h)
	}
}
