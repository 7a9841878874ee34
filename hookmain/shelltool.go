package hookmain

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/shelltool"
	"github.com/loopguard/loopguard/ticket"
)

// Two-phase enforcement under Gemini CLI and Qwen Code, the hook's half
// (package shelltool has the wrapper's). Neither has a shell prefix; their
// settings exclude their own run_shell_command and list loopguard's shell
// tool (tools.discoveryCommand), which they run by spawning loopguard-exec
// (tools.callCommand). A registration with --ticket then, for a call of
// that tool the engine allowed:
//   - checks that the user's settings put loopguard's tool in place and
//     that no settings file above them (the project's, the system's)
//     names another discovery or call command; otherwise it denies with
//     ticket.ReasonNoWrapper;
//   - issues a ticket bound to the host process (shelltool.HookHost) for
//     the exact command: under Gemini, which runs the hook's rewritten
//     input, with the nonce's marker line first in the command it hands
//     back (the launch, when the call runs confined, is in that text);
//     under Qwen Code, which does not, for the command as the model
//     wrote it, under the nonce derived from it (shelltool.Derived), with
//     the capability and project the wrapper runs it under (the engine
//     decides such a call as Wrapped: the jail grant and a scope's
//     capability apply as where the host runs the rewrite).
// The built-in shell, should it be called, is denied (no_wrapper), and
// the after-call event flags a shell call that ran with no ticket on
// record.

// shellHost is what differs between the hosts of loopguard's shell tool.
type shellHost struct {
	agent string
	// tool is the shell tool's name in the host's payloads.
	tool string
	// dir is the host's settings directory, in the home and in a
	// project; homeEnv names the home the host reads instead of the
	// user's when set, homeIsDir that it names the directory itself.
	dir, homeEnv string
	homeIsDir    bool
	// systemEnv names the system settings file when set, else system.
	systemEnv, system string
	// marks: the host runs the hook's rewritten input, so the nonce is
	// written into the command.
	marks bool
}

var shellHosts = map[string]shellHost{
	gemini.Name: {agent: gemini.Name, tool: shelltool.HostName, dir: ".gemini", homeEnv: "GEMINI_CLI_HOME",
		systemEnv: "GEMINI_CLI_SYSTEM_SETTINGS_PATH", system: "/etc/gemini-cli/settings.json", marks: true},
	qwen.Name: {agent: qwen.Name, tool: shelltool.Name, dir: ".qwen", homeEnv: "QWEN_HOME", homeIsDir: true,
		systemEnv: "QWEN_CODE_SYSTEM_SETTINGS_PATH", system: "/etc/qwen-code/settings.json"},
}

// rawTool is an adapter that keeps the host's own tool name of the call it
// decoded, and what the host said the call returned: the engine sees both
// shells as Bash.
type rawTool struct {
	agents.Adapter
	name, response *string
	// wraps: a call of the host's shell tool runs the model's text
	// through the wrapper, which applies the ticket's capability.
	wraps bool
	tool  string
}

func (r rawTool) Decode(m map[string]any, event string) (*hooks.Call, string, error) {
	*r.name, _ = m["tool_name"].(string)
	if b, err := json.Marshal(m["tool_response"]); err == nil {
		*r.response = string(b)
	}
	c, ev, err := r.Adapter.Decode(m, event)
	if err == nil && c != nil && r.wraps && *r.name == r.tool && c.ToolName == "Bash" {
		c.Wrapped = true
	}
	return c, ev, err
}

