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

// The tests run one at a time: each starts a client that is slow to start
// on a loaded machine.
var opencode = &agenttest.Agent{
	Name:   "opencode",
	Title:  "OpenCode",
	Client: agenttest.OpenCode,
	NewAPI: agenttest.NewChatAPI,
	Tool:   "bash", // the shell tool
	Arg:    "command",
	Configure: func(e *agenttest.Env, api *agenttest.FakeAPI) error {
		return agenttest.WriteOpenCodeConfig(e.G.Home, api.URL, agenttest.SeedOpenCode(e.T))
	},
	Start:   agenttest.Run.OpenCode,
	Hooks:   ".config/opencode/plugin/loopguard.js", // loopguard's plugin
	Refused: []string{"loopguard"},
}

func TestMain(m *testing.M) { opencode.Main(m) }

func TestOpenCodeShellCallNeedsApproval(t *testing.T) {
	agenttest.ShellCallNeedsApproval(opencode.NewEnv(t))
}

// The plugin blocks a call when the hook binary cannot start.
func TestOpenCodeHookThatCannotStartBlocks(t *testing.T) {
	agenttest.HookThatCannotStartBlocks(opencode.NewEnv(t), agenttest.BlockedWith("hook_failed"))
}

// A hang is cut by loopguard's own deadline inside the plugin's timeout.
func TestOpenCodeHookThatHangsBlocks(t *testing.T) {
	agenttest.HookThatHangsBlocks(opencode.NewEnv(t))
}

// OpenCode has no hook timeout of its own (the plugin runs in its
// process): the plugin's decides. A hook process that never answers is
// killed at the plugin's timeout and the call is blocked, where Codex,
// Copilot, Gemini and Qwen Code run it.
func TestOpenCodePluginTimeoutBlocks(t *testing.T) {
	e := opencode.NewEnv(t)
	stuck := filepath.Join(t.TempDir(), "stuck-hook")
	if err := os.WriteFile(stuck, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.HooksFile())
	if err != nil {
		t.Fatal(err)
	}
	p := strings.ReplaceAll(string(b), e.G.Bin+"-hook", stuck)
	p = strings.Replace(p, "const TIMEOUT_MS = 30000", "const TIMEOUT_MS = 2000", 1)
	if p == string(b) || !strings.Contains(p, stuck) {
		t.Fatalf("the plugin does not name %s-hook and a 30000 ms timeout", e.G.Bin)
	}
	if err := os.WriteFile(e.HooksFile(), []byte(p), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.Run(agenttest.Script{Commands: []string{"echo ran > marker"}})
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
	agenttest.RunsTheRewrite(opencode.NewEnv(t))
}

// TestOpenCodeJailedCallRuns: init --agent grants the jail, and OpenCode runs the
// jailed rewrite: no decision, the project write lands, the home write is
// refused by the kernel.
func TestOpenCodeJailedCallRuns(t *testing.T) {
	t.Parallel()
	agenttest.JailedCallRuns(opencode.NewJailedEnv(t))
}
