// Package geminitest runs loopguard under the real Gemini CLI (pinned in
// e2e/agenttest), registered by `loopguard init --agent gemini`, against a
// scripted fake Gemini API on loopback. Each test is one `gemini -p --yolo`
// run (Gemini's own confirmations off: what stops a call is the hook); the
// side effect on disk and what Gemini reported back to the model say what
// happened. Needs a Secret Service session (make test).
package geminitest

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

func TestMain(m *testing.M) { agenttest.Main(m, "gemini", &lgBin, &setupErr) }

type env struct {
	*agenttest.Env
	gemini string
}

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
func newEnv(t *testing.T) *env {
	t.Helper()
	agenttest.RequireKeyring(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	gemini := agenttest.Install(t, agenttest.Gemini)
	return &env{Env: agenttest.NewEnv(t, lgBin, "gemini", agenttest.WriteGeminiSettings), gemini: gemini}
}

// run plays script through one `gemini -p`.
func (e *env) run(s agenttest.Script) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	api := agenttest.NewGeminiAPI(t, s)
	res, err := agenttest.Run{Bin: e.gemini, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv()}.Gemini(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gemini -p: exit %d in %v", res.ExitCode, res.Duration)
	if res.ExitCode != 0 {
		t.Fatalf("gemini exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s", got, len(s.Commands), api.Outputs(), res.Stdout)
	}
	return api
}

// Without approval a shell call is refused and does not run; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func TestGeminiShellCallNeedsApproval(t *testing.T) {
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

// Gemini lets a call through when its hook cannot start. loopguard's
// registration echoes Gemini's deny when the binary is gone, so the call
// still does not run.
func TestGeminiHookThatCannotStartBlocks(t *testing.T) {
	e := newEnv(t)
	// A registration of a binary that is not there (moved, deleted).
	hooksFile := filepath.Join(e.G.Home, ".gemini", "settings.json")
	b, err := os.ReadFile(hooksFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooksFile, []byte(strings.ReplaceAll(string(b), lgBin, lgBin+".gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "hook_failed")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook could not start")
	}
}

// A hook that hangs (here: another process holds the audit log's lock) is
// cut by loopguard's own deadline, well inside Gemini's timeout, and the
// answer is Gemini's deny: the call does not run.
func TestGeminiHookThatHangsBlocks(t *testing.T) {
	e := newEnv(t)
	unlock := agenttest.HoldAuditLock(t, e.G.State)
	defer unlock()
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
}

// Pins the host behaviour the two tests above guard against: Gemini runs
// the call when a BeforeTool hook times out.
func TestGeminiFailsOpenOnHookTimeout(t *testing.T) {
	e := newEnv(t)
	hooksFile := filepath.Join(e.G.Home, ".gemini", "settings.json")
	slow := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"sleep 30","name":"slow","timeout":1000}]}]}}`
	if err := os.WriteFile(hooksFile, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if !e.Exists("marker") {
		t.Fatal("Gemini no longer runs a call whose hook timed out; the fallback and deadline may be revisited")
	}
}

// The model can ask Gemini to run a command in another directory
// (dir_path). An approval covers the command only where it was approved:
// the same text with a dir_path is refused and does not run there.
func TestGeminiApprovalIsBoundToTheDirectory(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(filepath.Join(e.Dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	const cmd = "echo one >> runs.txt"
	api := e.run(agenttest.Script{
		Commands: []string{cmd, cmd, cmd},
		Extra:    []map[string]any{nil, {"dir_path": "sub"}, nil},
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
	if e.Exists("sub/runs.txt") {
		t.Error("the approved command ran in the other directory")
	}
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run once where it was approved", got)
	}
}

// Gemini CLI runs the input a BeforeTool allow gives back (merged over the
// model's): under a scoped grant, `cat $'README.md'` (not plain text) is
// covered, runs as the canonical command loopguard analysed, prints the
// file, and the audit log records that what ran is what was allowed
// (AfterTool ran_as_approved, matched by what ran: Gemini sends no call
// id).
func TestGeminiRunsTheRewrite(t *testing.T) {
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
