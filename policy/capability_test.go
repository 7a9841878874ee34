package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestCapabilityRoundTrip(t *testing.T) {
	for _, c := range []Capability{{}, {Network: true}, {Write: true}, {Write: true, Network: true},
		{Write: true, Git: true}, {Write: true, Git: true, Network: true},
		{Write: true, Network: true, Ports: "22,443"}, {Network: true, Ports: "80"}, {Write: true, Network: true, AnyPort: true}} {
		got, err := ParseCapability(c.String())
		if err != nil || got != c {
			t.Errorf("%+v: %q parsed as %+v, %v", c, c.String(), got, err)
		}
	}
	for _, bad := range []string{"", "root", "read-only+git", "project-write+network+git", "project-write+network+network", "read-only+", "project-write+write",
		"project-write+network:", "project-write+network:0", "project-write+network:443,80", "project-write+network:80,80",
		"project-write+network:65536", "project-write+network:+443", "project-write+network:0443", "project-write+network:80,",
		"project-write+networks", "project-write+network:443+network"} {
		if c, err := ParseCapability(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, c)
		}
	}
}

func TestDefaultCapability(t *testing.T) {
	for _, c := range []struct {
		words []string
		want  string
		exact bool
	}{
		{[]string{"cat"}, "read-only", false},
		{[]string{"/usr/bin/ls"}, "read-only", false},
		{[]string{"git", "log"}, "read-only", false},
		{[]string{"git", "status"}, "read-only", false},
		{[]string{"go", "vet"}, "read-only", false},
		{[]string{"git", "commit"}, "project-write+git", false},
		{[]string{"git", "add"}, "project-write+git", false},
		{[]string{"git"}, "project-write", false},
		{[]string{"git", "config"}, "project-write", false},
		{[]string{"go", "test"}, "project-write", false},
		{[]string{"go"}, "project-write", false},
		{[]string{"make", "test"}, "project-write", false},
		{nil, "project-write", false},
		// The forms of git's writing subcommands that only list: git tag
		// alone, not git tag *; git remote -v, not git remote -v update.
		{[]string{"git", "tag"}, "read-only", true},
		{[]string{"git", "tag"}, "project-write+git", false},
		{[]string{"git", "tag", "-l"}, "read-only", false},
		{[]string{"git", "tag", "v1"}, "project-write+git", true},
		{[]string{"git", "stash", "list"}, "read-only", false},
		{[]string{"git", "stash", "show"}, "read-only", false},
		{[]string{"git", "stash", "drop"}, "project-write+git", false},
		{[]string{"git", "stash"}, "project-write+git", true},
		{[]string{"git", "remote", "-v"}, "read-only", true},
		{[]string{"git", "remote", "-v", "update"}, "project-write", true},
		{[]string{"git", "remote", "-v"}, "project-write", false},
		{[]string{"git", "remote"}, "read-only", true},
		{[]string{"git", "remote"}, "project-write", false},
		{[]string{"git", "worktree", "list"}, "read-only", false},
		{[]string{"git", "worktree", "add"}, "project-write+git", false},
		{[]string{"git", "--version"}, "read-only", true},
		{[]string{"/usr/bin/git", "stash", "list"}, "read-only", false},
	} {
		if got := DefaultCapability(c.words, c.exact).String(); got != c.want {
			t.Errorf("%q (exact %t): %s, want %s", c.words, c.exact, got, c.want)
		}
	}
}

func TestCapabilityWiden(t *testing.T) {
	ro := Capability{}
	if w := ro.Widen(Capability{Network: true}); w.String() != "read-only+network:443" || !w.Covers(ro) || ro.Covers(w) {
		t.Errorf("widen read-only by network: %s", w)
	}
	if w := ro.Widen(Capability{Git: true}); w.String() != "project-write+git" {
		t.Errorf("widen by git: %s", w)
	}
}

