package claudetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// maxRequestBody bounds one request body read by the fake API.
const maxRequestBody = 64 << 20

// subagentMarker is the system-prompt text that marks a subagent's request.
const subagentMarker = "cc_is_subagent=true"

// ToolCall is one tool_use block the fake model emits.
type ToolCall struct {
	ID    string          // tool_use id, e.g. "toolu_bash1"
	Name  string          // tool name, e.g. "Bash" or "mcp__bank__transfer"
	Input json.RawMessage // the tool input object as JSON
}

// Turn is one scripted model reply: either tool calls (several for parallel
// calls) or, when Calls is empty, a final text.
type Turn struct {
	Calls []ToolCall
	Text  string
	// Then, when set, makes the turn when its request comes, from the
	// tool results that request carries (a task's id to stop); it may
	// wait for what the test needs first.
	Then func(results []ToolResult) Turn
}

// Call returns a ToolCall whose input is input marshalled to JSON; input may
// be a json.RawMessage, a string holding JSON, or any marshallable value.
func Call(id, name string, input any) ToolCall {
	var raw json.RawMessage
	switch v := input.(type) {
	case json.RawMessage:
		raw = v
	case string:
		raw = json.RawMessage(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("claudetest: cannot marshal input of %s: %v", name, err))
		}
		raw = b
	}
	if !json.Valid(raw) {
		panic(fmt.Sprintf("claudetest: input of %s is not valid JSON: %s", name, raw))
	}
	return ToolCall{ID: id, Name: name, Input: raw}
}

// Tools returns a turn that makes the given tool calls in one message.
func Tools(calls ...ToolCall) Turn { return Turn{Calls: calls} }

// Text returns a turn that ends the conversation with text.
func Text(s string) Turn { return Turn{Text: s} }

// Script is what the fake model says: Main for the main agent, Subagent for
// requests that carry cc_is_subagent=true. Turns are consumed in order, one
// per request that offers tools; when a list runs out the reply is "done".
type Script struct {
	Main     []Turn
	Subagent []Turn
}

// Request is one request the fake API received.
type Request struct {
	Path     string
	Body     []byte
	Subagent bool // system prompt carried cc_is_subagent=true
	Side     bool // request without tools (title, summary and the like)
}

// ToolResult is one tool_result block the client sent back.
type ToolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

// FakeAPI is a scripted streaming Messages API on 127.0.0.1.
type FakeAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	script   Script
	requests []Request
	unknown  []string
}

// NewFakeAPI starts a fake API serving script and closes it at test cleanup.
func NewFakeAPI(t testing.TB, script Script) *FakeAPI {
	t.Helper()
	f, err := StartFakeAPI(script)
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// StartFakeAPI starts a fake API serving script; the caller must Close it.
func StartFakeAPI(script Script) (*FakeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen on loopback: %w", err)
	}
	f := &FakeAPI{script: script}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Listener.Close()
	f.srv.Listener = ln
	f.srv.Start()
	return f, nil
}

// URL is the base URL to give the client as ANTHROPIC_BASE_URL.
func (f *FakeAPI) URL() string { return f.srv.URL }

// Close stops the server.
func (f *FakeAPI) Close() { f.srv.Close() }

// Requests returns a copy of every request received so far.
func (f *FakeAPI) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// UnknownPaths returns the paths of requests the fake did not understand.
func (f *FakeAPI) UnknownPaths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.unknown...)
}

// Remaining reports how many scripted main and subagent turns are unused.
func (f *FakeAPI) Remaining() (main, subagent int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.script.Main), len(f.script.Subagent)
}

// ToolResults returns the tool_result blocks found in the recorded requests,
// once per tool_use id, in the order first seen.
func (f *FakeAPI) ToolResults() []ToolResult {
	var out []ToolResult
	seen := map[string]bool{}
	for _, r := range f.Requests() {
		for _, tr := range RequestToolResults(r.Body) {
			if !seen[tr.ToolUseID] {
				seen[tr.ToolUseID] = true
				out = append(out, tr)
			}
		}
	}
	return out
}

// RequestToolResults returns the tool_result blocks of one Messages API
// request body, in order (nil when it does not parse).
func RequestToolResults(body []byte) []ToolResult {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []ToolResult
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // plain string content
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Content: contentText(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

// ToolResult returns the tool_result for id, or false if none was sent.
func (f *FakeAPI) ToolResult(id string) (ToolResult, bool) {
	for _, r := range f.ToolResults() {
		if r.ToolUseID == id {
			return r, true
		}
	}
	return ToolResult{}, false
}

// contentText flattens tool_result content: a string, or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (f *FakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"input_tokens":100}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		f.messages(w, r, body)
	default:
		f.mu.Lock()
		f.unknown = append(f.unknown, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		http.NotFound(w, r)
	}
}

func (f *FakeAPI) messages(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model  string          `json:"model"`
		System json.RawMessage `json:"system"`
		Tools  json.RawMessage `json:"tools"`
		Stream bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	rec := Request{
		Path:     r.URL.Path,
		Body:     body,
		Subagent: bytes.Contains(req.System, []byte(subagentMarker)),
		Side:     len(req.Tools) == 0 || string(req.Tools) == "null" || string(req.Tools) == "[]",
	}
	turn := Text("ok")
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	if !rec.Side {
		q := &f.script.Main
		if rec.Subagent {
			q = &f.script.Subagent
		}
		if len(*q) > 0 {
			turn = (*q)[0]
			*q = (*q)[1:]
		} else {
			turn = Text("done")
		}
	}
	f.mu.Unlock()
	if turn.Then != nil {
		turn = turn.Then(RequestToolResults(body))
	}

	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	if !req.Stream {
		writeJSONMessage(w, model, turn)
		return
	}
	writeSSE(w, model, turn)
}

func message(model string, content []any, stop string) map[string]any {
	return map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 10},
	}
}

func writeJSONMessage(w http.ResponseWriter, model string, turn Turn) {
	var content []any
	stop := "end_turn"
	if len(turn.Calls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, c := range turn.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Input})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(message(model, content, stop))
}

func writeSSE(w http.ResponseWriter, model string, turn Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if fl != nil {
			fl.Flush()
		}
	}
	start := message(model, []any{}, "")
	start["stop_reason"] = nil
	send("message_start", map[string]any{"type": "message_start", "message": start})
	stop := "end_turn"
	if len(turn.Calls) == 0 {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": turn.Text}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	}
	for i, c := range turn.Calls {
		stop = "tool_use"
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(c.Input)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
