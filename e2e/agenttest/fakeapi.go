//go:build unix

package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Script is what the fake model does in one conversation: it asks for one
// shell call per entry of Commands, in order, then ends with a text answer.
// Between, when set, runs after the client reported the outcome of call i
// and before the model asks for call i+1 (the test plays the human there).
type Script struct {
	Commands []string
	Between  func(i int, output string)
	// Tool and Arg name the shell tool and its command argument, for the
	// Responses API (default exec_command {cmd}, Codex's; Copilot CLI's is
	// bash {command}).
	Tool, Arg string
	// Extra, when set, adds arguments to call i (Extra[i]), e.g. Codex's
	// workdir.
	Extra []map[string]any
	// Tools, when set, names the tool of call i (Tools[i]; "" for Tool),
	// e.g. a read_file before an edit.
	Tools []string
	// Keys, when set, names the argument that holds call i's command
	// (Keys[i]; "" for Arg), e.g. Qwen Code's tool_call {name,
	// arguments}, whose command is the tool's name.
	Keys []string
	// Custom makes the Responses API's calls free-form (custom_tool_call):
	// each command is the tool's whole input, as GPT-5 models send
	// apply_patch.
	Custom bool
}

// FakeAPI is a scripted model API on 127.0.0.1. Its protocol (OpenAI
// Responses or Gemini) is chosen by the constructor.
type FakeAPI struct {
	URL string

	mu      sync.Mutex
	script  Script
	next    int      // the next call to ask for
	outputs []string // what the client reported for each call
	srv     *http.Server
	ln      net.Listener
}

// Outputs returns what the client reported back for each call, in order.
func (f *FakeAPI) Outputs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.outputs...)
}

// Output returns the client's report of call i ("" when there is none).
func (f *FakeAPI) Output(i int) string {
	o := f.Outputs()
	if i < len(o) {
		return o[i]
	}
	return ""
}

func start(t testing.TB, s Script, h func(f *FakeAPI) http.Handler) *FakeAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &FakeAPI{script: s, ln: ln, URL: "http://" + ln.Addr().String()}
	f.srv = &http.Server{Handler: h(f)}
	go func() { _ = f.srv.Serve(ln) }()
	t.Cleanup(func() { _ = f.srv.Close() })
	return f
}

// turn records the output of the previous call (when output is not nil),
// runs Between, and returns the command to ask for next ("" for the final
// text), its extra arguments, its tool (Script.Tools, else Script.Tool)
// and the argument that holds the command (Script.Keys, else Script.Arg).
func (f *FakeAPI) turn(output *string) (string, map[string]any, string, string) {
	f.mu.Lock()
	if output != nil && len(f.outputs) < f.next {
		f.outputs = append(f.outputs, *output)
		i := len(f.outputs) - 1
		between := f.script.Between
		f.mu.Unlock()
		if between != nil {
			between(i, *output)
		}
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	if f.next < len(f.script.Commands) && len(f.outputs) == f.next {
		c := f.script.Commands[f.next]
		var extra map[string]any
		if f.next < len(f.script.Extra) {
			extra = f.script.Extra[f.next]
		}
		tool, key := f.script.Tool, f.script.Arg
		if f.next < len(f.script.Tools) && f.script.Tools[f.next] != "" {
			tool = f.script.Tools[f.next]
		}
		if f.next < len(f.script.Keys) && f.script.Keys[f.next] != "" {
			key = f.script.Keys[f.next]
		}
		f.next++
		return c, extra, tool, key
	}
	return "", nil, "", ""
}

// counter names a fake API's responses in turn, prefix_1, prefix_2...
// (the client may send requests concurrently).
func counter(prefix string) func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s_%d", prefix, n)
	}
}

// decode reads a request's JSON body into v (zero where it does not parse).
func decode(r *http.Request, v any) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	_ = json.Unmarshal(body, v)
}

// args is a call's arguments: key's value and the script's extra ones.
func args(key string, v any, extra map[string]any) map[string]any {
	a := map[string]any{key: v}
	maps.Copy(a, extra)
	return a
}

func sse(w http.ResponseWriter) func(event string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return func(event string, v any) {
		b, _ := json.Marshal(v)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
}

// NewResponsesAPI serves OpenAI's Responses API (POST /v1/responses,
// streamed) as Codex CLI and Copilot CLI (BYOK) call it: the model asks for
// the shell tool Script.Tool.
func NewResponsesAPI(t testing.TB, s Script) *FakeAPI {
	if s.Tool == "" {
		s.Tool, s.Arg = "exec_command", "cmd"
	}
	return start(t, s, func(f *FakeAPI) http.Handler {
		ids := counter("resp")
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
				http.NotFound(w, r)
				return
			}
			var req struct {
				Input []map[string]any `json:"input"`
			}
			decode(r, &req)
			var out *string
			for i := len(req.Input) - 1; i >= 0; i-- {
				if ty := req.Input[i]["type"]; ty == "function_call_output" || ty == "custom_tool_call_output" {
					s := fmt.Sprint(req.Input[i]["output"])
					out = &s
					break
				}
			}
			cmd, extra, tool, key := f.turn(out)
			id := ids()
			send := sse(w)
			send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
			var item map[string]any
			if cmd != "" && s.Custom {
				item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + id, "status": "completed",
					"name": s.Tool, "input": cmd, "call_id": "call_" + id}
			} else if cmd != "" {
				name, a := tool, args(key, cmd, extra)
				if cmd == WriteStdin {
					// Codex's write_stdin into the command the last call
					// left running ("Process running with session ID N").
					name, a = "write_stdin", args("session_id", sessionID(req.Input), extra)
				}
				arguments, _ := json.Marshal(a)
				item = map[string]any{"type": "function_call", "id": "fc_" + id, "status": "completed",
					"name": name, "arguments": string(arguments), "call_id": "call_" + id}
			} else {
				item = map[string]any{"type": "message", "role": "assistant", "id": "msg_" + id, "status": "completed",
					"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
			}
			send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
			send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
			send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
				"id": id, "object": "response", "status": "completed", "output": []any{item},
				"usage": map[string]any{"input_tokens": 1, "input_tokens_details": map[string]any{"cached_tokens": 0},
					"output_tokens": 1, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 2}}})
		})
	})
}

