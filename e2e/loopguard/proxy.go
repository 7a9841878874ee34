package loopguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// maxBody bounds one request body the proxy reads.
const maxBody = 64 << 20

// Proxy fronts a fake Messages API on loopback. Before it forwards a request
// it runs the hooks registered with OnToolResult, so a test can act (approve,
// change a file) between a denied call and the model's next turn, while the
// client waits for its answer. Give the client its URL:
// claudetest.Options.Env = append(..., "ANTHROPIC_BASE_URL="+p.URL()).
type Proxy struct {
	srv *httptest.Server

	mu     sync.Mutex
	hooks  []*resultHook
	errs   []error
	bodies [][]byte
}

type resultHook struct {
	id   string
	once sync.Once
	fn   func() error
}

// StartProxy starts a proxy in front of api; the caller must Close it.
func StartProxy(api *claudetest.FakeAPI) (*Proxy, error) {
	target, err := url.Parse(api.URL())
	if err != nil {
		return nil, fmt.Errorf("bad fake API URL: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen on loopback: %w", err)
	}
	p := &Proxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		FlushInterval: -1, // server-sent events go through as they come
	}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		p.before(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	p.srv.Listener.Close()
	p.srv.Listener = ln
	p.srv.Start()
	return p, nil
}

// URL is the base URL to give the client as ANTHROPIC_BASE_URL.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// OnToolResult runs fn once, before forwarding the first request that
// carries the tool_result of tool_use id; the client waits meanwhile. An
// error fn returns is kept for Err.
func (p *Proxy) OnToolResult(id string, fn func() error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hooks = append(p.hooks, &resultHook{id: id, fn: fn})
}

// Err joins the errors of the hooks that ran, and reports hooks that never
// ran (their tool_result never came).
func (p *Proxy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var msgs []string
	for _, e := range p.errs {
		msgs = append(msgs, e.Error())
	}
	for _, h := range p.hooks {
		ran := false
		h.once.Do(func() { ran = true })
		if ran {
			msgs = append(msgs, "no tool_result for "+h.id+" came, so its step never ran")
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

func (p *Proxy) before(body []byte) {
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	hooks := append([]*resultHook(nil), p.hooks...)
	p.mu.Unlock()
	results := RequestToolResults(body)
	for _, h := range hooks {
		for _, r := range results {
			if r.ToolUseID != h.id {
				continue
			}
			h.once.Do(func() {
				if err := h.fn(); err != nil {
					p.mu.Lock()
					p.errs = append(p.errs, fmt.Errorf("after the result of %s: %w", h.id, err))
					p.mu.Unlock()
				}
			})
		}
	}
}

// Results returns every distinct tool_result the client sent, in the order
// first seen. Unlike claudetest.FakeAPI.ToolResults it keeps two results
// that share a tool_use id when their texts differ (a retry under the same
// id).
func (p *Proxy) Results() []claudetest.ToolResult {
	p.mu.Lock()
	bodies := append([][]byte(nil), p.bodies...)
	p.mu.Unlock()
	var out []claudetest.ToolResult
	seen := map[claudetest.ToolResult]bool{}
	for _, b := range bodies {
		for _, r := range RequestToolResults(b) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// RequestToolResults returns the tool_result blocks of one Messages API
// request body, in conversation order.
func RequestToolResults(body []byte) []claudetest.ToolResult {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []claudetest.ToolResult
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, claudetest.ToolResult{ToolUseID: b.ToolUseID, Content: contentText(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

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
