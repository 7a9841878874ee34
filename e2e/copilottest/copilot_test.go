// Package copilottest runs loopguard under the real GitHub Copilot CLI
// (pinned in e2e/agenttest), registered by `loopguard init --agent
// copilot`, in Copilot's offline mode against a custom model provider: the
// scripted fake Responses API on loopback (no GitHub sign-in). Each test is
// one `copilot -p --allow-all-tools` run; the side effect on disk and what
// Copilot reported back to the model say what happened. Needs a Secret
// Service session (make test).
package copilottest

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
var copilot = &agenttest.Agent{
	Name:    "copilot",
	Title:   "Copilot",
	Client:  agenttest.Copilot,
	NewAPI:  agenttest.NewResponsesAPI,
	Tool:    "bash",
	Arg:     "command",
	Start:   agenttest.Run.Copilot,
	Hooks:   ".copilot/hooks/loopguard.json",
	Refused: []string{"loopguard", "blocked"},
}

func TestMain(m *testing.M) { copilot.Main(m) }

func TestCopilotShellCallNeedsApproval(t *testing.T) {
	agenttest.ShellCallNeedsApproval(copilot.NewEnv(t))
}

// Copilot denies a call when its preToolUse hook cannot start (a non-zero
// exit): the registration needs no fallback.
func TestCopilotHookThatCannotStartBlocks(t *testing.T) {
	agenttest.HookThatCannotStartBlocks(copilot.NewEnv(t), func(t *testing.T, api *agenttest.FakeAPI) {
		if out := api.Output(0); !strings.Contains(out, "Denied") && !strings.Contains(out, "denied") {
			t.Errorf("the client reported %q; want a denial", out)
		}
	})
}

// A hook that hangs is cut by loopguard's own deadline, well inside
// Copilot's timeout (on which Copilot would run the call).
func TestCopilotHookThatHangsBlocks(t *testing.T) {
	agenttest.HookThatHangsBlocks(copilot.NewEnv(t))
}

// Pins the host behaviour the deadline guards against: Copilot runs the
// call when a preToolUse hook times out.
func TestCopilotFailsOpenOnHookTimeout(t *testing.T) {
	agenttest.FailsOpenOnHookTimeout(copilot.NewEnv(t),
		`{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"sleep 30","timeoutSec":1}]}}`)
}

// Copilot CLI runs the hooks in a repository's .claude/settings.json too
// (in a trusted folder), with a Claude-shaped payload of its own. loopguard
// registered for Claude Code there (`loopguard init --project`) recognises
// Copilot's payload and answers in Copilot's format: the call is refused
// without an approval and runs once approved.
func TestCopilotRunsTheClaudeRegistration(t *testing.T) {
	e := copilot.NewBareEnv(t)
	if err := e.G.Init(e.Ctx, e.Dir); err != nil {
		t.Fatal(err)
	}
	const cmd = "echo one >> runs.txt"
	api := e.Run(agenttest.Script{Commands: []string{cmd, cmd}, Between: e.ApproveAfter(0)}, "--trust-folder")
	agenttest.WantBlocked(t, api, 0, "no_grant")
	e.WantRanOnce()
	p, err := e.G.Pending(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range p {
		if !strings.HasPrefix(x.Session, "copilot:") {
			t.Errorf("pending %+v: not recognised as Copilot's call", x)
		}
	}
}

// Copilot offers GPT-5 models (gpt-5.4 here) only a free-form apply_patch,
// whose patch arrives as the raw text of toolArgs. It is held as the Write
// of the file it adds: refused without an approval, applied once approved,
// and reviewed as that Write.
func TestCopilotGPT5PatchNeedsApproval(t *testing.T) {
	e := copilot.NewEnv(t)
	// A free-form tool; the test checks what Copilot reported, not its
	// exit status.
	api := e.RunAnyExit(agenttest.Script{
		Tool: "apply_patch", Custom: true,
		Commands: []string{agenttest.AddNotes, agenttest.AddNotes},
		Between: func(i int, _ string) {
			if i == 0 {
				if e.Exists("notes.txt") {
					t.Error("notes.txt was written before any approval")
				}
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
			}
		},
	})
	agenttest.WantBlocked(t, api, 0, "no_grant")
	e.WantPatchApplied(api, 1)
}

// Copilot runs both of loopguard's registrations for every call here: its
// own (~/.copilot/hooks) and the repository's Claude Code one
// (.claude/settings.json, in a trusted folder), one after the other. An
// approval is asked once, runs the call exactly once and is not reported
// consumed by the second registration; a retry is refused. A scoped call
// the first registration rewrites reaches the second as rewritten, and
// runs.
func TestCopilotTwoRegistrationsRunOnce(t *testing.T) {
	e := copilot.NewEnv(t)
	if err := e.G.Init(e.Ctx, e.Dir); err != nil {
		t.Fatal(err)
	}
	e.Write("README.md", "read me\n")
	const cmd = "echo one >> runs.txt"
	api := e.Run(agenttest.Script{
		Commands: []string{cmd, cmd, cmd, "cat $'README.md'"},
		Between: func(i int, _ string) {
			switch i {
			case 0:
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
			case 2:
				if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(cat *)"); err != nil {
					t.Error(err)
				}
			}
		},
	}, "--trust-folder")
	agenttest.WantBlocked(t, api, 0, "no_grant")
	if out := api.Output(1); strings.Contains(out, "loopguard") || strings.Contains(out, "enied") {
		t.Errorf("the approved call was not run: %q", out)
	}
	agenttest.WantBlocked(t, api, 2, "approval_consumed")
	e.WantRanOnce()
	if out := api.Output(3); !strings.Contains(out, "read me") {
		t.Errorf("the scoped call through both registrations: %q, want the file printed", out)
	}
	p, err := e.G.Pending(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 {
		t.Errorf("%d pending calls, want the one call asked once: %+v", len(p), p)
	}
	// Both registrations answered the approved call: the second with the
	// first's answer.
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	allows := 0
	for _, x := range entries {
		if x.Event == "PreToolUse" && x.Reason == "exact_grant" {
			allows++
		}
	}
	if allows != 2 {
		t.Errorf("%d exact_grant answers, want 2 (one per registration)", allows)
	}
}

// Copilot runs the arguments a hook's allow gives back (modifiedArgs):
// under a scoped grant, `cat $'README.md'` (not plain text) is covered, runs
// as the canonical command loopguard analysed, prints the file, and the
// audit log records that what ran is what was allowed (postToolUse
// ran_as_approved, matched by what ran: Copilot sends no call id).
func TestCopilotRunsTheRewrite(t *testing.T) {
	agenttest.RunsTheRewrite(copilot.NewEnv(t))
}

// TestCopilotJailedCallRuns: init --agent grants the jail, and Copilot runs the
// jailed rewrite: no decision, the project write lands, the home write is
// refused by the kernel.
func TestCopilotJailedCallRuns(t *testing.T) {
	t.Parallel()
	agenttest.JailedCallRuns(copilot.NewJailedEnv(t))
}

// TestCopilotApprovedCallHoldsTheProject: under the jail grant an
// approved call runs through the launcher's as-written form (Copilot runs
// the hook's modifiedArgs), holding the project while it runs (the
// ninety-fifth attack run's approved make ran a deploy.sh a jailed call
// rewrote meanwhile).
func TestCopilotApprovedCallHoldsTheProject(t *testing.T) {
	agenttest.ApprovedCallHoldsTheProject(copilot.NewJailedEnv(t))
}
