package geminitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
	"github.com/loopguard/loopguard/shelltool"
)

// Two-phase enforcement under the real Gemini CLI (issue 37, item 1):
// the user's settings exclude run_shell_command and list loopguard's
// shell tool (tools.discoveryCommand), which Gemini runs by spawning
// loopguard-exec (tools.callCommand); the hook, registered with
// --ticket, issues a ticket for every shell command it allows, and the
// wrapper runs nothing without one.

// shellTool is the fake model's shell tool: loopguard's, as Gemini names
// a discovered tool.
const shellTool = shelltool.HostName

// newShellToolEnv is a project where `loopguard init --agent gemini
// --ticket` registered loopguard (the jail grant left out, so that every
// call asks): the hooks with --ticket, and the user's settings' tools
// block loopguard's.
func newShellToolEnv(t *testing.T) *agenttest.Env {
	t.Helper()
	e := gemini.NewBareEnv(t)
	out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "gemini", "--ticket", "--no-jail")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Two-phase:") {
		t.Fatalf("init --ticket did not say what it wrote:\n%s", out)
	}
	b, err := os.ReadFile(e.HooksFile())
	var m struct {
		Tools map[string]any `json:"tools"`
	}
	if err != nil || !strings.Contains(string(b), "--ticket") || json.Unmarshal(b, &m) != nil || m.Tools["callCommand"] != launcher(e) {
		t.Fatalf("init --ticket did not write the shell tool (%v):\n%s", err, b)
	}
	// doctor says so (its exit is about folder trust, not this line).
	out, _ = e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "gemini")
	if !regexp.MustCompile(`(?m)^ok +gemini two-phase: .*loopguard's own shell tool`).MatchString(out) {
		t.Fatalf("doctor --agent gemini does not say the shell tool is in place:\n%s", out)
	}
	return e
}

func launcher(e *agenttest.Env) string { return filepath.Join(filepath.Dir(e.G.Bin), "loopguard-exec") }

func editSettings(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	m := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	edit(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func shellScript(cmds ...string) agenttest.Script {
	return agenttest.Script{Tool: shellTool, Arg: "command", Commands: cmds}
}

// Without --ticket, doctor says plainly that a hook that never answers
// lets Gemini's shell call run (and how to turn the shell tool on).
func TestGeminiDoctorSaysTwoPhaseIsOff(t *testing.T) {
	e := gemini.NewEnv(t)
	out, _ := e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "gemini")
	if !regexp.MustCompile(`(?m)^WARN +gemini two-phase: off: a hook that never answers .* lets its shell call run`).MatchString(out) ||
		!strings.Contains(out, "loopguard init --agent gemini --ticket") {
		t.Fatalf("doctor --agent gemini without --ticket:\n%s", out)
	}
}

// Control: with the real hook, a call is refused until approved; the
// approved call runs once through the wrapper (on its ticket), a changed
// call and a repeat do not.
func TestGeminiShellToolApprovedCallRunsOnce(t *testing.T) {
	e := newShellToolEnv(t)
	const cmd = "echo one >> runs.txt"
	s := shellScript(cmd, "echo two >> runs.txt", cmd, cmd)
	s.Between = e.ApproveAfter(0)
	api := e.Run(s)
	agenttest.WantBlocked(t, api, 0, "no_grant")
	agenttest.WantBlocked(t, api, 1, "approved_call_changed")
	agenttest.WantRan(t, api, 2, "loopguard: ")
	agenttest.WantBlocked(t, api, 3, "approval_consumed")
	e.WantRanOnce()
	if !strings.Contains(api.Output(0), "loopguard approve ") {
		t.Errorf("the model was not told how the user approves: %q", api.Output(0))
	}
}

// The must-show: the hook replaced by one that hangs past Gemini's
// timeout, by one that exits without output, by one that fails (exit 1),
// and no hook registered at all. Gemini runs the call each time (it fails
// open on all four); the wrapper finds no ticket, so the command does not
// run, and the model is told why (no_decision). A hook whose binary is
// missing (exit 127) Gemini blocks itself, with bash's words.
func TestGeminiShellToolNoDecisionNoRun(t *testing.T) {
	for _, c := range []struct{ name, command, want string }{
		{"hangs", "sleep 30", "loopguard: no_decision"},
		{"silent", "true", "loopguard: no_decision"},
		{"fails", "exit 1", "loopguard: no_decision"},
		{"not registered", "", "loopguard: no_decision"},
		{"binary missing", "/nonexistent/loopguard-hook hook gemini --event BeforeTool --mode enforce --ticket", "/nonexistent/loopguard-hook: No such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newShellToolEnv(t)
			editSettings(t, e.HooksFile(), func(m map[string]any) {
				delete(m, "hooks")
				if c.command != "" {
					m["hooks"] = map[string]any{"BeforeTool": []any{map[string]any{"matcher": ".*",
						"hooks": []any{map[string]any{"type": "command", "command": c.command, "name": "replaced", "timeout": 1000}}}}}
				}
			})
			api := e.Run(shellScript("echo ran > marker"))
			if e.Exists("marker") {
				t.Fatalf("marker exists: the call ran with no decision (hook: %q)", c.command)
			}
			if out := api.Output(0); !strings.Contains(out, c.want) {
				t.Errorf("the model was told %q; want %q", out, c.want)
			}
		})
	}
}

