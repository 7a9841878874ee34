package loopguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// agentCall starts a general-purpose subagent and waits for it: agents run
// in the background by default, which would interleave the subagents'
// scripted turns.
func agentCall(id string) claudetest.ToolCall {
	return claudetest.Call(id, "Agent", map[string]any{
		"description": "touch a file", "prompt": "touch the file", "subagent_type": "general-purpose",
		"run_in_background": false})
}

// A subagent's call is approved for its agent_id: the same subagent's
// identical retry runs; the main agent's and another subagent's do not.
func TestSubagentApprovalBoundToAgentID(t *testing.T) {
	t.Parallel()
	const cmd = "touch sub.txt"
	for _, tt := range []struct {
		name     string
		main     []claudetest.Turn
		sub      []claudetest.Turn
		retry    string // tool_use id of the retry
		wantRan  bool
		wantLeft bool // the approval is still unused at the end
	}{
		{
			name:    "same subagent retries (control)",
			main:    []claudetest.Turn{claudetest.Tools(agentCall("toolu_ag1")), claudetest.Text("done")},
			sub:     []claudetest.Turn{claudetest.Tools(bash("toolu_sb1", cmd)), claudetest.Tools(bash("toolu_sb2", cmd)), claudetest.Text("ok")},
			retry:   "toolu_sb2",
			wantRan: true,
		},
		{
			name:     "main agent retries",
			main:     []claudetest.Turn{claudetest.Tools(agentCall("toolu_ag1")), claudetest.Tools(bash("toolu_mn2", cmd)), claudetest.Text("done")},
			sub:      []claudetest.Turn{claudetest.Tools(bash("toolu_sb1", cmd)), claudetest.Text("waiting for approval")},
			retry:    "toolu_mn2",
			wantLeft: true,
		},
		{
			name: "another subagent retries",
			main: []claudetest.Turn{claudetest.Tools(agentCall("toolu_ag1")), claudetest.Tools(agentCall("toolu_ag2")), claudetest.Text("done")},
			sub: []claudetest.Turn{claudetest.Tools(bash("toolu_sb1", cmd)), claudetest.Text("waiting for approval"),
				claudetest.Tools(bash("toolu_sc2", cmd)), claudetest.Text("ok")},
			retry:    "toolu_sc2",
			wantLeft: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var approved Pending
			api, _ := e.run(claudetest.Script{Main: tt.main, Subagent: tt.sub}, func(p *Proxy) {
				p.OnToolResult("toolu_sb1", func() error {
					var err error
					if approved, err = e.g.OnlyPending(e.ctx); err != nil {
						return err
					}
					if approved.Agent == "main" || approved.Agent == "" || approved.AgentType != "general-purpose" {
						return fmt.Errorf("pending call is not bound to the subagent: %+v", approved)
					}
					_, err = e.g.Approve(e.ctx, approved)
					return err
				})
			})
			wantDenied(t, api, "toolu_sb1", "no_grant")
			if ran := e.exists("sub.txt"); ran != tt.wantRan {
				t.Fatalf("command ran = %v, want %v; tool results: %+v", ran, tt.wantRan, api.ToolResults())
			}
			if tt.wantRan {
				wantRan(t, api, tt.retry)
			} else {
				wantDenied(t, api, tt.retry, "no_grant")
			}
			left, err := exactGrants(e.ctx, e.g)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantLeft && (len(left) != 1 || left[0].Agent != approved.Agent) {
				t.Errorf("unused exact grants = %+v; want the one for agent %s", left, approved.Agent)
			}
			if !tt.wantLeft && len(left) != 0 {
				t.Errorf("unused exact grants = %+v; want none", left)
			}
		})
	}
}

type grantRow struct {
	Kind  string `json:"kind"`
	Agent string `json:"agent"`
}

// exactGrants lists the unused exact grants.
func exactGrants(ctx context.Context, g *Guard) ([]grantRow, error) {
	out, err := g.Run(ctx, g.Home, "grants", "--json")
	if err != nil {
		return nil, err
	}
	var rows, exact []grantRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		return nil, fmt.Errorf("grants --json: %w: %s", err, out)
	}
	for _, r := range rows {
		if r.Kind == "exact" {
			exact = append(exact, r)
		}
	}
	return exact, nil
}

