//go:build linux

package hooks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/undo"
)

// TestWriteHeldWhileApprovedCallRuns: a file tool's write the jail's
// Edit(**) lets through with no decision is held while a call the user
// approved to run outside the jail runs in the project (the
// ninety-fourth attack run's Write of deploy.sh while the approved make
// ran); an exact approval of the write still runs it. Controls: the same
// write before and after the approved call runs with no decision, and a
// write in another project is not held.
func TestWriteHeldWhileApprovedCallRuns(t *testing.T) {
	h, _ := jailHarness(t)
	write := func(name string) map[string]any {
		return withInput(h.writeCall(filepath.Join(h.Project, name)), "content", "echo deploy\n")
	}
	stateDir := h.eng().Env.StateDir
	if d := h.decide(write("deploy.sh")); d.Behavior != Allow {
		t.Fatalf("a write with nothing running (control): %s %s", d.Reason, d.Message)
	}
	held, err := undo.HoldForApproved(stateDir, h.Project, "make all (test)")
	if err != nil {
		t.Fatal(err)
	}
	d := h.decide(write("deploy2.sh"))
	expect(t, "a write while the approved call runs", d, Deny, ReasonApprovedRunning)
	if !strings.Contains(d.Message, "make all (test)") {
		t.Errorf("the held write does not name the approved call: %s", d.Message)
	}
	h.approve(d)
	expect(t, "that write, approved exactly", h.decide(write("deploy2.sh")), Allow, ReasonExactGrant)
	for _, f := range held {
		f.Close()
	}
	if d := h.decide(write("deploy3.sh")); d.Behavior != Allow {
		t.Errorf("a write once the approved call ended (control): %s %s", d.Reason, d.Message)
	}
	// An approved call of a project that holds this one (a session
	// started in its directory) holds this one too (the ninety-fifth
	// attack run's session in sub/).
	held, err = undo.HoldForApproved(stateDir, filepath.Dir(h.Project), "make all (test)")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, "a write while the enclosing project's approved call runs", h.decide(write("deploy5.sh")), Deny, ReasonApprovedRunning)
	for _, f := range held {
		f.Close()
	}
	// Another project's approved call holds that project only.
	other := t.TempDir()
	held, err = undo.HoldForApproved(stateDir, other, "make all (test)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	if d := h.decide(write("deploy4.sh")); d.Behavior != Allow {
		t.Errorf("a write while another project's approved call runs (control): %s %s", d.Reason, d.Message)
	}
	// A write that lands in that project, from this session: held.
	into := withInput(h.writeCall(filepath.Join(other, "deploy.sh")), "content", "echo deploy\n")
	if d := h.decide(into); d.Behavior == Allow || d.Reason != ReasonApprovedRunning {
		t.Errorf("a write into the project whose approved call runs: %s %s", d.Reason, d.Message)
	}
}