// TestNameCouldBeProtected: every name Classify protects at any depth,
// the agents' project files included, passes NameCouldBeProtected, so that
// a walk may judge only those.
func TestNameCouldBeProtected(t *testing.T) {
	names := []string{claudeDirName, gitDirName}
	for _, e := range anyDepth() {
		names = append(names, e.parts[0])
	}
	for _, f := range agentFiles {
		if f.base == atProject {
			names = append(names, f.parts[0])
		}
	}
	for _, n := range names {
		if !NameCouldBeProtected(n) {
			t.Errorf("%q is protected at any depth but NameCouldBeProtected says it cannot be", n)
		}
	}
	// Control: a name Classify does not protect anywhere.
	if !NameCouldBeProtected("BUNFIG.toml") {
		t.Error("bunfig.toml, a name with no dot, is not judged")
	}
	// mise's files per environment, by their pattern (the ninety-third
	// attack run's mise.dev.toml), which git's pathspecs take too.
	for _, n := range []string{"mise.dev.toml", "MISE.ci.local.toml"} {
		if !NameCouldBeProtected(n) {
			t.Errorf("NameCouldBeProtected(%s) = false", n)
		}
	}
	if !slices.Contains(CandidateNames(), miseConfigPattern) {
		t.Errorf("CandidateNames has no %s", miseConfigPattern)
	}
	if (Places{}).Classify("/p/src/main.go").Protected() || NameCouldBeProtected("main.go") || NameCouldBeProtected("promise.toml") {
		t.Error("main.go is protected")
	}
	if len(names) < 20 {
		t.Fatalf("only %d names", len(names))
	}
}

// TestNetworkPorts: +network names the TCP ports it connects to, 443 by
// default; a bare +network is a grant minted before ports were named and
// keeps its meaning then (any port), never read as 443 nor widened
// further; the ports of two capabilities add up, and one with fewer
// ports never covers one with more.
func TestNetworkPorts(t *testing.T) {
	for _, c := range []struct {
		in    string
		ports []uint16
		any   bool
		out   string
	}{
		{"project-write+network:443", []uint16{443}, false, "project-write+network:443"},
		{"project-write+network:22,443", []uint16{22, 443}, false, "project-write+network:22,443"},
		{"read-only+network:80", []uint16{80}, false, "read-only+network:80"},
		{"project-write+network", nil, true, "project-write+network"},
	} {
		got, err := ParseCapability(c.in)
		if err != nil || got.AnyPort != c.any || !slices.Equal(got.TCPPorts(), c.ports) || got.String() != c.out {
			t.Errorf("%q: %+v (ports %v), %v", c.in, got, got.TCPPorts(), err)
		}
	}
	def, _ := ParseCapability("project-write+network:443")
	if def != (Capability{Write: true, Network: true}) {
		t.Errorf("+network:443 is %+v, want the default (== must hold)", def)
	}
	n80, _ := NetworkPorts(80)
	n443, _ := NetworkPorts(443, 443)
	both, _ := NetworkPorts(443, 80)
	anyPort := Capability{Network: true, AnyPort: true}
	if n443 != (Capability{Network: true}) || both.Ports != "80,443" {
		t.Errorf("NetworkPorts: %+v, %+v", n443, both)
	}
	if w := n80.Widen(n443); w != both || !w.Covers(n80) || !w.Covers(n443) || n443.Covers(w) || n80.Covers(n443) {
		t.Errorf("80 widened by 443: %+v", w)
	}
	if n443.Covers(anyPort) || !anyPort.Covers(both) || n443.Widen(anyPort) != anyPort {
		t.Error("any port (a legacy grant) is covered by 443, or does not cover it")
	}
	if _, err := NetworkPorts(make([]int, 0)...); err != nil {
		t.Error(err)
	}
	if _, err := NetworkPorts(0); err == nil {
		t.Error("port 0 accepted")
	}
	if (Capability{}).TCPPorts() != nil || anyPort.TCPPorts() != nil {
		t.Error("ports without the network, or a list for any port")
	}
	for _, c := range []Capability{n443, both, anyPort} {
		if r := c.NetworkReach(); !strings.Contains(r, "services on this machine and the local network") {
			t.Errorf("%s: %q does not say it reaches this machine and the local network", c, r)
		}
	}
}