// WriteStdin, as a command of a Script for Codex, is Codex's write_stdin
// into the command the last call left running (its Extra gives "chars").
const WriteStdin = "SESSION"

var sessionIDRe = regexp.MustCompile(`session ID (\d+)`)

// sessionID is the id of the last running command Codex reported.
func sessionID(input []map[string]any) int {
	for i := len(input) - 1; i >= 0; i-- {
		if out, ok := input[i]["output"].(string); ok {
			if m := sessionIDRe.FindStringSubmatch(out); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	return -1
}

// NewGeminiAPI serves the Gemini API as Gemini CLI calls it
// (models/*:streamGenerateContent?alt=sse for the conversation,
// :generateContent for side requests): the model asks for
// the shell tool Script.Tool (default run_shell_command {command}).
func NewGeminiAPI(t testing.TB, s Script) *FakeAPI {
	if s.Tool == "" {
		s.Tool, s.Arg = "run_shell_command", "command"
	}
	return start(t, s, func(f *FakeAPI) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Contents []struct {
					Parts []map[string]any `json:"parts"`
				} `json:"contents"`
				Tools []any `json:"tools"`
			}
			decode(r, &req)
			candidate := func(part map[string]any) map[string]any {
				return map[string]any{"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
					"content": map[string]any{"role": "model", "parts": []any{part}}}},
					"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
			}
			switch {
			case strings.Contains(r.URL.Path, ":countTokens"):
				_ = json.NewEncoder(w).Encode(map[string]any{"totalTokens": 1})
				return
			case !strings.Contains(r.URL.Path, ":streamGenerateContent") || len(req.Tools) == 0:
				// Side requests (model routing, summaries) get a client
				// error, which Gemini CLI does not retry: it falls back to
				// its defaults. A well-formed answer that is not what they
				// expect is retried with back-off, for minutes.
				http.Error(w, `{"error":{"code":400,"message":"not scripted","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
				return
			}
			var out *string
			if n := len(req.Contents); n > 0 {
				for _, p := range req.Contents[n-1].Parts {
					if fr, ok := p["functionResponse"].(map[string]any); ok {
						b, _ := json.Marshal(fr["response"])
						s := string(b)
						out = &s
					}
				}
			}
			cmd, extra, tool, key := f.turn(out)
			send := sse(w)
			if cmd != "" {
				send("", candidate(map[string]any{"functionCall": map[string]any{"name": tool, "args": args(key, cmd, extra)}}))
			} else {
				send("", candidate(map[string]any{"text": "done"}))
			}
		})
	})
}

// NewChatAPI serves OpenAI's Chat Completions API (POST
// /v1/chat/completions, streamed or not) as Qwen Code and OpenCode (through
// its OpenAI-compatible provider) call it: the model asks for the shell
// tool Script.Tool (default run_shell_command {command}, Qwen Code's).
// Requests without tools (titles, summaries) get a short text answer.
func NewChatAPI(t testing.TB, s Script) *FakeAPI {
	if s.Tool == "" {
		s.Tool, s.Arg = "run_shell_command", "command"
	}
	return start(t, s, func(f *FakeAPI) http.Handler {
		ids := counter("chat")
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/models") {
				_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model"}}})
				return
			}
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				http.NotFound(w, r)
				return
			}
			var req struct {
				Messages []map[string]any `json:"messages"`
				Tools    []any            `json:"tools"`
				Stream   bool             `json:"stream"`
			}
			decode(r, &req)
			id := ids()
			delta := map[string]any{"role": "assistant", "content": "done"}
			finish := "stop"
			if len(req.Tools) > 0 {
				var out *string
				if k := len(req.Messages); k > 0 && req.Messages[k-1]["role"] == "tool" {
					s := fmt.Sprint(req.Messages[k-1]["content"])
					out = &s
				}
				if cmd, extra, tool, key := f.turn(out); cmd != "" {
					arguments, _ := json.Marshal(args(key, cmd, extra))
					delta = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": "call_" + id,
						"type": "function", "function": map[string]any{"name": tool, "arguments": string(arguments)}}}}
					finish = "tool_calls"
				}
			}
			usage := map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
			if !req.Stream {
				_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": "fake-model",
					"choices": []any{map[string]any{"index": 0, "message": delta, "finish_reason": finish}}, "usage": usage})
				return
			}
			send := sse(w)
			chunk := func(choice map[string]any, extra map[string]any) {
				m := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": "fake-model", "choices": []any{choice}}
				maps.Copy(m, extra)
				send("", m)
			}
			chunk(map[string]any{"index": 0, "delta": delta, "finish_reason": nil}, nil)
			chunk(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}, map[string]any{"usage": usage})
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
		})
	})
}
