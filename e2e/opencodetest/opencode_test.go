// Package opencodetest runs loopguard under the real OpenCode (pinned in
// e2e/agenttest), registered by `loopguard init --agent opencode` (its
// plugin), against a scripted fake Chat Completions API on loopback, the
// model provider OpenCode's OpenAI-compatible one. Each test is one
// `opencode run`; OpenCode's own permission prompts are off, so what stops
// a call is loopguard's plugin. The side effect on disk and what OpenCode
// reported back to the model say what happened. Needs a Secret Service
// session (make test).
package opencodetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

var (
	lgBin    string
	setupErr error
)

func TestMain(m *testing.M) { agenttest.Main(m, "opencode", &lgBin, &setupErr) }

type env struct {
	*agenttest.Env
	opencode, seed string
}

// The tests run one at a time: each starts a client that is slow to start
// on a loaded machine.
func newEnv(t *testing.T) *env {
	t.Helper()
	agenttest.RequireKeyring(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	oc := agenttest.Install(t, agenttest.OpenCode)
	seed := agenttest.SeedOpenCode(t)
	return &env{Env: agenttest.NewEnv(t, lgBin, "opencode", nil), opencode: oc, seed: seed}
}

// plugin is loopguard's plugin file as init wrote it.
func (e *env) plugin() string {
	return filepath.Join(e.G.Home, ".config", "opencode", "plugin", "loopguard.js")
}

// run plays script through one `opencode run` (the shell tool is bash).
func (e *env) run(s agenttest.Script) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	s.Tool, s.Arg = "bash", "command"
	api := agenttest.NewChatAPI(t, s)
	if err := agenttest.WriteOpenCodeConfig(e.G.Home, api.URL, e.seed); err != nil {
		t.Fatal(err)
	}
	res, err := agenttest.Run{Bin: e.opencode, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv()}.OpenCode(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opencode run: exit %d in %v", res.ExitCode, res.Duration)
	if res.ExitCode != 0 {
		t.Fatalf("opencode exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s\nstderr: %s", got, len(s.Commands), api.Outputs(), res.Stdout, res.Stderr)
	}
	return api
}

// Without approval a shell call is refused and does not run; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func TestOpenCodeShellCallNeedsApproval(t *testing.T) {
	e := newEnv(t)
	const cmd = "echo one >> runs.txt"
	api := e.run(agenttest.Script{
		Commands: []string{cmd, "echo two >> runs.txt", cmd, cmd},
		Between: func(i int, _ string) {
			if i == 0 {
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
			}
		},
	})
	agenttest.WantBlocked(t, api, 0, "no_grant")
	agenttest.WantBlocked(t, api, 1, "approved_call_changed")
	if out := api.Output(2); strings.Contains(out, "loopguard") {
		t.Errorf("the approved call was not run: %q", out)
	}
	agenttest.WantBlocked(t, api, 3, "approval_consumed")
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
	if !strings.Contains(api.Output(0), "loopguard approve ") {
		t.Errorf("the model was not told how the user approves: %q", api.Output(0))
	}
}

// The plugin blocks a call when the hook binary cannot start.
func TestOpenCodeHookThatCannotStartBlocks(t *testing.T) {
	e := newEnv(t)
	b, err := os.ReadFile(e.plugin())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.plugin(), []byte(strings.ReplaceAll(string(b), lgBin, lgBin+".gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "hook_failed")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook could not start")
	}
}

// A hook that hangs (another process holds the audit log's lock) is cut
// by loopguard's own deadline, inside the plugin's timeout: a deny.
func TestOpenCodeHookThatHangsBlocks(t *testing.T) {
	e := newEnv(t)
	unlock := agenttest.HoldAuditLock(t, e.G.State)
	defer unlock()
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
}

// OpenCode has no hook timeout of its own (the plugin runs in its
// process): the plugin's decides. A hook process that never answers is
// killed at the plugin's timeout and the call is blocked, where Codex,
// Copilot, Gemini and Qwen Code run it.
func TestOpenCodePluginTimeoutBlocks(t *testing.T) {
	e := newEnv(t)
	stuck := filepath.Join(t.TempDir(), "stuck-hook")
	if err := os.WriteFile(stuck, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.plugin())
	if err != nil {
		t.Fatal(err)
	}
	p := strings.ReplaceAll(string(b), lgBin+"-hook", stuck)
	p = strings.Replace(p, "const TIMEOUT_MS = 30000", "const TIMEOUT_MS = 2000", 1)
	if p == string(b) || !strings.Contains(p, stuck) {
		t.Fatalf("the plugin does not name %s-hook and a 30000 ms timeout", lgBin)
	}
	if err := os.WriteFile(e.plugin(), []byte(p), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "hook_failed")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook never answered")
	}
}

// OpenCode runs the arguments loopguard's plugin gives back: under a
// scoped grant, `cat $'README.md'` (not plain text) is covered, runs as the
// canonical command loopguard analysed (confined where the kernel has
// Landlock), prints the file, and the audit log records that what ran is
// what was allowed (PostToolUse ran_as_approved).
func TestOpenCodeRunsTheRewrite(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "README.md"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(cat *)"); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"cat $'README.md'"}})
	if out := api.Output(0); !strings.Contains(out, "read me") {
		t.Errorf("cat $'README.md' under the grant: %q, want the file printed", out)
	}
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range entries {
		got = append(got, x.Event+"/"+x.Reason)
	}
	if !strings.Contains(strings.Join(got, " "), "PreToolUse/scoped_grant PostToolUse/ran_as_approved") {
		t.Errorf("audit %v: want the scoped allow, then PostToolUse ran_as_approved", got)
	}
}
