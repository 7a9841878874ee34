package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

const allowPre = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allowed by the recorder"}}`

const denyPre = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by the recorder: nothing is fetched"}}`

const denyPermission = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"denied by the recorder"}}}`

// output names one recorded payload to keep.
type output struct {
	file     string // name under the output folder
	event    string // hook_event_name
	tool     string // tool_name
	subagent bool   // the payload must carry agent_id
}

// recording is one client run and the payloads kept from it.
type recording struct {
	name    string
	pre     []string // fake-hook flags for PreToolUse, after -record
	permReq []string // fake-hook flags for PermissionRequest; nil: not registered
	post    bool     // register a recording PostToolUse hook
	mcp     bool     // start the bank MCP server
	script  func(dir string) claudetest.Script
	setup   func(dir string) error
	check   func(dir string, api *claudetest.FakeAPI) error
	outputs []output
}

func bash(id, command, description string) claudetest.ToolCall {
	return claudetest.Call(id, "Bash", map[string]any{"command": command, "description": description})
}

func mustExist(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("expected %s to exist: %w", filepath.Base(path), err)
	}
	return nil
}

func resultOK(api *claudetest.FakeAPI, id string, wantErr bool) error {
	r, ok := api.ToolResult(id)
	if !ok {
		return fmt.Errorf("no tool_result for %s", id)
	}
	if r.IsError != wantErr {
		return fmt.Errorf("tool_result %s is_error = %v, want %v: %s", id, r.IsError, wantErr, r.Content)
	}
	return nil
}

var recordings = []recording{
	{
		name: "bash",
		pre:  []string{"-stdout", allowPre},
		post: true,
		script: func(string) claudetest.Script {
			return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(
				bash("toolu_01BashRecord", "echo hello > greeting.txt", "Write a greeting file"))}}
		},
		check: func(dir string, api *claudetest.FakeAPI) error {
			return errors.Join(mustExist(filepath.Join(dir, "greeting.txt")), resultOK(api, "toolu_01BashRecord", false))
		},
		outputs: []output{
			{file: "pretooluse-bash.json", event: "PreToolUse", tool: "Bash"},
			{file: "posttooluse-bash.json", event: "PostToolUse", tool: "Bash"},
		},
	},
	{
		name: "write",
		pre:  []string{"-stdout", allowPre},
		script: func(dir string) claudetest.Script {
			return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(claudetest.Call("toolu_01WriteRecord", "Write",
				map[string]any{"file_path": filepath.Join(dir, "notes.txt"), "content": "first line\nsecond line\n"}))}}
		},
		check: func(dir string, api *claudetest.FakeAPI) error {
			return errors.Join(mustExist(filepath.Join(dir, "notes.txt")), resultOK(api, "toolu_01WriteRecord", false))
		},
		outputs: []output{{file: "pretooluse-write.json", event: "PreToolUse", tool: "Write"}},
	},
	{
		name: "read-edit",
		pre:  []string{"-stdout", allowPre},
		setup: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { foo() }\n"), 0o644)
		},
		script: func(dir string) claudetest.Script {
			p := filepath.Join(dir, "main.go")
			return claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(claudetest.Call("toolu_01ReadRecord", "Read", map[string]any{"file_path": p})),
				claudetest.Tools(claudetest.Call("toolu_01EditRecord", "Edit",
					map[string]any{"file_path": p, "old_string": "foo()", "new_string": "bar()", "replace_all": false})),
			}}
		},
		check: func(dir string, api *claudetest.FakeAPI) error {
			b, err := os.ReadFile(filepath.Join(dir, "main.go"))
			if err == nil && !strings.Contains(string(b), "bar()") {
				err = errors.New("the edit was not applied")
			}
			return errors.Join(err, resultOK(api, "toolu_01ReadRecord", false), resultOK(api, "toolu_01EditRecord", false))
		},
		outputs: []output{
			{file: "pretooluse-read.json", event: "PreToolUse", tool: "Read"},
			{file: "pretooluse-edit.json", event: "PreToolUse", tool: "Edit"},
		},
	},
	{
		name: "webfetch",
		pre:  []string{"-stdout", denyPre, "-exit", "2"},
		script: func(string) claudetest.Script {
			return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(claudetest.Call("toolu_01WebFetchRecord", "WebFetch",
				map[string]any{"url": "https://example.com/docs", "prompt": "Summarise the page"}))}}
		},
		check: func(_ string, api *claudetest.FakeAPI) error {
			return resultOK(api, "toolu_01WebFetchRecord", true)
		},
		outputs: []output{{file: "pretooluse-webfetch.json", event: "PreToolUse", tool: "WebFetch"}},
	},
	{
		name: "mcp",
		pre:  []string{"-stdout", allowPre},
		mcp:  true,
		script: func(string) claudetest.Script {
			return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(claudetest.Call("toolu_01McpRecord", "mcp__bank__transfer",
				map[string]any{"amount": 25, "to": "acct-1234"}))}}
		},
		check: func(dir string, api *claudetest.FakeAPI) error {
			b, err := os.ReadFile(filepath.Join(dir, "ledger.txt"))
			if err == nil && string(b) != "transfer 25 to acct-1234\n" {
				err = fmt.Errorf("ledger = %q", b)
			}
			return errors.Join(err, resultOK(api, "toolu_01McpRecord", false))
		},
		outputs: []output{{file: "pretooluse-mcp.json", event: "PreToolUse", tool: "mcp__bank__transfer"}},
	},
	{
		name: "subagent",
		pre:  []string{"-stdout", allowPre},
		script: func(string) claudetest.Script {
			return claudetest.Script{
				Main: []claudetest.Turn{claudetest.Tools(claudetest.Call("toolu_01AgentRecord", "Agent", map[string]any{
					"description": "List files", "prompt": "List the files in the project", "subagent_type": "general-purpose"}))},
				Subagent: []claudetest.Turn{claudetest.Tools(bash("toolu_01SubBashRecord", "ls -la > listing.txt", "List files"))},
			}
		},
		check: func(dir string, api *claudetest.FakeAPI) error {
			return errors.Join(mustExist(filepath.Join(dir, "listing.txt")), resultOK(api, "toolu_01SubBashRecord", false))
		},
		outputs: []output{{file: "pretooluse-subagent-bash.json", event: "PreToolUse", tool: "Bash", subagent: true}},
	},
	{
		// No PreToolUse decision and no allow rule: -p fires PermissionRequest
		// for a call that would need a prompt; the hook denies it.
		name:    "permission-request",
		permReq: []string{"-stdout", denyPermission},
		script: func(string) claudetest.Script {
			return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(
				bash("toolu_01PermReqRecord", "rm -rf build", "Remove the build folder"))}}
		},
		setup: func(dir string) error { return os.MkdirAll(filepath.Join(dir, "build"), 0o755) },
		check: func(dir string, api *claudetest.FakeAPI) error {
			return errors.Join(mustExist(filepath.Join(dir, "build")), resultOK(api, "toolu_01PermReqRecord", true))
		},
		outputs: []output{{file: "permissionrequest-bash.json", event: "PermissionRequest", tool: "Bash"}},
	},
}

// config is what record needs from its caller.
type config struct {
	claude string // client executable
	hook   string // executable that runs claudetest.HookMain for HookArg
	mcp    string // mcpfake executable
	work   string // scratch folder
	out    string // output folder
	logf   func(format string, args ...any)
}

// record runs every recording and writes the kept payloads to cfg.out.
func record(ctx context.Context, cfg config) error {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return fmt.Errorf("failed to create output folder: %w", err)
	}
	for _, r := range recordings {
		if err := recordOne(ctx, cfg, r); err != nil {
			return fmt.Errorf("recording %s: %w", r.name, err)
		}
	}
	return nil
}

func recordOne(ctx context.Context, cfg config, r recording) error {
	base := filepath.Join(cfg.work, r.name)
	dir, rec, home := filepath.Join(base, "project"), filepath.Join(base, "hooks"), filepath.Join(base, "home")
	for _, d := range []string{dir, rec, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	group := func(flags []string) []claudetest.MatcherGroup {
		h := claudetest.FakeHook(cfg.hook, append([]string{"-record", rec}, flags...)...)
		h.Timeout = 30
		return []claudetest.MatcherGroup{{Matcher: "*", Hooks: []claudetest.Hook{h}}}
	}
	events := map[string][]claudetest.MatcherGroup{}
	if r.pre != nil {
		events["PreToolUse"] = group(r.pre)
	}
	if r.permReq != nil {
		events["PermissionRequest"] = group(r.permReq)
	}
	if r.post {
		events["PostToolUse"] = group(nil)
	}
	if err := claudetest.WriteSettings(dir, claudetest.HooksJSON(events)); err != nil {
		return err
	}
	if r.setup != nil {
		if err := r.setup(dir); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	var args []string
	if r.mcp {
		mcpConfig := map[string]any{"mcpServers": map[string]any{"bank": map[string]any{
			"type": "stdio", "command": cfg.mcp, "args": []string{},
			"env": map[string]string{"BANK_LEDGER": filepath.Join(dir, "ledger.txt")},
		}}}
		b, _ := json.Marshal(mcpConfig)
		p := filepath.Join(base, "mcp.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		args = append(args, "--mcp-config", p, "--strict-mcp-config")
	}
	api, err := claudetest.StartFakeAPI(r.script(dir))
	if err != nil {
		return err
	}
	defer api.Close()
	res, err := claudetest.RunClient(ctx, claudetest.Options{
		Claude: cfg.claude, API: api, Dir: dir, Home: home, Args: args, Timeout: 2 * time.Minute,
		Prompt: "Do the task.",
	})
	if err != nil {
		return err
	}
	cfg.logf("%s: exit %d in %v", r.name, res.ExitCode, res.Duration.Round(time.Millisecond))
	if res.ExitCode != 0 {
		return fmt.Errorf("claude exit %d: %s", res.ExitCode, lastLines(res.Stderr, 10))
	}
	if err := r.check(dir, api); err != nil {
		return fmt.Errorf("run did not go as scripted: %w\ntool results: %+v", err, api.ToolResults())
	}
	recs, err := claudetest.ReadRecorded(rec)
	if err != nil {
		return err
	}
	for _, o := range r.outputs {
		p, err := pick(recs, o)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(cfg.out, o.file), p, 0o644); err != nil {
			return fmt.Errorf("failed to write %s: %w", o.file, err)
		}
		cfg.logf("  wrote %s", o.file)
	}
	return nil
}

// pick returns the one recorded payload matching o.
func pick(recs []claudetest.Recorded, o output) ([]byte, error) {
	var found [][]byte
	for _, r := range recs {
		if r.Event != o.event || r.Tool != o.tool {
			continue
		}
		var p struct {
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal(r.Payload, &p); err != nil {
			return nil, err
		}
		if (p.AgentID != "") != o.subagent {
			continue
		}
		found = append(found, r.Payload)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: found %d %s %s payloads (subagent %v), want 1", o.file, len(found), o.event, o.tool, o.subagent)
	}
	return found[0], nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
