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

var codex = &agenttest.Agent{
	Name:   "codex",
	Title:  "Codex",
	Client: agenttest.Codex,
	NewAPI: agenttest.NewResponsesAPI,
	Configure: func(e *agenttest.Env, api *agenttest.FakeAPI) error {
		return agenttest.WriteCodexConfig(e.G.Home, api.URL)
	},
	Start:   agenttest.Run.Codex,
	Hooks:   ".codex/hooks.json",
	Refused: []string{"loopguard", "blocked"},
}

func TestMain(m *testing.M) { codex.Main(m) }

func TestCodexShellCallNeedsApproval(t *testing.T) {
	t.Parallel()
	agenttest.ShellCallNeedsApproval(codex.NewEnv(t))
}

// Codex lets a call through when its hook cannot start. loopguard's
// registration echoes Codex's deny when the binary is gone, so the call
// still does not run.
func TestCodexHookThatCannotStartBlocks(t *testing.T) {
	t.Parallel()
	agenttest.HookThatCannotStartBlocks(codex.NewEnv(t), agenttest.BlockedWith("hook_failed"))
}

func TestCodexHookThatHangsBlocks(t *testing.T) {
	t.Parallel()
	agenttest.HookThatHangsBlocks(codex.NewEnv(t))
}

// Pins the host behaviour the two tests above guard against: Codex runs the
// call when a PreToolUse hook times out.
func TestCodexFailsOpenOnHookTimeout(t *testing.T) {
	t.Parallel()
	agenttest.FailsOpenOnHookTimeout(codex.NewEnv(t),
		`{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"command","command":"sleep 30","timeout":1}]}]}}`)
}