// shellToolOptions makes opts a --ticket registration for an agent whose
// shell is loopguard's own tool (shellHosts).
func shellToolOptions(opts *agents.Options, h shellHost, wrapper func() string) {
	var name, response string
	wrap := func(a agents.Adapter) agents.Adapter {
		return rawTool{Adapter: a, name: &name, response: &response, wraps: !h.marks, tool: h.tool}
	}
	if opts.Adapter != nil {
		opts.Adapter = wrap(opts.Adapter)
	}
	if detect := opts.Detect; detect != nil {
		opts.Detect = func(m map[string]any) (agents.Adapter, error) {
			a, err := detect(m)
			if err != nil {
				return a, err
			}
			return wrap(a), nil
		}
	}
	opts.Before = func(ctx context.Context, eng *hooks.Engine, c *hooks.Call) *hooks.Decision {
		if c.ToolName != "Bash" || (c.Event != hooks.PostToolUse && c.Event != hooks.PostToolUseFailure) {
			return nil
		}
		cmd, _ := c.ToolInput["command"].(string)
		nonce, rest, marked := ticket.Unmark(cmd)
		if !h.marks && !marked {
			if host, err := shelltool.HookHost(); err == nil {
				nonce, marked = shelltool.Derived(host, c.Cwd, cmd), true
			}
		}
		if name == h.tool {
			store, err := ticketStore()
			if marked && err == nil && store.Spend(nonce) {
				c.ToolInput = withCommand(c.ToolInput, rest)
				return nil
			}
			if ticket.IsRefusal(unescape(response)) {
				// The wrapper refused it: nothing ran.
				if marked {
					c.ToolInput = withCommand(c.ToolInput, rest)
				}
				return nil
			}
		}
		d := hooks.Decision{Behavior: hooks.Alarm, Reason: ticket.ReasonRanWithoutDecision,
			SystemMessage: "loopguard: " + ticket.ReasonRanWithoutDecision + ": a shell call (" + name + ") ran with no decision of loopguard's on record (no ticket): loopguard's wrapper is not in front of this session's shell. Run `loopguard doctor`."}
		appendAudit(eng, c, d, "")
		return &d
	}
	opts.After = func(ctx context.Context, eng *hooks.Engine, c *hooks.Call, d hooks.Decision) hooks.Decision {
		if c.ToolName != "Bash" || c.Event != hooks.PreToolUse || d.Behavior != hooks.Allow {
			return d
		}
		deny := ticketDeny(eng, c)
		if name != h.tool {
			return deny(ticket.ReasonNoWrapper, "the host's own shell tool "+name+" does not run through loopguard's wrapper: use "+h.tool)
		}
		if why := h.settingsProblem(wrapper(), c.Cwd, eng.Env.ProjectDir); why != "" {
			return deny(ticket.ReasonNoWrapper, why)
		}
		host, err := shelltool.HookHost()
		if err != nil {
			return deny(ticket.ReasonNoWrapper, err.Error())
		}
		if !h.marks && d.UpdatedInput != nil {
			// This host runs the model's own text: a rewrite would be
			// decided but never run (the wrapper makes the launch).
			return deny(ticket.ReasonNoDecision, "the call was allowed as a rewritten command, which "+h.agent+" cannot run")
		}
		tp, refused := ticketInputs(ctx, eng, c, d, deny)
		if refused != nil {
			return *refused
		}
		store, cmd := tp.store, tp.cmd
		t := &ticket.Ticket{Session: host, Command: cmd, Capability: d.Capability,
			Project: eng.Env.ProjectDir, Cwd: c.Cwd, Expiry: time.Now().Add(ticket.Lifetime).Unix()}
		if c.Wrapped {
			// The wrapper launches the command confined to this project.
			t.Project = eng.LaunchProject(c)
		}
		if h.marks {
			if t.Nonce, err = ticket.NewNonce(); err != nil {
				return deny(ticket.ReasonNoDecision, "no nonce: "+err.Error())
			}
			t.Command = ticket.Mark(t.Nonce, cmd)
		} else {
			// The same command again in this host and cwd is decided
			// afresh: its earlier ticket's used record goes.
			t.Nonce = shelltool.Derived(host, c.Cwd, cmd)
			_ = os.Remove(filepath.Join(store.Dir, t.Nonce+".used"))
		}
		if err := store.Issue(t, tp.key); err != nil {
			return deny(ticket.ReasonNoDecision, err.Error())
		}
		if h.marks {
			d.UpdatedInput = withCommand(tp.in, t.Command)
		}
		return d
	}
}

// unescape is a JSON text's strings as text, for reading the wrapper's
// refusal in the host's report of a call.
func unescape(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var out []byte
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x...)
			out = append(out, '\n')
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return string(out)
}

// settingsProblem says why loopguard's wrapper may not stand in front of
// the host's shell, "" when nothing says so: the user's settings must
// exclude the built-in shell and name loopguard's discovery and call
// commands, and no settings file the host reads above them (the
// project's, in the hook's cwd or the project, the system's) may name
// others. A file that cannot be read counts against.
func (h shellHost) settingsProblem(wrapper, cwd, project string) string {
	userDir := os.Getenv(h.homeEnv)
	if userDir == "" {
		home, _ := os.UserHomeDir()
		if home == "" {
			return "the user's settings cannot be found (no home directory)"
		}
		userDir = filepath.Join(home, h.dir)
	} else if !h.homeIsDir {
		userDir = filepath.Join(userDir, h.dir)
	}
	want := shelltool.Settings(wrapper)
	user := filepath.Join(userDir, "settings.json")
	tools, err := settingsTools(user)
	if err != nil || tools == nil {
		return user + " cannot be read as the host's settings"
	}
	if tools["callCommand"] != want["callCommand"] || tools["discoveryCommand"] != want["discoveryCommand"] || !excludes(tools["exclude"], shelltool.BuiltinShell) {
		return user + " does not put loopguard's shell tool in place of " + shelltool.BuiltinShell + " (tools.exclude, tools.discoveryCommand, tools.callCommand)"
	}
	system := os.Getenv(h.systemEnv)
	if system == "" {
		system = h.system
	}
	files := []string{system}
	for _, d := range []string{cwd, project} {
		if d != "" && filepath.Join(d, h.dir, "settings.json") != user {
			files = append(files, filepath.Join(d, h.dir, "settings.json"))
		}
	}
	for _, f := range files {
		t, err := settingsTools(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return f + " cannot be read as the host's settings, and may name another shell tool"
		}
		for _, k := range []string{"callCommand", "discoveryCommand"} {
			if v, ok := t[k]; ok && v != want[k] {
				return f + " sets tools." + k + ": a project's or the system's settings may not replace loopguard's wrapper"
			}
		}
	}
	return ""
}

// settingsTools reads the "tools" object of a Gemini or Qwen Code
// settings file (JSON with comments); empty when it has none.
func settingsTools(path string) (map[string]any, error) {
	data, err := fsx.ReadRegular(path, 4<<20, 0)
	if err != nil {
		if _, serr := os.Stat(path); os.IsNotExist(serr) {
			return nil, serr
		}
		return nil, err
	}
	var s struct {
		Tools map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(stripComments(data), &s); err != nil {
		return nil, err
	}
	if s.Tools == nil {
		return map[string]any{}, nil
	}
	return s.Tools, nil
}

func excludes(v any, name string) bool {
	l, _ := v.([]any)
	for _, x := range l {
		if x == name {
			return true
		}
	}
	return false
}

// stripComments blanks // and /* */ comments outside JSON strings, as
// Gemini's and Qwen Code's settings allow them.
func stripComments(b []byte) []byte {
	out := append([]byte(nil), b...)
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i
			for ; j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/'); j++ {
				out[j] = ' '
			}
			if j+1 < len(out) {
				out[j], out[j+1] = ' ', ' '
			}
			i = j + 1
		}
	}
	return out
}
