package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/token"
)

// dangerRow is a call with a DANGER line a scoped grant's rule would
// cover, and its control: the same program under the same grant, with no
// DANGER line, which still runs.
type dangerRow struct{ attack, control, line string }

// handMadeDanger are rules review never offers but a human may type, and
// what each would cover.
var handMadeDanger = struct {
	rules []string
	rows  []dangerRow
}{
	rules: []string{"Bash(git push *)", "Bash(git reset *)", "Bash(git checkout *)", "Bash(git restore *)", "Bash(true)", "Bash(rm -r src)", "Bash(echo *)"},
	rows: []dangerRow{
		{"git push --force", "git push origin main", "git push rewrites or deletes history"},
		{"git push origin +main", "git push origin main:main", "git push rewrites or deletes history"},
		{"git push --delete origin old", "git push --tags", "git push rewrites or deletes history"},
		{"git reset --hard", "git reset HEAD~1", "git reset --hard discards changes"},
		{"git reset --hard origin/main", "git reset --soft HEAD~1", "git reset --hard discards changes"},
		{"git checkout -- .", "git checkout main", "discards changes in the work tree"},
		{"git restore .", "git restore --staged src/a.go", "discards changes in the work tree"},
		// A rule with no wildcard, written by hand: its one call is a
		// DANGER call, so it covers nothing.
		{"rm -r src", "echo rm -r src", "rm -r src deletes a directory of the project"},
		// The preset's cat * and a credentials file (not .env, which is
		// executable configuration too: held as such).
		{"cat .netrc", "cat README.md", "credentials file (.netrc)"},
		// Chains of parts each covered.
		{"true && git reset --hard", "true && git reset HEAD~1", "git reset --hard discards changes"},
		{"cd sub && git checkout -- .", "cd sub && git checkout main", "discards changes in the work tree"},
		{"git status && git push -f origin main", "git status && git push origin main", "git push rewrites or deletes history"},
	},
}

// TestScopedGrantNeverCoversDanger: a scoped grant whose rule covers a
// call's words does not cover it when the call carries a DANGER line: it
// is held for an exact approval, named as such (danger_not_covered),
// whether the jail grant exists or not, on a host that runs loopguard's
// rewrite and on one that runs the model's text; the same program with
// no DANGER line still runs under the same grant; the exact approval runs
// the DANGER call once.
func TestScopedGrantNeverCoversDanger(t *testing.T) {
	for _, jail := range []bool{false, true} {
		name := "without the jail grant"
		if jail {
			name = "with the jail grant"
		}
		t.Run(name, func(t *testing.T) {
			var h *harness
			var run func(string) Decision
			if jail {
				h, run = jailHarness(t)
			} else {
				h, run = rewriteHarness(t, jailLauncher, "true")
			}
			for _, r := range handMadeDanger.rules {
				h.grantScope(r, token.Any, token.Any)
			}
			if !jail {
				h.mkdirs("src", "sub")
			}
			for _, row := range handMadeDanger.rows {
				d := run(row.attack)
				if d.Behavior == Allow {
					t.Errorf("%s: allowed (%s): %s", row.attack, d.Reason, d.Message)
					continue
				}
				if d.Reason != ReasonDangerNotCovered || !strings.Contains(d.Message, row.line) ||
					!strings.Contains(d.Message, "a grant does not cover a DANGER call") || d.Pending == "" {
					t.Errorf("%s: %s (%s), want %s naming %q", row.attack, d.Reason, d.Message, ReasonDangerNotCovered, row.line)
				}
				if d := run(row.control); d.Behavior != Allow || d.Reason != ReasonScopedGrant {
					t.Errorf("%s (control): %s %s (%s)", row.control, d.Behavior, d.Reason, d.Message)
				}
			}
			// The human's exact approval runs the DANGER call, once.
			d := run("git reset --hard")
			h.approve(d)
			expect(t, "git reset --hard, approved exactly", run("git reset --hard"), Allow, ReasonExactGrant)
			d = run("git reset --hard")
			expect(t, "git reset --hard again", d, Deny, ReasonDangerNotCovered)
			if !strings.Contains(d.Message, "was used already") {
				t.Errorf("git reset --hard again: %s", d.Message)
			}
		})
	}
}

