package loopguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
	msgs   int
	turns  int // main-agent requests that offer tools, so far
	steps  []*step
	errs   []error
	bodies [][]byte
}

// step is an action the proxy runs once, before forwarding the first
// request that matches.
type step struct {
	name  string
	match func(results []claudetest.ToolResult, turn int) bool
	once  sync.Once
	fn    func() error
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
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(target) },
		FlushInterval:  -1, // server-sent events go through as they come
		ModifyResponse: p.uniqueMessageIDs,
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

// uniqueMessageIDs gives every message the fake API streams its own id, as
// the real API does: the fake names them all "msg_fake", and the client
// merges consecutive assistant messages that share an id.
func (p *Proxy) uniqueMessageIDs(res *http.Response) error {
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return nil
	}
	p.mu.Lock()
	p.msgs++
	id := fmt.Sprintf(`"id":"msg_fake_%04d"`, p.msgs)
	p.mu.Unlock()
	pr, pw := io.Pipe()
	body := res.Body
	go func() {
		r := bufio.NewReaderSize(body, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				line = bytes.Replace(line, []byte(`"id":"msg_fake"`), []byte(id), 1)
				if _, werr := pw.Write(line); werr != nil {
					body.Close()
					return
				}
			}
			if err != nil {
				body.Close()
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	res.Body = pr
	res.ContentLength = -1
	res.Header.Del("Content-Length")
	return nil
}

// URL is the base URL to give the client as ANTHROPIC_BASE_URL.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// OnToolResult runs fn once, before forwarding the first request that
// carries the tool_result of tool_use id; the client waits meanwhile. An
// error fn returns is kept for Err.
func (p *Proxy) OnToolResult(id string, fn func() error) {
	p.add(&step{name: "the step after the result of " + id, fn: fn,
		match: func(results []claudetest.ToolResult, _ int) bool {
			for _, r := range results {
				if r.ToolUseID == id {
					return true
				}
			}
			return false
		}})
}

// OnTurn runs fn once, before forwarding the main agent's n-th request for a
// turn (the one whose reply is Script.Main[n-1]; side requests and
// subagents' requests do not count).
func (p *Proxy) OnTurn(n int, fn func() error) {
	p.add(&step{name: fmt.Sprintf("the step before turn %d", n), fn: fn,
		match: func(_ []claudetest.ToolResult, turn int) bool { return turn == n }})
}

func (p *Proxy) add(s *step) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, s)
}

// Err joins the errors of the steps that ran, and reports steps that never
// ran (no request matched).
func (p *Proxy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var msgs []string
	for _, e := range p.errs {
		msgs = append(msgs, e.Error())
	}
	for _, st := range p.steps {
		ran := false
		st.once.Do(func() { ran = true })
		if ran {
			msgs = append(msgs, st.name+" never ran: no request matched")
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

func (p *Proxy) before(body []byte) {
	turn := 0
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	if isMainTurn(body) {
		p.turns++
		turn = p.turns
	}
	steps := append([]*step(nil), p.steps...)
	p.mu.Unlock()
	results := claudetest.RequestToolResults(body)
	for _, st := range steps {
		if !st.match(results, turn) {
			continue
		}
		st.once.Do(func() {
			if err := st.fn(); err != nil {
				p.mu.Lock()
				p.errs = append(p.errs, fmt.Errorf("%s: %w", st.name, err))
				p.mu.Unlock()
			}
		})
	}
}

// subagentMarker marks a subagent's request (see claudetest).
const subagentMarker = "cc_is_subagent=true"

// isMainTurn reports a request of the main agent that offers tools: one the
// fake API answers from Script.Main.
func isMainTurn(body []byte) bool {
	var req struct {
		System json.RawMessage `json:"system"`
		Tools  json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	side := len(req.Tools) == 0 || string(req.Tools) == "null" || string(req.Tools) == "[]"
	return !side && !bytes.Contains(req.System, []byte(subagentMarker))
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
		for _, r := range claudetest.RequestToolResults(b) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}
