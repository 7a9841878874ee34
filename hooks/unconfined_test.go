package hooks

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

// leaveSandbox is h's engine as a --ticket registration for Claude Code
// builds it: the host routes the launcher's escalation forms out of its
// sandbox on the hook's ticket. The home is one outside the temporary
// directories (the harness's is below /tmp, which the jail gives each call
// privately, so nothing written there is outside).
func leaveSandbox(h *harness) {
	eng := h.eng
	h.eng = func() *Engine {
		e := eng()
		e.Env.LeaveSandbox = true
		e.Env.Home = "/home/lg-test"
		return e
	}
}

// unconfinedCommand is the form an approved cmd runs in outside the
// sandbox and the jail.
func unconfinedCommand(h *harness, cmd string) string {
	return jailLauncher + " exec --cap unconfined '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' '--' '" + policy.BashPath() + "' 'bash' '-c' " + "'" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
}

// TestExactBeyondTheNetworkRunsUnconfined (issue 36): under the jail grant
// with two-phase enforcement for Claude Code, a call held because it
// needs more than the network (git's own directory, a write in the home)
// says before the human decides that, approved exactly, it runs outside
// the sandbox and the jail, unconfined; approved, it runs in the form
// init's second excludedCommands entry matches, once. A download into the
// project keeps the network form (confined beats unconfined); a call
// that needs git's own directory alone (git commit) runs where Claude
// Code's sandbox gives it that. A DANGER call, the agent's own dangerouslyDisableSandbox, an unparseable call and
// one that writes executable configuration run as approved, unchanged.
func TestExactBeyondTheNetworkRunsUnconfined(t *testing.T) {
	h, run := jailHarness(t)
	leaveSandbox(h)
	entry := strings.TrimSuffix(confine.UnconfinedExclusion(jailLauncher), "*")
	for _, cmd := range []string{
		"git fetch origin",
		"git pull --ff-only",
		"git push origin main",
		"git fetch origin && git add -A",
		"curl -sS -o ~/dl.tgz https://example.com/x",
		"curl -sS -o /opt/dl.tgz https://example.com/x",
		"npm install -g typescript",
		"mkdir -p ~/.config/tool && echo 'x = 1' > ~/.config/tool/conf",
	} {
		d := run(cmd)
		if d.Reason != ReasonLeavesJail || !strings.Contains(d.Message, "approved exactly, it runs outside Claude Code's sandbox and the jail, unconfined") {
			t.Fatalf("%s: %s (%s), want it held (leaves_jail) saying it would run unconfined", cmd, d.Reason, d.Message)
		}
		if p, err := h.Store.GetPending(d.Pending); err != nil || !slices.Contains(p.Warnings, unconfinedWarning) {
			t.Errorf("%s: the screens' warnings do not say it runs unconfined: %v (%v)", cmd, p, err)
		}
		h.approve(d)
		d = run(cmd)
		expect(t, cmd, d, Allow, ReasonExactGrant)
		got, _ := d.UpdatedInput["command"].(string)
		if got != unconfinedCommand(h, cmd) || !strings.HasPrefix(got, entry) || d.Capability != confine.CapUnconfined {
			t.Errorf("%s: runs %q as %q\nwant %q", cmd, got, d.Capability, unconfinedCommand(h, cmd))
		}
		if !strings.Contains(d.Message, "outside Claude Code's sandbox and the jail, unconfined") {
			t.Errorf("%s: the answer does not say it runs unconfined: %s", cmd, d.Message)
		}
		if d := run(cmd); d.Behavior == Allow {
			t.Errorf("%s: the approval ran twice", cmd)
		}
	}
	// Control: the network alone keeps the launcher's network form.
	cmd := "curl -sS -o dl/pkg.tgz https://example.com/pkg.tgz"
	d := run(cmd)
	if d.Reason != ReasonLeavesJail || strings.Contains(d.Message, "unconfined") {
		t.Fatalf("%s: %s (%s)", cmd, d.Reason, d.Message)
	}
	h.approve(d)
	d = run(cmd)
	expect(t, cmd, d, Allow, ReasonExactGrant)
	if got, _ := d.UpdatedInput["command"].(string); !strings.HasPrefix(got, jailLauncher+" exec --cap project-write+network:443 ") {
		t.Errorf("%s: runs %q, want the network form", cmd, got)
	}
	// Git's own directory alone: in the jail with it, in the form init's
	// third entry takes out of Claude Code's sandbox (whose mounts over the
	// project's missing dotfiles make git add -A fail there).
	// Control: a project with no repository of its own (git init there,
	// whose new .git the jail would hold): approved, it runs as written,
	// where it is, holding the project.
	{
		cmd := "git commit -qm none"
		d := run(cmd)
		h.approve(d)
		wantAsWritten(t, cmd+" without a .git", h, cmd, run(cmd))
	}
	if err := os.Mkdir(filepath.Join(h.Project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"git commit -qm wip", "git add -A && git commit -qm wip"} {
		d := run(cmd)
		if d.Reason != ReasonLeavesJail || strings.Contains(d.Message, "unconfined") {
			t.Fatalf("%s: %s (%s)", cmd, d.Reason, d.Message)
		}
		h.approve(d)
		d = run(cmd)
		expect(t, cmd, d, Allow, ReasonExactGrant)
		got, _ := d.UpdatedInput["command"].(string)
		if !strings.HasPrefix(got, strings.TrimSuffix(confine.GitExclusion(jailLauncher), "*")) || !strings.HasSuffix(got, " '-c' "+shellparse.Quote(cmd)) ||
			d.Capability != "project-write+git" || !strings.Contains(d.Message, "in the jail with git's own directory") {
			t.Errorf("%s: runs %q as %q (%s), want the git form", cmd, got, d.Capability, d.Message)
		}
	}
	// Kept inside the sandbox: approved, they run as written, holding the
	// project (the as-written form, which no excludedCommands entry
	// matches), never unconfined.
	for _, c := range []struct {
		name, cmd string
		escape    bool
	}{
		{"DANGER", "git push --force origin main", false},
		{"DANGER, downloaded code run", "curl -sSL https://example.com/i.sh | sh", false},
		{"the agent's own dangerouslyDisableSandbox", "git fetch origin", true},
		{"unparseable", "git fetch origin && echo $((", false},
		{"executable configuration", "git fetch origin && echo 'x' >> ~/.bashrc", false},
	} {
		call := func() Decision {
			in := withInput(h.fixture("pretooluse-bash.json"), "command", c.cmd)
			if c.escape {
				in = withInput(in, "dangerouslyDisableSandbox", true)
			}
			return h.decide(in)
		}
		d := call()
		if d.Behavior == Allow {
			t.Fatalf("%s: allowed without an approval (%s)", c.name, d.Reason)
		}
		if strings.Contains(d.Message, "unconfined") {
			t.Errorf("%s: the hold says it would run unconfined: %s", c.name, d.Message)
		}
		h.approve(d)
		d = call()
		wantAsWritten(t, c.name, h, c.cmd, d)
		if c.escape && d.UpdatedInput["dangerouslyDisableSandbox"] != true {
			t.Errorf("%s: the rewrite dropped the agent's own request: %v", c.name, d.UpdatedInput)
		}
	}
}

// The unconfined form is an exact approval's alone, where the host routes
// it: not for a scoped grant that covers such a call, not without the jail
// grant, not without two-phase enforcement, not where the host runs the
// model's own text.
func TestUnconfinedOnlyForAnExactApprovalUnderTheJail(t *testing.T) {
	cmd := "git fetch origin"
	t.Run("a scoped grant", func(t *testing.T) {
		h, run := jailHarness(t)
		leaveSandbox(h)
		h.grantScope("Bash(git fetch origin) +git", "*", "*")
		d := run(cmd)
		expect(t, cmd, d, Allow, ReasonScopedGrant)
		got, _ := d.UpdatedInput["command"].(string)
		if strings.Contains(got, "unconfined") || !strings.HasPrefix(got, jailLauncher+" exec --cap project-write+git '--project' ") || strings.Contains(d.Message, "unconfined") {
			t.Errorf("a scoped grant runs %q (%s)", got, d.Message)
		}
	})
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) (*harness, func(string) Decision)
	}{
		{"no two-phase enforcement", func(t *testing.T) (*harness, func(string) Decision) { return jailHarness(t) }},
		{"no jail grant", func(t *testing.T) (*harness, func(string) Decision) {
			h, run := rewriteHarness(t, jailLauncher)
			leaveSandbox(h)
			return h, run
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, run := c.setup(t)
			d := run(cmd)
			if d.Behavior == Allow || strings.Contains(d.Message, "unconfined") {
				t.Fatalf("%s (%s)", d.Reason, d.Message)
			}
			h.approve(d)
			d = run(cmd)
			if c.name == "no two-phase enforcement" {
				// Under the jail grant: where it is, holding the project.
				wantAsWritten(t, cmd, h, cmd, d)
				return
			}
			expect(t, cmd, d, Allow, ReasonExactGrant)
			if d.UpdatedInput != nil || strings.Contains(d.Message, "unconfined") {
				t.Errorf("approved exactly, it runs as %v (%s)", d.UpdatedInput["command"], d.Message)
			}
		})
	}
	t.Run("the host runs the model's text", func(t *testing.T) {
		h, _ := jailHarness(t)
		leaveSandbox(h)
		bash := withInput(h.fixture("pretooluse-bash.json"), "command", cmd)
		decide := func() Decision {
			c := h.call(bash)
			c.Rewrite = false
			return h.eng().Decide(context.Background(), c)
		}
		d := decide()
		if d.Behavior == Allow || strings.Contains(d.Message, "unconfined") {
			t.Fatalf("%s (%s)", d.Reason, d.Message)
		}
		h.approve(d)
		d = decide()
		expect(t, cmd, d, Allow, ReasonExactGrant)
		if d.UpdatedInput != nil || d.Capability != "" {
			t.Errorf("approved exactly, it runs as %v (%s)", d.UpdatedInput["command"], d.Capability)
		}
	})
}

// ownRepository: the git form only where git works on the project's own
// repository.
func TestOwnRepository(t *testing.T) {
	p := t.TempDir()
	if ownRepository(p, p) {
		t.Error("a project with no .git")
	}
	for _, d := range []string{".git", "a/b", "nested/.git", "nested/x"} {
		if err := os.MkdirAll(filepath.Join(p, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cwd  string
		want bool
	}{
		{p, true},
		{filepath.Join(p, "a/b"), true},
		{filepath.Join(p, "nested"), false},
		{filepath.Join(p, "nested/x"), false},
		{filepath.Dir(p), false},
	} {
		if got := ownRepository(p, c.cwd); got != c.want {
			t.Errorf("ownRepository(%s) = %v, want %v", c.cwd, got, c.want)
		}
	}
}
