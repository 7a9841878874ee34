// Package codextest runs loopguard under the real Codex CLI (pinned in
// e2e/agenttest), registered by `loopguard init --agent codex`, against a
// scripted fake Responses API on loopback. Each test is one `codex exec`
// run; the side effect on disk and what Codex reported back to the model
// say what happened. Needs a Secret Service session (make test).
package codextest

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

func TestMain(m *testing.M) { agenttest.Main(m, "codex", &lgBin, &setupErr) }

type env struct {
	*agenttest.Env
	codex string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	agenttest.RequireKeyring(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	codex := agenttest.Install(t, agenttest.Codex)
	return &env{Env: agenttest.NewEnv(t, lgBin, "codex", nil), codex: codex}
}

// run plays script through one `codex exec`.
func (e *env) run(s agenttest.Script) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	api := agenttest.NewResponsesAPI(t, s)
	if err := agenttest.WriteCodexConfig(e.G.Home, api.URL); err != nil {
		t.Fatal(err)
	}
	res, err := agenttest.Run{Bin: e.codex, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv()}.Codex(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("codex exec: exit %d in %v", res.ExitCode, res.Duration)
	if res.ExitCode != 0 {
		t.Fatalf("codex exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s", got, len(s.Commands), api.Outputs(), res.Stdout)
	}
	return api
}

// Without approval a shell call is refused and does not run; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func TestCodexShellCallNeedsApproval(t *testing.T) {
	t.Parallel()
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

// Codex lets a call through when its hook cannot start. loopguard's
// registration echoes Codex's deny when the binary is gone, so the call
// still does not run.
func TestCodexHookThatCannotStartBlocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A registration of a binary that is not there (moved, deleted).
	hooksFile := filepath.Join(e.G.Home, ".codex", "hooks.json")
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
// cut by loopguard's own deadline, well inside Codex's timeout, and the
// answer is Codex's deny: the call does not run.
func TestCodexHookThatHangsBlocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	unlock := agenttest.HoldAuditLock(t, e.G.State)
	defer unlock()
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
}

// Pins the host behaviour the two tests above guard against: Codex runs the
// call when a PreToolUse hook times out.
func TestCodexFailsOpenOnHookTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hooksFile := filepath.Join(e.G.Home, ".codex", "hooks.json")
	slow := `{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"command","command":"sleep 30","timeout":1}]}]}}`
	if err := os.WriteFile(hooksFile, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if !e.Exists("marker") {
		t.Fatal("Codex no longer runs a call whose hook timed out; the fallback and deadline may be revisited")
	}
}

// Codex applies `apply_patch <<'EOF' ... EOF` itself, without a shell; its
// hook sees a Bash call. loopguard binds it to the file it changes and that
// file's state: approved while the file is absent, the patch does not run
// once someone else created the file; a fresh approval then runs it once.
func TestCodexPatchIsBoundToItsFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes.txt\n+from the agent\n*** End Patch\nEOF"
	api := e.run(agenttest.Script{
		Commands: []string{patch, patch, patch},
		Between: func(i int, _ string) {
			switch i {
			case 0:
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
				// The file appears after the approval.
				if err := os.WriteFile(filepath.Join(e.Dir, "notes.txt"), []byte("from someone else\n"), 0o644); err != nil {
					t.Error(err)
				}
			case 1:
				// Back to the state that was approved.
				if err := os.Remove(filepath.Join(e.Dir, "notes.txt")); err != nil {
					t.Error(err)
				}
			}
		},
	})
	agenttest.WantBlocked(t, api, 0, "no_grant")
	agenttest.WantBlocked(t, api, 1, "target_state_drift")
	if out := api.Output(2); strings.Contains(out, "loopguard") {
		t.Errorf("the approved patch was not applied: %q", out)
	}
	if got := e.Read("notes.txt"); got != "from the agent\n" {
		t.Errorf("notes.txt = %q; want the approved patch applied once", got)
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

// The model can ask Codex to run a command in another directory (workdir);
// Codex reports that directory as the hook's cwd. An approval covers the
// command only where it was approved: the same text elsewhere is refused
// and does not run there.
func TestCodexApprovalIsBoundToTheWorkdir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := t.TempDir()
	const cmd = "echo one >> runs.txt"
	api := e.run(agenttest.Script{
		Commands: []string{cmd, cmd, cmd},
		Extra:    []map[string]any{nil, {"workdir": other}, nil},
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
	if _, err := os.Stat(filepath.Join(other, "runs.txt")); err == nil {
		t.Error("the approved command ran in the other directory")
	}
	if got := e.Read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run once where it was approved", got)
	}
}
