package copilottest

import (
	"os"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// Copilot runs the user's registration (~/.copilot/hooks/loopguard.json)
// and the repository's (.github/hooks/loopguard.json, which a teammate
// commits and the cloud agent needs) for every call, one after the other,
// both `loopguard hook copilot --event preToolUse` told apart only by
// --scope. An approval is asked once and runs the call exactly once: the
// second registration follows the first's answer instead of consuming the
// approval again (before, every approved call was refused by the second
// as approval_consumed). The attack: the model repeats the identical call
// at once; it is refused, the first registration deciding it afresh.
func TestCopilotUserAndRepositoryRegistrationsRunOnce(t *testing.T) {
	e := copilot.NewEnv(t)
	if out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "copilot", "--project", "--no-jail"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range []string{e.HooksFile(), e.Dir + "/.github/hooks/loopguard.json"} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "--scope") {
			t.Fatalf("%s names no registration (%v): %s", f, err, b)
		}
	}
	runsOnceThroughBoth(t, e)
}

// The repository's file as a teammate committed it with a loopguard from
// before --scope: the user's file names its scope, so the two are still
// told apart.
func TestCopilotOlderRepositoryRegistrationRunsOnce(t *testing.T) {
	e := copilot.NewEnv(t)
	if out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "copilot", "--project", "--no-jail"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f := e.Dir + "/.github/hooks/loopguard.json"
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(string(b), " --scope project", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	runsOnceThroughBoth(t, e)
}

func runsOnceThroughBoth(t *testing.T, e *agenttest.Env) {
	t.Helper()
	const cmd = "echo one >> runs.txt"
	api := e.Run(agenttest.Script{Commands: []string{cmd, cmd, cmd}, Between: e.ApproveAfter(0)}, "--trust-folder")
	agenttest.WantBlocked(t, api, 0, "no_grant")
	if out := api.Output(1); strings.Contains(out, "loopguard") || strings.Contains(out, "enied") {
		t.Errorf("the approved call was not run: %q", out)
	}
	agenttest.WantBlocked(t, api, 2, "approval_consumed")
	e.WantRanOnce()
	entries, err := e.G.Audit(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	allows, consumed := 0, 0
	for _, x := range entries {
		switch {
		case x.Event != "PreToolUse":
		case x.Reason == "exact_grant":
			allows++
		case x.Reason == "approval_consumed":
			consumed++
		}
	}
	if allows != 2 {
		t.Errorf("%d exact_grant answers, want 2: one per registration, the second following the first", allows)
	}
	if consumed == 0 {
		t.Error("the repeat was not refused as approval_consumed")
	}
}

// Control, the failure the names prevent: both files written before
// --scope (one name for both), the second registration consumes the
// approval the first used, and the approved call never runs. doctor fails
// there, and its fix rewrites the user's registration, never removing the
// repository's file.
func TestCopilotUnnamedRegistrationsRefuseTheApproval(t *testing.T) {
	e := copilot.NewEnv(t)
	if out, err := e.G.Run(e.Ctx, e.Dir, "init", "--agent", "copilot", "--project", "--no-jail"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range []string{e.HooksFile(), e.Dir + "/.github/hooks/loopguard.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.NewReplacer(" --scope project", "", " --scope user", "").Replace(string(b)))
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := e.G.Run(e.Ctx, e.Dir, "doctor", "--agent", "copilot")
	if err == nil || !strings.Contains(out, "cannot be told apart") || !strings.Contains(out, "loopguard init --agent copilot") ||
		strings.Contains(out, "uninstall --agent copilot --project") {
		t.Errorf("doctor with two unnamed registrations (%v):\n%s", err, out)
	}
	const cmd = "echo one >> runs.txt"
	api := e.Run(agenttest.Script{Commands: []string{cmd, cmd}, Between: e.ApproveAfter(0)}, "--trust-folder")
	agenttest.WantBlocked(t, api, 0, "no_grant")
	agenttest.WantBlocked(t, api, 1, "approval_consumed")
	if e.Exists("runs.txt") {
		t.Error("the approved call ran through two registrations with one name")
	}
}
