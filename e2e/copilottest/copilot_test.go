// Package copilottest runs loopguard under the real GitHub Copilot CLI
// (pinned in e2e/agenttest), registered by `loopguard init --agent
// copilot`, in Copilot's offline mode against a custom model provider: the
// scripted fake Responses API on loopback (no GitHub sign-in). Each test is
// one `copilot -p --allow-all-tools` run; the side effect on disk and what
// Copilot reported back to the model say what happened. Needs a Secret
// Service session (make test).
package copilottest

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

func TestMain(m *testing.M) { agenttest.Main(m, "copilot", &lgBin, &setupErr) }

type env struct {
	*agenttest.Env
	copilot string
}

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
func newEnv(t *testing.T) *env { return newEnvFor(t, "copilot") }

func newEnvFor(t *testing.T, agent string) *env {
	t.Helper()
	agenttest.RequireKeyring(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	copilot := agenttest.Install(t, agenttest.Copilot)
	return &env{Env: agenttest.NewEnv(t, lgBin, agent, nil), copilot: copilot}
}

// run plays script through one `copilot -p`.
func (e *env) run(s agenttest.Script, args ...string) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	s.Tool, s.Arg = "bash", "command"
	api := agenttest.NewResponsesAPI(t, s)
	res, err := agenttest.Run{Bin: e.copilot, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv(), Args: args}.Copilot(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copilot -p: exit %d in %v", res.ExitCode, res.Duration)
	if res.ExitCode != 0 {
		t.Fatalf("copilot exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s", got, len(s.Commands), api.Outputs(), res.Stdout)
	}
	return api
}

// Without approval a shell call is refused and does not run; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func TestCopilotShellCallNeedsApproval(t *testing.T) {
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
	if out := api.Output(2); strings.Contains(out, "loopguard") || strings.Contains(out, "blocked") {
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

// Copilot denies a call when its preToolUse hook cannot start (a non-zero
// exit): the registration needs no fallback.
func TestCopilotHookThatCannotStartBlocks(t *testing.T) {
	e := newEnv(t)
	// A registration of a binary that is not there (moved, deleted).
	hooksFile := filepath.Join(e.G.Home, ".copilot", "hooks", "loopguard.json")
	b, err := os.ReadFile(hooksFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooksFile, []byte(strings.ReplaceAll(string(b), lgBin, lgBin+".gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if out := api.Output(0); !strings.Contains(out, "Denied") && !strings.Contains(out, "denied") {
		t.Errorf("the client reported %q; want a denial", out)
	}
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook could not start")
	}
}

// A hook that hangs (here: another process holds the audit log's lock) is
// cut by loopguard's own deadline, well inside Copilot's timeout (on which
// Copilot would run the call), and the answer is Copilot's deny.
func TestCopilotHookThatHangsBlocks(t *testing.T) {
	e := newEnv(t)
	unlock := agenttest.HoldAuditLock(t, e.G.State)
	defer unlock()
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
}

// Pins the host behaviour the deadline guards against: Copilot runs the
// call when a preToolUse hook times out.
func TestCopilotFailsOpenOnHookTimeout(t *testing.T) {
	e := newEnv(t)
	hooksFile := filepath.Join(e.G.Home, ".copilot", "hooks", "loopguard.json")
	slow := `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"sleep 30","timeoutSec":1}]}}`
	if err := os.WriteFile(hooksFile, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if !e.Exists("marker") {
		t.Fatal("Copilot no longer runs a call whose hook timed out; the fallback and deadline may be revisited")
	}
}

// Copilot CLI runs the hooks in a repository's .claude/settings.json too
// (in a trusted folder), with a Claude-shaped payload of its own. loopguard
// registered for Claude Code there (`loopguard init --project`) recognises
// Copilot's payload and answers in Copilot's format: the call is refused
// without an approval and runs once approved.
func TestCopilotRunsTheClaudeRegistration(t *testing.T) {
	e := newEnvFor(t, "")
	if err := e.G.Init(e.Ctx, e.Dir); err != nil {
		t.Fatal(err)
	}
	const cmd = "echo one >> runs.txt"
	api := e.run(agenttest.Script{
		Commands: []string{cmd, cmd},
		Between: func(i int, _ string) {
			if i == 0 {
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
			}
		},
	}, "--trust-folder")
	agenttest.WantBlocked(t, api, 0, "no_grant")
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
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

// runModel is run with another model (COPILOT_MODEL) and free-form calls.
func (e *env) runPatch(s agenttest.Script, args ...string) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	s.Tool, s.Custom = "apply_patch", true
	api := agenttest.NewResponsesAPI(t, s)
	res, err := agenttest.Run{Bin: e.copilot, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv(), Args: args}.Copilot(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copilot -p: exit %d in %v", res.ExitCode, res.Duration)
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s\nstderr: %s", got, len(s.Commands), api.Outputs(), res.Stdout, res.Stderr)
	}
	return api
}

// Copilot offers GPT-5 models (gpt-5.4 here) only a free-form apply_patch,
// whose patch arrives as the raw text of toolArgs. It is held as the Write
// of the file it adds: refused without an approval, applied once approved,
// and reviewed as that Write.
func TestCopilotGPT5PatchNeedsApproval(t *testing.T) {
	e := newEnv(t)
	const patch = "*** Begin Patch\n*** Add File: notes.txt\n+from the agent\n*** End Patch\n"
	api := e.runPatch(agenttest.Script{
		Commands: []string{patch, patch},
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
	if out := api.Output(1); strings.Contains(out, "loopguard") {
		t.Errorf("the approved patch was not applied: %q", out)
	}
	if got := e.Read("notes.txt"); got != "from the agent\n" {
		t.Errorf("notes.txt = %q; want the approved patch applied", got)
	}
	p, err := e.G.Pending(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range p {
		if x.Tool != "Write" {
			t.Errorf("pending %+v: the patch should be reviewed as a Write of notes.txt", x)
		}
	}
}

// Copilot runs both of loopguard's registrations for every call here: its
// own (~/.copilot/hooks) and the repository's Claude Code one
// (.claude/settings.json, in a trusted folder), one after the other. An
// approval is asked once, runs the call exactly once and is not reported
// consumed by the second registration; a retry is refused. A scoped call
// the first registration rewrites reaches the second as rewritten, and
// runs.
func TestCopilotTwoRegistrationsRunOnce(t *testing.T) {
	e := newEnv(t)
	if err := e.G.Init(e.Ctx, e.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "README.md"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const cmd = "echo one >> runs.txt"
	api := e.run(agenttest.Script{
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
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
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
