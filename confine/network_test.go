package confine

import (
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// The network form starts with what NetworkExclusion names, written bare;
// every other form, or a launcher path that would need quoting, gets no
// network form (the call then stays in Claude Code's sandbox). Claude
// Code's own matching of the entry is pinned with the real client in
// e2e/claudetest (TestExcludedCommandsMatching).
func TestNetworkCommand(t *testing.T) {
	const l = "/home/u/go/bin/loopguard-exec"
	spec := func(c policy.Capability) Spec {
		return Spec{Cap: c, Project: "/home/u/p", Cwd: "/home/u/p/sub", Exe: "/usr/bin/bash", Argv: []string{"bash", "-c", "curl -o 'x y' https://example.com/ && echo ok"}}
	}
	net8080, _ := policy.NetworkPorts(8080, 443)
	net8080.Write = true
	got, ok := NetworkCommand(l, spec(net8080))
	want := l + " exec --cap project-write+network:443,8080 '--project' '/home/u/p' '--cwd' '/home/u/p/sub' '--' '/usr/bin/bash' 'bash' '-c' 'curl -o '\\''x y'\\'' https://example.com/ && echo ok'"
	if !ok || got != want {
		t.Fatalf("got %v %q\nwant %q", ok, got, want)
	}
	prefix := strings.TrimSuffix(NetworkExclusion(l), "* *")
	if !strings.HasPrefix(got, prefix) || NetworkExclusion(l) != l+" exec --cap project-write+network:* *" {
		t.Errorf("the form %q does not start with the entry's fixed part %q", got, prefix)
	}
	for _, c := range []struct {
		name     string
		launcher string
		cp       policy.Capability
	}{
		{"the jail", l, policy.JailCapability},
		{"project-write alone", l, policy.Capability{Write: true}},
		{"read-only with the network", l, policy.Capability{Network: true}},
		{"with git", l, policy.Capability{Write: true, Git: true, Network: true}},
		{"any port (a grant from before ports)", l, policy.Capability{Write: true, Network: true, AnyPort: true}},
		{"a launcher path with a space", "/home/u/my bin/loopguard-exec", policy.Capability{Write: true, Network: true}},
		{"a launcher path with a quote", "/home/u/b'in/loopguard-exec", policy.Capability{Write: true, Network: true}},
	} {
		if got, ok := NetworkCommand(c.launcher, spec(c.cp)); ok {
			t.Errorf("%s: got a network form %q", c.name, got)
		}
	}
	// Control: the default port.
	if got, ok := NetworkCommand(l, spec(policy.Capability{Write: true, Network: true})); !ok || !strings.HasPrefix(got, l+" exec --cap project-write+network:443 ") {
		t.Errorf("control, +network:443: %v %q", ok, got)
	}
}