// TestScopedGrantNeverCoversDangerUnrewritten: on a host that runs the
// model's own text (no rewrite, no launcher) the grant is held to the same.
func TestScopedGrantNeverCoversDangerUnrewritten(t *testing.T) {
	h, _ := rewriteHarness(t, "/opt/lg/loopguard-hook", "true")
	for _, r := range handMadeDanger.rules {
		h.grantScope(r, token.Any, token.Any)
	}
	h.mkdirs("src", "sub")
	bash := h.fixture("pretooluse-bash.json")
	run := func(cmd string) Decision {
		c := h.call(withInput(bash, "command", cmd))
		c.Rewrite = false
		return h.eng().Decide(t.Context(), c)
	}
	for _, row := range handMadeDanger.rows {
		if strings.HasPrefix(row.attack, "cd ") {
			continue // a chain with a cd runs only rewritten
		}
		expect(t, row.attack, run(row.attack), Deny, ReasonDangerNotCovered)
		expect(t, row.control+" (control)", run(row.control), Allow, ReasonScopedGrant)
	}
}

// TestJailHoldsHiddenDanger: under the jail grant alone, a DANGER part
// hidden in a chain, a pipe into sh -c, a subshell or a loop is held for
// the human (leaves_jail, the DANGER line named); under the jail grant
// with narrower grants that cover each part, it is held all the same
// (danger_not_covered). Each with a control that runs.
func TestJailHoldsHiddenDanger(t *testing.T) {
	rows := []dangerRow{
		{"true && git reset --hard", "true && git status", "git reset --hard"},
		{"echo x | sh -c 'rm -rf src'", "echo x | sh -c 'ls src'", "rm -r src"},
		{"cd sub && git clean -fdx", "cd sub && git clean -n", "git clean deletes untracked files"},
		{"(git checkout -- .)", "(git status)", "discards changes"},
		{"for f in a b; do git checkout -- .; done", "for f in a b; do git status; done", "discards changes"},
		{"while true; do git reset --hard; break; done", "while true; do git status; break; done", "git reset --hard"},
		{"if true; then git clean -fd; fi", "if true; then git clean -n; fi", "git clean"},
		{"bash -c 'true; git reset --hard origin/main'", "bash -c 'true; git log -1'", "git reset --hard"},
	}
	_, run := jailHarness(t)
	for _, row := range rows {
		d := run(row.attack)
		if d.Behavior == Allow {
			t.Errorf("%s: allowed (%s), runs %v", row.attack, d.Reason, d.UpdatedInput["command"])
			continue
		}
		if d.Reason != ReasonLeavesJail || !strings.Contains(d.Message, "DANGER: ") || !strings.Contains(d.Message, row.line) {
			t.Errorf("%s: %s (%s), want %s naming %q", row.attack, d.Reason, d.Message, ReasonLeavesJail, row.line)
		}
		if d := run(row.control); d.Behavior != Allow {
			t.Errorf("%s (control): %s (%s)", row.control, d.Reason, d.Message)
		}
	}

	// The parts granted one by one, beside the jail.
	h, run := jailHarness(t)
	for _, r := range []string{"Bash(true)", "Bash(git reset *)", "Bash(git checkout *)"} {
		h.grantScope(r, token.Any, token.Any)
	}
	for _, row := range []dangerRow{
		{"true && git reset --hard", "true && git reset HEAD~1", "git reset --hard"},
		{"cd sub && git checkout -- .", "cd sub && git checkout main", "discards changes in the work tree"},
	} {
		expect(t, row.attack, run(row.attack), Deny, ReasonDangerNotCovered)
		d := run(row.control)
		expect(t, row.control+" (control)", d, Allow, ReasonScopedGrant)
	}
}

// mkdirs makes directories in the harness's project.
func (h *harness) mkdirs(dirs ...string) {
	h.t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(h.Project, d), 0o755); err != nil {
			h.t.Fatal(err)
		}
	}
}

// TestVaultScopedGrantNeverCoversDanger: a team's grant from Vault is held
// to the same: it covers the plain push, never the forced one.
func TestVaultScopedGrantNeverCoversDanger(t *testing.T) {
	v := newVaultHarness(t)
	call := v.fixture("pretooluse-bash.json")
	v.vaultScope(t, "Bash(git push *)", call["session_id"].(string))
	d := v.decideVault(withInput(call, "command", "git push --force origin main"))
	expect(t, "git push --force under a Vault grant", d, Deny, ReasonDangerNotCovered)
	if !strings.Contains(d.Message, "git push rewrites or deletes history") {
		t.Errorf("message: %s", d.Message)
	}
	expect(t, "git push origin main (control)", v.decideVault(withInput(call, "command", "git push origin main")), Allow, ReasonScopedGrant)
}