// Two identical calls in one message, one single-use approval: exactly one
// runs, the other is told the approval was used.
func TestParallelCallsOneApprovalOneRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		call   func(id string) claudetest.ToolCall
		effect string // file with one line per run
		mcp    bool
	}{
		{"Bash", func(id string) claudetest.ToolCall { return bash(id, "echo run >> count.txt") }, "count.txt", false},
		{"MCP", func(id string) claudetest.ToolCall {
			return claudetest.Call(id, "mcp__bank__transfer", map[string]any{"amount": 20, "to": "vendor-approved"})
		}, "ledger.txt", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var args []string
			if tt.mcp {
				args = e.mcpArgs()
			}
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(tt.call("toolu_pa0")),
				claudetest.Tools(tt.call("toolu_pa1"), tt.call("toolu_pa2")),
				claudetest.Text("done"),
			}}, func(p *Proxy) { p.OnToolResult("toolu_pa0", e.approveOnly) }, args...)
			wantDenied(t, api, "toolu_pa0", "no_grant")
			ran, consumed := 0, 0
			for _, id := range []string{"toolu_pa1", "toolu_pa2"} {
				r := result(t, api, id)
				switch {
				case !r.IsError:
					ran++
				case strings.Contains(r.Content, "loopguard: approval_consumed"):
					consumed++
				default:
					t.Errorf("tool_result %s: %q", id, r.Content)
				}
			}
			if ran != 1 || consumed != 1 {
				t.Errorf("%d ran and %d were told the approval was used; want 1 and 1", ran, consumed)
			}
			if lines := strings.Count(e.read(tt.effect), "\n"); lines != 1 {
				t.Errorf("%s = %q; want exactly one run", tt.effect, e.read(tt.effect))
			}
		})
	}
}

// mcpArgs registers the fake bank MCP server, its ledger in the project.
func (e *env) mcpArgs() []string {
	cfg := map[string]any{"mcpServers": map[string]any{"bank": map[string]any{
		"type": "stdio", "command": mcpBin, "args": []string{},
		"env": map[string]string{"BANK_LEDGER": e.path("ledger.txt")},
	}}}
	b, err := json.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return []string{"--mcp-config", p, "--strict-mcp-config"}
}

// An Edit approved at one file state is denied once the file changed; the
// control row leaves the file alone and the approved Edit runs.
func TestEditApprovedThenFileChanged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		change  bool
		wantRan bool
	}{
		{"file unchanged (control)", false, true},
		{"file changed after approval", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := e.path("notes.txt")
			const v1, changed = "status: v1\n", "status: v1\nadded after the approval\n"
			if err := os.WriteFile(f, []byte(v1), 0o644); err != nil {
				t.Fatal(err)
			}
			read := func(id string) claudetest.ToolCall {
				return claudetest.Call(id, "Read", map[string]any{"file_path": f})
			}
			edit := func(id string) claudetest.ToolCall {
				return claudetest.Call(id, "Edit", map[string]any{"file_path": f, "old_string": "v1", "new_string": "v2", "replace_all": false})
			}
			// The client refuses an Edit of a file changed since it was read,
			// so the model reads it again before the retry: the retry then
			// reaches the guard.
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(read("toolu_rd1")),
				claudetest.Tools(edit("toolu_ed1")),
				claudetest.Tools(read("toolu_rd2")),
				claudetest.Tools(edit("toolu_ed2")),
				claudetest.Text("done"),
			}}, func(p *Proxy) {
				p.OnToolResult("toolu_ed1", func() error {
					if err := e.approveOnly(); err != nil {
						return err
					}
					if tt.change {
						return os.WriteFile(f, []byte(changed), 0o644)
					}
					return nil
				})
			})
			wantRan(t, api, "toolu_rd2")
			wantDenied(t, api, "toolu_ed1", "no_grant")
			got := e.read("notes.txt")
			if tt.wantRan {
				wantRan(t, api, "toolu_ed2")
				if got != "status: v2\n" {
					t.Errorf("notes.txt = %q; want the approved edit applied", got)
				}
				return
			}
			wantDenied(t, api, "toolu_ed2", "target_state_drift")
			if got != changed {
				t.Errorf("notes.txt = %q; want it as changed, not edited", got)
			}
		})
	}
}

// The PermissionRequest path alone (the settings init writes, without the
// PreToolUse entry): its deny is honoured and the model gets the reason; after
// the human approves, its allow is honoured and the identical retry runs.
func TestPermissionRequestDecisionsHonoured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := dropEvent(e.path(".claude/settings.json"), "PreToolUse"); err != nil {
		t.Fatal(err)
	}
	const cmd = "echo pr >> pr.txt"
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_pr1", cmd)),
		claudetest.Tools(bash("toolu_pr2", "echo changed >> pr.txt")),
		claudetest.Tools(bash("toolu_pr3", cmd)),
		claudetest.Text("done"),
	}}, func(p *Proxy) {
		p.OnToolResult("toolu_pr1", func() error {
			if e.exists("pr.txt") {
				return errors.New("pr.txt exists before any approval")
			}
			return e.approveOnly()
		})
	})
	r := wantDenied(t, api, "toolu_pr1", "no_grant")
	if !strings.Contains(r.Content, "loopguard approve ") {
		t.Errorf("the model was not told what the human must run: %q", r.Content)
	}
	wantDenied(t, api, "toolu_pr2", "approved_call_changed")
	wantRan(t, api, "toolu_pr3")
	if got := e.read("pr.txt"); got != "pr\n" {
		t.Errorf("pr.txt = %q; want the approved command run once", got)
	}
}

// dropEvent removes one event's hooks from a settings file.
func dropEvent(path, event string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := s["hooks"][event]; !ok {
		return fmt.Errorf("%s registers no %s hook", path, event)
	}
	delete(s["hooks"], event)
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
