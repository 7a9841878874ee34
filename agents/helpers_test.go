package agents_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// TestOutputWrite: an answer that cannot be marshalled is replaced by the
// host's deny, which exits as that host's denies do (exit 2 with the reason
// on stderr where the host reads exit 2; exit 0 where it reads only the
// JSON). The controls: a good answer is written as it is, exit 2 only
// when asked for.
func TestOutputWrite(t *testing.T) {
	const deny = `{"decision":"deny"}`
	bad := map[string]any{"x": math.NaN()}
	good := map[string]any{"decision": "allow"}
	for _, c := range []struct {
		name      string
		o         agents.Output
		out       any
		exit2     bool
		code      int
		stdout    string
		stderrHas string
	}{
		{"bad, exit-2 host", agents.Output{Deny: deny, ExitDeny: true}, bad, false, agents.ExitDeny, deny + "\n", "why"},
		{"bad, JSON-only host", agents.Output{Deny: deny}, bad, false, agents.ExitOK, deny + "\n", ""},
		{"bad, JSON-only host, asked for exit 2", agents.Output{Deny: deny}, bad, true, agents.ExitOK, deny + "\n", ""},
		{"good (control)", agents.Output{Deny: deny, ExitDeny: true}, good, false, agents.ExitOK, `{"decision":"allow"}` + "\n", ""},
		{"good deny, exit 2 (control)", agents.Output{Deny: deny, ExitDeny: true}, good, true, agents.ExitDeny, `{"decision":"allow"}` + "\n", "why"},
	} {
		var out, errOut bytes.Buffer
		code := c.o.Write(c.out, c.exit2, "why", &out, &errOut)
		if code != c.code || out.String() != c.stdout || (c.stderrHas == "") != (errOut.Len() == 0) || !strings.Contains(errOut.String(), c.stderrHas) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.name, code, out.String(), errOut.String())
		}
	}
}

// TestShellAndFileTool: a shell tool is Bash, and its directory moves the
// cwd the command is judged in, relative to the call's; one that is not a
// string is malformed, naming the host's tool and field. A file tool gains the
// absolute path; one without a path is malformed. Controls: no directory
// keeps the cwd, an absolute one is taken as it is.
func TestShellAndFileTool(t *testing.T) {
	call := func(in map[string]any) *hooks.Call {
		return &hooks.Call{ToolName: "run_shell_command", Cwd: "/p", ToolInput: in}
	}
	for dir, want := range map[any]string{nil: "/p", "": "/p", "sub/../x": "/p/x", "/etc": "/etc", "..": "/"} {
		c := call(map[string]any{"dir": dir})
		if err := agents.Shell(c, "dir"); err != nil || c.Cwd != want || c.ToolName != "Bash" {
			t.Errorf("dir %v: %s in %s (%v), want Bash in %s", dir, c.ToolName, c.Cwd, err, want)
		}
	}
	if err := agents.Shell(call(map[string]any{"dir": 1.0}), "dir"); err == nil || !strings.HasSuffix(err.Error(), ": run_shell_command dir is not a string") {
		t.Errorf("a number as the directory: %v", err)
	}
	c := &hooks.Call{ToolName: "write", Cwd: "/p", ToolInput: map[string]any{"filePath": "a.go", "content": "x"}}
	if err := agents.FileTool(c, "filePath", "file_path", "Write"); err != nil || c.ToolName != "Write" ||
		c.ToolInput["file_path"] != "/p/a.go" || c.ToolInput["filePath"] != "a.go" {
		t.Errorf("write a.go: %v %v", c, err)
	}
	for _, in := range []map[string]any{{}, {"filePath": ""}, {"filePath": []any{"a"}}} {
		c := &hooks.Call{ToolName: "write", Cwd: "/p", ToolInput: in}
		if err := agents.FileTool(c, "filePath", "file_path", "Write"); err == nil || c.ToolName != "write" {
			t.Errorf("%v: %v, tool %s", in, err, c.ToolName)
		}
	}
}

