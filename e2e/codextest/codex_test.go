// Package codextest runs loopguard under the real Codex CLI (pinned in
// e2e/agenttest), registered by `loopguard init --agent codex`, against a
// scripted fake Responses API on loopback. Each test is one `codex exec`
// run; the side effect on disk and what Codex reported back to the model
// say what happened. Needs a Secret Service session (make test).
package codextest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// Codex runs the command a PreToolUse allow gives back (updatedInput):
// under a scoped grant (bound to the project, which loopguard reads from
// Codex's session record), `cat $'README.md'` (not plain text) is covered,
// runs as the canonical command loopguard analysed, prints the file, and
// the audit log records that what ran is what was allowed (PostToolUse
// ran_as_approved, by tool_use_id).
func TestCodexRunsTheRewrite(t *testing.T) {
	t.Parallel()
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

// Codex's write_stdin types into a command it started, and no hook sees
// what it types (pinned here). So an exact approval of a shell is an
// approval of everything typed into it later: the model is told so when it
// asks, and show (and review) say so to the human. Once approved, the
// shell runs, and what the model types into it runs unchecked.
func TestCodexWriteStdinIsUnchecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var shown string
	api := e.run(agenttest.Script{
		Commands: []string{"sh", "sh", agenttest.WriteStdin},
		Extra: []map[string]any{{"tty": true, "yield_time_ms": 500}, {"tty": true, "yield_time_ms": 500},
			{"chars": "echo typed > typed.txt\n", "yield_time_ms": 1000}},
		Between: func(i int, _ string) {
			if i == 0 {
				p, err := e.G.OnlyPending(e.Ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if shown, err = e.G.Show(e.Ctx, p.ID); err != nil {
					t.Error(err)
				}
				if err := e.ApproveOnly(); err != nil {
					t.Error(err)
				}
			}
		},
	})
	if out := api.Output(0); !strings.Contains(out, "write_stdin") || !strings.Contains(out, "runs unchecked") {
		t.Errorf("the model was not told that what is typed into sh runs unchecked: %q", out)
	}
	if !strings.Contains(shown, "runs unchecked") {
		t.Errorf("show does not say that what is typed into sh runs unchecked:\n%s", shown)
	}
	if got := e.Read("typed.txt"); got != "typed\n" {
		t.Fatalf("typed.txt = %q: Codex no longer runs what write_stdin types into an approved shell; the warning may be revisited", got)
	}
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range entries {
		if x.Event == "PreToolUse" && x.Tool != "Bash" {
			t.Errorf("a hook saw %+v", x)
		}
	}
}

// On a machine that uses only Codex, doctor checks Codex, not Claude Code:
// it fails while Codex does not trust loopguard's hooks, with a fix line
// that works: a person starts codex at a terminal and answers "Hooks need
// review" with "Trust all and continue". Then doctor passes, exit 0.
func TestCodexDoctorOnlyCodex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, err := e.G.Run(e.Ctx, e.Dir, "doctor")
	if err == nil {
		t.Fatalf("doctor passed with Codex's hooks untrusted:\n%s", out)
	}
	for _, want := range []string{"checking codex, the agents loopguard is registered with here",
		"Codex does not trust loopguard's hooks", `choose "Trust all and continue"`} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hooks PreToolUse") || strings.Contains(out, "sandbox") {
		t.Errorf("doctor checked Claude Code, which is not used here:\n%s", out)
	}

	// The fix, as a person does it.
	cfgPath := filepath.Join(e.G.Home, ".codex", "config.toml")
	if err := agenttest.WriteCodexConfig(e.G.Home, "http://127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(cfgPath)
	cfg = append(cfg, fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", e.Dir)...)
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	term := agenttest.StartTmux(t, e.Dir, append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.G.Home,
		"CODEX_HOME=" + filepath.Join(e.G.Home, ".codex"), "FAKE_API_KEY=dummy", "TERM=xterm-256color"}, e.G.ClientEnv()...), []string{e.codex})
	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Minute)
	defer cancel()
	if screen, err := term.WaitFor(ctx, "Trust all and continue"); err != nil {
		t.Fatalf("codex did not ask to review the hooks: %v\n%s", err, screen)
	}
	if err := term.Keys("2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := term.Keys("Enter"); err != nil {
		t.Fatal(err)
	}
	for {
		b, _ := os.ReadFile(cfgPath)
		if strings.Count(string(b), "trusted_hash") >= 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("codex recorded no trust:\n%s\nscreen:\n%s", b, term.Screen())
		case <-time.After(200 * time.Millisecond):
		}
	}
	out, err = e.G.Run(e.Ctx, e.Dir, "doctor")
	if err != nil {
		t.Fatalf("doctor after the fix: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ok    codex ") || !strings.Contains(out, "All checks passed") {
		t.Errorf("doctor after the fix:\n%s", out)
	}
}
