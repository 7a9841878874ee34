// Package qwentest runs loopguard under the real Qwen Code (pinned in
// e2e/agenttest), registered by `loopguard init --agent qwen`, against a
// scripted fake Chat Completions API on loopback. Each test is one
// `qwen --yolo` run (Qwen Code's own confirmations off: what stops a call
// is the hook); the side effect on disk and what Qwen Code reported back to
// the model say what happened. Needs a Secret Service session (make test).
package qwentest

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

func TestMain(m *testing.M) { agenttest.Main(m, "qwen", &lgBin, &setupErr) }

type env struct {
	*agenttest.Env
	qwen string
}

// The tests run one at a time: each starts a Node client, and several at
// once on a loaded machine push them past their own internal timeouts.
func newEnv(t *testing.T) *env {
	t.Helper()
	agenttest.RequireKeyring(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	qwen := agenttest.Install(t, agenttest.Qwen)
	return &env{Env: agenttest.NewEnv(t, lgBin, "qwen", nil), qwen: qwen}
}

// run plays script through one `qwen --yolo`.
func (e *env) run(s agenttest.Script) *agenttest.FakeAPI {
	t := e.T
	t.Helper()
	api := agenttest.NewChatAPI(t, s)
	res, err := agenttest.Run{Bin: e.qwen, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv()}.Qwen(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("qwen: exit %d in %v", res.ExitCode, res.Duration)
	if res.ExitCode != 0 {
		t.Fatalf("qwen exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s", got, len(s.Commands), api.Outputs(), res.Stdout)
	}
	return api
}

// Without approval a shell call is refused and does not run; approved from
// a terminal, the identical call runs once; a changed call does not, and
// neither does a second identical retry.
func TestQwenShellCallNeedsApproval(t *testing.T) {
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

// Qwen Code lets a call through when its hook cannot start. loopguard's
// registration echoes Qwen Code's deny when the binary is gone.
func TestQwenHookThatCannotStartBlocks(t *testing.T) {
	e := newEnv(t)
	settings := filepath.Join(e.G.Home, ".qwen", "settings.json")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(strings.ReplaceAll(string(b), lgBin, lgBin+".gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	agenttest.WantBlocked(t, api, 0, "hook_failed")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook could not start")
	}
}

// A hook that hangs (another process holds the audit log's lock) is cut
// by loopguard's own deadline, well inside Qwen Code's timeout, and the
// answer is Qwen Code's deny. The deny is in the audit log once the lock
// is free, with what the model was told.
func TestQwenHookThatHangsBlocks(t *testing.T) {
	e := newEnv(t)
	unlock := agenttest.HoldAuditLock(t, e.G.State)
	api := e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	unlock()
	agenttest.WantBlocked(t, api, 0, "deadline")
	if e.Exists("marker") {
		t.Fatal("marker exists: the call ran although the hook hung")
	}
	out, err := e.G.Run(e.Ctx, e.Dir, "audit", "--json", "-n", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"reason":"deadline"`) || !strings.Contains(out, `"told":"loopguard: deadline`) {
		t.Errorf("no deadline entry recording what the model was told:\n%s", out)
	}
}

// Pins the host behaviour the two tests above guard against: Qwen Code
// runs the call when a PreToolUse hook times out.
func TestQwenFailsOpenOnHookTimeout(t *testing.T) {
	e := newEnv(t)
	settings := filepath.Join(e.G.Home, ".qwen", "settings.json")
	slow := `{"hooks":{"PreToolUse":[{"matcher":"","hooks":[{"type":"command","command":"sleep 30","timeout":1}]}]}}`
	if err := os.WriteFile(settings, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if !e.Exists("marker") {
		t.Fatal("Qwen Code no longer runs a call whose hook timed out; the fallback and deadline may be revisited")
	}
}

// Qwen Code runs the model's own command text (it ignores a hook's
// updatedInput), so a scope covers only a command written plainly: under
// a grant of cat, `cat README.md` runs (the control) and `cat $'README.md'`
// is refused as not_canonical.
func TestQwenScopeCoversOnlyPlainText(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Dir, "README.md"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(cat *)"); err != nil {
		t.Fatal(err)
	}
	api := e.run(agenttest.Script{Commands: []string{"cat README.md", "cat $'README.md'"}})
	if out := api.Output(0); !strings.Contains(out, "read me") {
		t.Errorf("cat README.md under the grant: %q, want the file printed", out)
	}
	agenttest.WantBlocked(t, api, 1, "not_canonical")
}