// TestKeysCall: a decoder's end reads the session (bound to the agent),
// the cwd and the tool under the host's keys, then the input as an object,
// maps the tool and finishes the call; a missing or non-string field, an
// input that is not an object, a mapping that fails and a call Finish
// refuses are each malformed. The control: a good call comes back mapped,
// its cwd cleaned, with the host's other fields read.
func TestKeysCall(t *testing.T) {
	keys := agents.Keys{Agent: "x", Session: "s", Cwd: "dir", Tool: "t", Input: "args"}
	payload := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{"s": "1", "dir": "/p/./q", "t": "run", "id": "c1", "args": map[string]any{"command": "ls"}}
		if edit != nil {
			edit(m)
		}
		return m
	}
	rename := func(c *hooks.Call) error { c.ToolName = "Bash"; return nil }
	call := func(m map[string]any, mapTool func(*hooks.Call) error) (*hooks.Call, error) {
		c := &hooks.Call{Event: hooks.PreToolUse}
		return keys.Call(c, m, mapTool, agents.Field{Key: "id", Dst: &c.ToolUseID})
	}
	c, err := call(payload(nil), rename)
	if err != nil || c.SessionID != "x:1" || c.ToolName != "Bash" || c.ToolInput["command"] != "ls" || c.Cwd != "/p/q" || c.ToolUseID != "c1" {
		t.Fatalf("control: %+v %v", c, err)
	}
	for what, edit := range map[string]func(m map[string]any){
		"no session":        func(m map[string]any) { delete(m, "s") },
		"empty tool":        func(m map[string]any) { m["t"] = "" },
		"cwd not a string":  func(m map[string]any) { m["dir"] = 1.0 },
		"relative cwd":      func(m map[string]any) { m["dir"] = "p" },
		"id not a string":   func(m map[string]any) { m["id"] = []any{} },
		"input as text":     func(m map[string]any) { m["args"] = `{"command":"ls"}` },
		"no input":          func(m map[string]any) { delete(m, "args") },
		"session reserved":  func(m map[string]any) { m["s"] = "*" },
		"tool name too big": func(m map[string]any) { m["t"] = strings.Repeat("x", 1<<20) },
	} {
		if c, err := call(payload(edit), rename); err == nil {
			t.Errorf("%s: %+v, no error", what, c)
		}
	}
	if _, err := call(payload(nil), func(*hooks.Call) error { return agents.Errorf("unmappable") }); err == nil {
		t.Error("a mapping that fails: no error")
	}
}

// TestBeforeAfter: the before event is the engine's PreToolUse with the
// host's rewrite, the after event its PostToolUse; an unknown event is
// malformed in the host's name, and a payload for another event than the
// registered one is malformed, answered as the registered event. The
// controls: both events read, registered or not.
func TestBeforeAfter(t *testing.T) {
	for _, c := range []struct {
		said, registered string
		event            string
		rewrite          bool
	}{
		{"B", "", hooks.PreToolUse, true}, {"A", "", hooks.PostToolUse, false}, {"B", "B", hooks.PreToolUse, true},
	} {
		call, ev, err := agents.BeforeAfter(map[string]any{"e": c.said}, "e", c.registered, "B", "A", "Host")
		if err != nil || ev != c.said || call.Event != c.event || call.Rewrite != c.rewrite {
			t.Errorf("%s (registered %q): %+v %s %v", c.said, c.registered, call, ev, err)
		}
	}
	if _, ev, err := agents.BeforeAfter(map[string]any{"e": "X"}, "e", "", "B", "A", "Host"); err == nil || ev != "X" || !strings.Contains(err.Error(), `unknown Host event "X"`) {
		t.Errorf("unknown event: %s %v", ev, err)
	}
	if _, ev, err := agents.BeforeAfter(map[string]any{"e": "A"}, "e", "B", "B", "A", "Host"); err == nil || ev != "B" {
		t.Errorf("another event than the registered one: %s %v", ev, err)
	}
}

// TestHookSpecificDeny: the deny written when an answer cannot be
// marshalled is PreToolUseDeny's shape, to the byte; a PermissionRequest
// deny carries its decision and no PreToolUse fields.
func TestHookSpecificDeny(t *testing.T) {
	b, err := json.Marshal(agents.PreToolUseDeny("loopguard: internal_error"))
	if err != nil || string(b) != agents.HookSpecificDeny {
		t.Errorf("PreToolUseDeny: %s %v, want %s", b, err, agents.HookSpecificDeny)
	}
	b, _ = json.Marshal(agents.HookSpecificOutput(agents.HookSpecific{HookEventName: "PermissionRequest", Decision: &agents.Behavior{Behavior: "deny", Message: "m"}}))
	if want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"m"}}}`; string(b) != want {
		t.Errorf("PermissionRequest deny: %s, want %s", b, want)
	}
}
