package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChainOfGrantedParts: a chain runs when a grant covers each part,
// rewritten into the parts' canonical, confined forms joined by the same
// operators; every attack of issue 25 on the chain path is held, each
// beside its control.
func TestChainOfGrantedParts(t *testing.T) {
	launcher := "/opt/lg/loopguard-hook"
	h, run := rewriteHarness(t, launcher, "wc", "rm", "python3", "xargs")
	sub := filepath.Join(h.Project, "sub")
	_ = os.MkdirAll(sub, 0o755)
	_ = os.MkdirAll(filepath.Join(h.Project, ".git"), 0o755)
	_ = os.WriteFile(filepath.Join(sub, "x"), []byte("x\n"), 0o644)
	q := func(s string) string { return "'" + s + "'" }
	launch := func(cap, cwd string, argv ...string) string {
		s := q(launcher) + " 'exec' '--cap' " + q(cap) + " '--project' " + q(h.Project) + " '--cwd' " + q(cwd) + " '--' " + q(filepath.Join(h.Bin, argv[0]))
		for _, a := range argv {
			s += " " + q(a)
		}
		return s
	}
	for _, c := range []struct{ cmd, want string }{
		{"ls | head -n 3", launch("read-only", h.Project, "ls") + " | " + launch("read-only", h.Project, "head", "-n", "3")},
		{"git status && git diff", launch("read-only", h.Project, "git", "status") + " && " + launch("read-only", h.Project, "git", "diff")},
		{"cd sub && cat x", "cd " + q(sub) + " && " + launch("read-only", sub, "cat", "x")},
		{"ls 2>&1 | wc -l", ""},
		{"ls >/dev/null; echo done", ""},
	} {
		d := run(c.cmd)
		expect(t, c.cmd, d, Allow, ReasonScopedGrant)
		got, _ := d.UpdatedInput["command"].(string)
		if c.want != "" && got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.cmd, got, c.want)
		}
		if d.Capability != "read-only" {
			t.Errorf("%s: capability %q", c.cmd, d.Capability)
		}
	}
	// Attacks, each held.
	home := h.eng().Env.Home
	_ = os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	_ = os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("KEY"), 0o600)
	_ = os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(h.Project, "notes.txt"))
	for _, c := range []struct{ cmd, reason string }{
		{"ls && rm -rf sub", ReasonChained},          // one part no grant covers
		{"cd .. && ls", ReasonChained},               // cd out of the project
		{"cd .git && ls", ReasonExecConfig},          // cd into .git
		{"cat README.md | sh", ReasonChained},        // a pipe into a shell
		{"cat README.md | python3", ReasonChained},   // ... or an interpreter
		{"ls | xargs rm", ReasonChained},             // ... or a runner
		{"ls > listing.txt && cat x", ReasonChained}, // a redirect no rule names
		{"ls && cat $'\\x{7e}'", ReasonChained},      // the decoder gap inside a chain
		{"ls && cat *", ReasonProtected},             // a glob through a link into ~/.ssh, a secret
		{"ls && git log --output=x", ReasonChained},  // an option that writes
		{"ls & cat x", ReasonChained},                // a background job
		{"(ls) && cat x", ReasonChained},             // a subshell
		{"ls && cat $(echo x)", ReasonChained},       // a substitution
		{"cd sub; rm x", ReasonChained},              // cd not followed by &&
		{"printf -v PATH /tmp && git status", ReasonChained},
	} {
		d := run(c.cmd)
		if d.Behavior == Allow || d.Reason != c.reason {
			t.Errorf("%s: %s/%s (%s), want held as %s", c.cmd, d.Behavior, d.Reason, d.Message, c.reason)
		}
	}
	if d := run("ls && rm -rf sub"); !strings.Contains(d.Message, "`rm -rf sub`") {
		t.Errorf("the uncovered part is not named: %s", d.Message)
	}
}

// TestChainNoRewriteNeedsPlainText: for a host that runs the model's text,
// a chain of covered plain parts runs as written; a part that is not plain
// holds the chain.
func TestChainNoRewriteNeedsPlainText(t *testing.T) {
	decide := plainHost(t)
	d := decide("ls | head -n 3")
	expect(t, "plain chain", d, Allow, ReasonScopedGrant)
	if d.UpdatedInput != nil {
		t.Errorf("rewritten for a host that cannot: %v", d.UpdatedInput)
	}
	expect(t, "a part not plain", decide("ls | head $'-n' 3"), Deny, ReasonNotCanonical)
}
