package hooks

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
)

// TestExactNetworkRunsInTheJailWithTheNetwork: under the jail grant, a
// call held because it needs the network (leaves_jail) and then approved
// exactly runs whole through the launcher with project-write and the
// network to the ports its URLs name, in the form init's
// sandbox.excludedCommands entry takes out of Claude Code's sandbox; an
// approved call that needs more than the network (git's directory, a
// write outside) runs as approved, unchanged (control), and so does every
// call without the jail grant (control).
func TestExactNetworkRunsInTheJailWithTheNetwork(t *testing.T) {
	h, run := jailHarness(t)
	exclusion := confine.NetworkExclusion(jailLauncher)
	fixed := strings.TrimSuffix(exclusion, "* *")
	for _, c := range []struct {
		cmd   string
		ports string
	}{
		{"curl -sS -o dl/pkg.tgz http://127.0.0.1:8123/pkg.tgz && echo downloaded", "network:8123"},
		{"curl -sSL https://example.com/x.sh -o x.sh", "network:443"},
		{"npm install left-pad", "network:443"},
		{"curl http://example.com/a https://example.org:8443/b", "network:80,8443"},
	} {
		d := run(c.cmd)
		if d.Reason != ReasonLeavesJail {
			t.Fatalf("%s: %s (%s), want it held (leaves_jail)", c.cmd, d.Reason, d.Message)
		}
		h.approve(d)
		d = run(c.cmd)
		expect(t, c.cmd, d, Allow, ReasonExactGrant)
		got, _ := d.UpdatedInput["command"].(string)
		cp := policy.CapProjectWrite + "+" + c.ports
		want := jailLauncher + " exec --cap " + cp + " '--project' '" + h.Project + "' '--cwd' '" + h.Project + "' '--' '" + policy.BashPath() + "' 'bash' '-c' '"
		if !strings.HasPrefix(got, want) || !strings.HasPrefix(got, fixed) || d.Capability != cp {
			t.Errorf("%s: runs %q as %q\nwant it to start %q", c.cmd, got, d.Capability, want)
		}
		if !strings.Contains(d.Message, "with the network") {
			t.Errorf("%s: the message does not say it runs with the network: %s", c.cmd, d.Message)
		}
		// Single use, as every exact approval.
		if d := run(c.cmd); d.Behavior == Allow {
			t.Errorf("%s: the approval ran twice", c.cmd)
		}
	}
	// Controls: approved calls that need more than the network run as
	// approved, never in the network form: as written, where they are,
	// holding the project (no route out of the sandbox here).
	for _, cmd := range []string{
		"git fetch origin && git add -A",
		"curl -sS https://example.com/x > /etc/x",
		"git push --force",
	} {
		d := run(cmd)
		if d.Behavior == Allow {
			t.Fatalf("%s: allowed without an approval (%s)", cmd, d.Reason)
		}
		h.approve(d)
		wantAsWritten(t, cmd, h, cmd, run(cmd))
	}
}

// Without the jail grant an exact approval of a download runs as
// approved (nothing asked for the jail).
func TestExactNetworkWithoutTheJail(t *testing.T) {
	h, run := rewriteHarness(t, jailLauncher, "curl")
	cmd := "curl -sSL https://example.com/x.sh -o x.sh"
	d := run(cmd)
	if d.Behavior == Allow {
		t.Fatalf("allowed without an approval: %s", d.Reason)
	}
	h.approve(d)
	d = run(cmd)
	expect(t, cmd, d, Allow, ReasonExactGrant)
	if d.UpdatedInput != nil {
		t.Errorf("runs as %v", d.UpdatedInput["command"])
	}
}

// A call a +network grant covers (review's n) runs in the same network
// form; a grant without the network keeps the quoted launcher (control).
func TestNetworkGrantRunsInTheNetworkForm(t *testing.T) {
	h, run := rewriteHarness(t, jailLauncher, "curl")
	h.grantScope("Bash(curl -sS https://example.com/x) +network:443", "*", "*")
	d := run("curl -sS https://example.com/x")
	expect(t, "curl under a +network grant", d, Allow, ReasonScopedGrant)
	got, _ := d.UpdatedInput["command"].(string)
	if !strings.HasPrefix(got, jailLauncher+" exec --cap project-write+network:443 '--project' ") {
		t.Errorf("runs %q", got)
	}
	d = run("head README.md")
	expect(t, "control: head under the preset", d, Allow, ReasonScopedGrant)
	if got, _ := d.UpdatedInput["command"].(string); !strings.HasPrefix(got, "'"+jailLauncher+"' 'exec' '--cap' 'read-only' ") {
		t.Errorf("control runs %q", got)
	}
}
