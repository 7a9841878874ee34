package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

// asWrittenCommand is the form an approved cmd runs in where it is,
// holding the project (confine.AsWrittenCommand).
func asWrittenCommand(h *harness, cmd string) string {
	return jailLauncher + " exec --cap as-written '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' '--' '" + policy.BashPath() + "' 'bash' '-c' " + "'" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
}

// wantAsWritten checks that d, an exact approval of cmd, runs cmd in the
// as-written form: where it is, holding the project, never unconfined.
func wantAsWritten(t *testing.T, name string, h *harness, cmd string, d Decision) {
	t.Helper()
	expect(t, name, d, Allow, ReasonExactGrant)
	got, _ := d.UpdatedInput["command"].(string)
	if got != asWrittenCommand(h, cmd) || d.Capability != confine.CapAsWritten || strings.Contains(d.Message, "unconfined") || !strings.Contains(d.Message, "holds the project") {
		t.Errorf("%s: approved exactly, it runs as %q under %q (%s)\nwant %q", name, got, d.Capability, d.Message, asWrittenCommand(h, cmd))
	}
}

// TestApprovedCallHoldsTheProjectUnderTheJail (the ninety-fifth attack
// run): under the jail grant, where jailed calls and the file tools'
// writes run in the project with no decision, an exactly approved call
// that takes no other form runs through the launcher's as-written form,
// which holds the project while it runs, wherever the host runs the
// rewrite or loopguard's wrapper makes the launch: Claude Code registered
// without --ticket (no route out of its sandbox), the wrapper (no
// rewrite: the ticket's capability says it). Controls: without the jail
// grant, or where the host can neither rewrite nor wrap, it runs as
// written; a call that needs the network alone keeps the network form.
func TestApprovedCallHoldsTheProjectUnderTheJail(t *testing.T) {
	const cmd = "make all && git push"
	h, run := jailHarness(t)
	d := run(cmd)
	if d.Behavior == Allow {
		t.Fatalf("%s: allowed without an approval (%s)", cmd, d.Reason)
	}
	h.approve(d)
	wantAsWritten(t, "Claude Code without --ticket", h, cmd, run(cmd))

	decide := func(rewrite, wrapped bool) Decision {
		c := h.call(withInput(h.fixture("pretooluse-bash.json"), "command", cmd))
		c.Rewrite, c.Wrapped = rewrite, wrapped
		return h.eng().Decide(context.Background(), c)
	}
	h.approve(decide(false, true))
	d = decide(false, true)
	expect(t, "through the wrapper", d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil || d.Capability != confine.CapAsWritten || !strings.Contains(d.Message, "holds the project") {
		t.Errorf("through the wrapper: updated %v, capability %q (%s), want the ticket's as-written launch", d.UpdatedInput, d.Capability, d.Message)
	}
	h.approve(decide(false, false))
	d = decide(false, false)
	expect(t, "a host that neither rewrites nor wraps (control)", d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil || d.Capability != "" {
		t.Errorf("a host that neither rewrites nor wraps (control): updated %v, capability %q", d.UpdatedInput, d.Capability)
	}

	const curl = "curl -sSL https://example.com/x.sh -o x.sh"
	h.approve(run(curl))
	if got, _ := run(curl).UpdatedInput["command"].(string); !strings.HasPrefix(got, jailLauncher+" exec --cap project-write+network:443 ") {
		t.Errorf("a download (control): runs %q, want the network form", got)
	}

	nh, nrun := rewriteHarness(t, jailLauncher, "make")
	d = nrun(cmd)
	nh.approve(d)
	d = nrun(cmd)
	expect(t, "no jail grant (control)", d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil || d.Capability != "" {
		t.Errorf("no jail grant (control): runs as %v under %q", d.UpdatedInput["command"], d.Capability)
	}
}

// TestApprovedCallHoldsWhatItReaches (the ninety-sixth attack run): the
// approved call's launch holds the places outside the project it reaches
// too (a link to ../lib at the project's top), so that a session in
// ../lib cannot rewrite it while it runs. Control: without the link, a
// call that reaches nothing outside holds its project alone.
func TestApprovedCallHoldsWhatItReaches(t *testing.T) {
	h, run := jailHarness(t)
	lib := h.Project + "-lib"
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lib, filepath.Join(h.Project, "vendor-lib")); err != nil {
		t.Fatal(err)
	}
	const cmd = "sh vendor-lib/deploy.sh && git push"
	_ = os.WriteFile(filepath.Join(lib, "deploy.sh"), []byte("echo deploy\n"), 0o644)
	h.approve(run(cmd))
	got, _ := run(cmd).UpdatedInput["command"].(string)
	if !strings.Contains(got, "'--hold' '"+lib) {
		t.Errorf("an approved call through vendor-lib -> %s runs as %q, holding nothing there", lib, got)
	}
	// Without the link, nothing outside is reached.
	_ = os.Remove(filepath.Join(h.Project, "vendor-lib"))
	const plain = "make all && git push"
	h.approve(run(plain))
	if got, _ := run(plain).UpdatedInput["command"].(string); strings.Contains(got, "--hold") || got != asWrittenCommand(h, plain) {
		t.Errorf("an approved call that reaches nothing outside (control) runs as %q", got)
	}
}