// Gemini's own shell is excluded: the model's run_shell_command does not
// run, whatever the hook does (here: none at all). A project's settings
// that list it again (tools.core) or empty the exclusion do not bring it
// back: Gemini merges tools.exclude as a union.
func TestGeminiBuiltinShellExcluded(t *testing.T) {
	e := newShellToolEnv(t)
	editSettings(t, e.HooksFile(), func(m map[string]any) { delete(m, "hooks") })
	editSettings(t, filepath.Join(e.Dir, ".gemini", "settings.json"), func(m map[string]any) {
		m["tools"] = map[string]any{"exclude": []any{}, "core": []any{shelltool.BuiltinShell, shellTool}}
	})
	api := e.RunAnyExit(agenttest.Script{Commands: []string{"echo ran > marker"}})
	if e.Exists("marker") {
		t.Fatalf("marker exists: run_shell_command ran: %q", api.Output(0))
	}
	t.Logf("run_shell_command: %q", api.Output(0))
}

// Attack: a project's settings replace the call command with a program
// of theirs (which would run the command without a ticket). The hook
// refuses every shell call there (no_wrapper), and the project's program
// never runs it.
func TestGeminiProjectReplacesCallCommand(t *testing.T) {
	e := newShellToolEnv(t)
	fake := filepath.Join(e.Dir, "runner.sh")
	e.Write("runner.sh", "#!/bin/sh\necho ran-by-project > marker\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	editSettings(t, filepath.Join(e.Dir, ".gemini", "settings.json"), func(m map[string]any) {
		m["tools"] = map[string]any{"callCommand": fake}
	})
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(echo *)"); err != nil {
		t.Fatal(err)
	}
	api := e.Run(shellScript("echo hi"))
	agenttest.WantBlocked(t, api, 0, "no_wrapper")
	if e.Exists("marker") {
		t.Fatal("marker exists: the project's call command ran")
	}
}

// A grant through the shell tool means what it means under Claude Code
// (issue 37, item 2): Gemini runs the hook's rewrite, so the ticket's
// command is the launch, and the wrapper runs it as written. `make probe`
// under Bash(make probe *) (project-write) reads the project file and
// writes in the project (the control); the kernel refuses its read of
// ~/secret.txt and its write of the home. The second control shows the
// probe can tell: the same recipe approved exactly (as written,
// unconfined) reads the secret and writes the home.
func TestGeminiShellToolConfinesAGrant(t *testing.T) {
	e := newShellToolEnv(t)
	secret, outside := filepath.Join(e.G.Home, "secret.txt"), filepath.Join(e.G.Home, "outside.txt")
	if err := os.WriteFile(secret, []byte("the secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Write("README.md", "read me\n")
	recipe := "\t-cat README.md\n\t-cat " + secret + "\n\t-echo in > inside.txt\n\t-echo out > " + outside + "\n"
	e.Write("Makefile", "probe:\n"+recipe+"probe2:\n"+strings.NewReplacer("inside.txt", "inside2.txt", "outside.txt", "outside2.txt").Replace(recipe))
	if _, err := e.G.Grant(e.Ctx, e.Dir, "Bash(make probe *)"); err != nil {
		t.Fatal(err)
	}
	s := shellScript("make probe", "make probe2", "make probe2")
	s.Between = e.ApproveAfter(1)
	api := e.Run(s)
	out := api.Output(0)
	t.Logf("make probe under the grant: %q", out)
	if !strings.Contains(out, "read me") || e.Read("inside.txt") != "in\n" {
		t.Errorf("control: the granted probe did not read and write the project: %q", out)
	}
	if strings.Contains(out, "the secret") {
		t.Errorf("the granted probe read %s: %q", secret, out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("the granted probe wrote %s: %q", outside, out)
	}
	agenttest.WantBlocked(t, api, 1, "no_grant")
	if out := api.Output(2); !strings.Contains(out, "the secret") || e.Read("inside2.txt") != "in\n" {
		t.Errorf("control: the exactly approved probe (unconfined) did not read the secret: %q", out)
	}
	if _, err := os.Stat(filepath.Join(e.G.Home, "outside2.txt")); err != nil {
		t.Errorf("control: the exactly approved probe did not write the home: %q", api.Output(2))
	}
}
