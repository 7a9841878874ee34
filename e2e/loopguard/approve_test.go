package loopguard

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// Without a grant the command does not run, and the model is told why and
// what the human must run.
func TestNoGrantDeniesAndSaysWhatToDo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	session := sessionID(t)
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_ng1", "echo hi > marker")),
		claudetest.Text("stopped"),
	}}, nil, "--session-id", session)
	if e.exists("marker") {
		t.Fatal("marker exists: the command ran without a grant")
	}
	r := wantDenied(t, api, "toolu_ng1", "no_grant")
	p, err := e.g.OnlyPending(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Session != session || p.Agent != "main" || p.Tool != "Bash" || !strings.Contains(p.Summary, "echo hi > marker") {
		t.Errorf("pending = %+v; want the Bash call of the main agent in session %s", p, session)
	}
	for _, want := range []string{"loopguard approve " + p.ID, "loopguard show " + p.ID, "retry the identical call"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("the model was not told %q: %q", want, r.Content)
		}
	}
}

// Approved from a pseudo-terminal, the identical retry runs once; a retry
// with one argument changed is denied, and so is a second identical retry.
func TestApproveThenIdenticalRetryRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const cmd = "echo one >> runs.txt"
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_ap1", cmd)),
		claudetest.Tools(bash("toolu_ap2", "echo two >> runs.txt")), // one argument changed
		claudetest.Tools(bash("toolu_ap3", cmd)),                    // the identical retry
		claudetest.Tools(bash("toolu_ap4", cmd)),                    // once more
		claudetest.Text("done"),
	}}, func(p *Proxy) { p.OnToolResult("toolu_ap1", e.approveOnly) })

	wantDenied(t, api, "toolu_ap1", "no_grant")
	wantDenied(t, api, "toolu_ap2", "approved_call_changed")
	wantRan(t, api, "toolu_ap3")
	wantDenied(t, api, "toolu_ap4", "approval_consumed")
	if got := e.read("runs.txt"); got != "one\n" {
		t.Errorf("runs.txt = %q; want the approved command to have run exactly once", got)
	}
}