// Codex applies `apply_patch <<'EOF' ... EOF` itself, without a shell; its
// hook sees a Bash call. loopguard binds it to the file it changes and that
// file's state: approved while the file is absent, the patch does not run
// once someone else created the file; a fresh approval then runs it once.
func TestCodexPatchIsBoundToItsFile(t *testing.T) {
	t.Parallel()
	e := codex.NewEnv(t)
	const patch = "apply_patch <<'EOF'\n" + agenttest.AddNotes + "EOF"
	api := e.Run(agenttest.Script{
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
	e.WantPatchApplied(api, 2)
}

// The model can ask Codex to run a command in another directory (workdir);
// Codex reports that directory as the hook's cwd. An approval covers the
// command only where it was approved: the same text elsewhere is refused
// and does not run there.
func TestCodexApprovalIsBoundToTheWorkdir(t *testing.T) {
	t.Parallel()
	other := t.TempDir()
	agenttest.ApprovalIsBoundToTheDirectory(codex.NewEnv(t), other, map[string]any{"workdir": other})
}

// Codex runs the command a PreToolUse allow gives back (updatedInput):
// under a scoped grant (bound to the project, which loopguard reads from
// Codex's session record), `cat $'README.md'` (not plain text) is covered,
// runs as the canonical command loopguard analysed, prints the file, and
// the audit log records that what ran is what was allowed (PostToolUse
// ran_as_approved, by tool_use_id).
func TestCodexRunsTheRewrite(t *testing.T) {
	t.Parallel()
	agenttest.RunsTheRewrite(codex.NewEnv(t))
}

// Codex's write_stdin types into a command it started, and no hook sees
// what it types (pinned here). So an exact approval of a shell is an
// approval of everything typed into it later: the model is told so when it
// asks, and show (and review) say so to the human. Once approved, the
// shell runs, in the jail (TestCodexTypedIntoTheJail), and what the model
// types into it runs there unchecked.
func TestCodexWriteStdinIsUnchecked(t *testing.T) {
	t.Parallel()
	e := codex.NewEnv(t)
	var shown string
	api := e.Run(agenttest.Script{
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
	e := codex.NewEnv(t)
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
		"CODEX_HOME=" + filepath.Join(e.G.Home, ".codex"), "FAKE_API_KEY=dummy", "TERM=xterm-256color"}, e.G.ClientEnv()...), []string{e.Client})
	ctx, cancel := context.WithTimeout(e.Ctx, 3*time.Minute)
	defer cancel()
	if screen, err := term.WaitFor(ctx, "Trust all and continue"); err != nil {
		t.Fatalf("codex did not ask to review the hooks: %v\n%s", err, screen)
	}
	// Keys follow the screen: on a loaded machine Codex can miss a key
	// typed while it draws, and Enter alone opens the review table, where
	// a person presses t (trust all).
	var sent time.Time
	for {
		b, _ := os.ReadFile(cfgPath)
		if strings.Count(string(b), "trusted_hash") >= 3 {
			break
		}
		if time.Since(sent) > 3*time.Second {
			switch screen := term.Screen(); {
			case strings.Contains(screen, "t trust all"):
				sent = time.Now()
				if err := term.Keys("t"); err != nil {
					t.Fatal(err)
				}
			case strings.Contains(screen, "Trust all and continue"):
				sent = time.Now()
				if err := term.Keys("2"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(500 * time.Millisecond)
				if err := term.Keys("Enter"); err != nil {
					t.Fatal(err)
				}
			}
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

// TestCodexTypedIntoTheJail: what write_stdin types into an interactive
// program reaches no hook, so under Codex such a program runs in the jail:
// with init's defaults (the jail grant) `nice python3` runs there without
// a decision; with --no-jail the human approves it exactly and it still
// runs there. Either way Python, told through write_stdin to write a file
// in the home, is refused, and the file it writes in the project lands
// (the control).
func TestCodexTypedIntoTheJail(t *testing.T) {
	t.Parallel()
	for _, jail := range []bool{true, false} {
		e := codex.NewEnv(t)
		if jail {
			e = codex.NewJailedEnv(t)
		}
		outside := filepath.Join(e.G.Home, "typed-outside.txt")
		typed := fmt.Sprintf("open(%q,'w').write('x')\nopen('typed.txt','w').write('inside')\n", outside)
		script := agenttest.Script{
			Commands: []string{"nice python3", agenttest.WriteStdin},
			Extra:    []map[string]any{{"tty": true, "yield_time_ms": 500}, {"chars": typed, "yield_time_ms": 1500}},
		}
		if !jail {
			script.Commands = []string{"nice python3", "nice python3", agenttest.WriteStdin}
			script.Extra = append([]map[string]any{{"tty": true, "yield_time_ms": 500}}, script.Extra...)
			script.Between = func(i int, _ string) {
				if i == 0 {
					if err := e.ApproveOnly(); err != nil {
						t.Error(err)
					}
				}
			}
		}
		api := e.Run(script)
		last := len(script.Commands) - 1
		if _, err := os.Stat(outside); err == nil {
			t.Errorf("jail grant %v: python3 behind nice wrote %s through write_stdin; the output was %q", jail, outside, api.Output(last))
		}
		if got := e.Read("typed.txt"); got != "inside" {
			t.Errorf("jail grant %v: typed.txt = %q; want the project write to land (output %q, %q)", jail, got, api.Output(last-1), api.Output(last))
		}
		// Refused by the jail: EACCES from Landlock, or EROFS where the
		// launcher also mounts the home read-only (Codex's own sandbox is
		// off here: danger-full-access).
		if out := api.Output(last); !strings.Contains(out, "PermissionError") && !strings.Contains(out, "Read-only file system") {
			t.Errorf("jail grant %v: python3 was not refused the home write: %q", jail, out)
		}
	}
}

// TestCodexJailedCallRuns: init --agent grants the jail, and Codex runs the
// jailed rewrite: no decision, the project write lands, the home write is
// refused by the kernel.
func TestCodexJailedCallRuns(t *testing.T) {
	t.Parallel()
	agenttest.JailedCallRuns(codex.NewJailedEnv(t))
}
