package scope

import (
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// TestRuleCapability: a rule's capability is its command's default,
// widened only by what its text (which the grant MACs) says.
func TestRuleCapability(t *testing.T) {
	for _, c := range []struct{ rule, want, canonical string }{
		{"Bash(git log *)@/usr/bin/git", "read-only", ""},
		{"Bash(git log *)@/usr/bin/git +network", "read-only+network", ""},
		{"Bash(go test *)@/usr/local/go/bin/go", "project-write", ""},
		{"Bash(go test *)@/usr/local/go/bin/go +network", "project-write+network", ""},
		{"Bash(git commit *)@/usr/bin/git", "project-write+git", ""},
		{"Bash(cat *)@/usr/bin/cat +write", "project-write", ""},
		{"Bash(cat *)@/usr/bin/cat +write +git +network", "project-write+git+network", ""},
		{"Bash(git status)@\"/opt/my tools/git\" +network", "read-only+network", ""},
		{"Bash(npm run test:*)@/usr/bin/npm", "project-write", "Bash(npm run test *)@/usr/bin/npm"},
		{"Bash(echo +network)@/usr/bin/echo", "read-only", ""},
		// Ports: 443 by default, spelled; a bare +network is a grant
		// minted before ports were named, any port, as it was then.
		{"Bash(npm ci --ignore-scripts)@/usr/bin/npm +network:443", "project-write+network:443", ""},
		{"Bash(git fetch *)@/usr/bin/git +git +network:22,443", "project-write+git+network:22,443", ""},
		{"Bash(echo +network:443)@/usr/bin/echo", "read-only", ""},
	} {
		r, err := Parse(c.rule)
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		if got := r.Capability().String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.rule, got, c.want)
		}
		want := c.canonical
		if want == "" {
			want = c.rule
		}
		if r.String() != want {
			t.Errorf("%s: canonical %q", c.rule, r.String())
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Errorf("%s: round trip %v %v", c.rule, back, err)
		}
	}
	for _, bad := range []string{
		"Bash(git log *)@/usr/bin/git +root",
		"Bash(git log *)@/usr/bin/git +network +write", // out of order
		"Bash(git log *)@/usr/bin/git +network +network",
		"Edit(src/**) +write",
		"Bash(git log *)@/usr/bin/git +network:",
		"Bash(git log *)@/usr/bin/git +network:443,80", // not ascending
		"Bash(git log *)@/usr/bin/git +network:0",
		"Bash(git log *)@/usr/bin/git +network:443 +network",
		"Bash(git log *)@/usr/bin/git +network:http",
		"Bash(git log *)@/usr/bin/git +networks",
	} {
		if r, err := Parse(bad); err == nil {
			t.Errorf("%q parsed as %q", bad, r.String())
		}
	}
}

// TestPresetIsReadOnly: every rule of the read-only preset runs read-only.
func TestPresetIsReadOnly(t *testing.T) {
	rules, err := Preset(PresetReadOnly, "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if c := r.Capability(); c != (policy.Capability{}) {
			t.Errorf("%s: %s", r, c)
		}
	}
	if len(rules) < 20 {
		t.Fatalf("only %d preset rules", len(rules))
	}
}

// TestWidened: Widened adds rights to a Bash rule and leaves others alone.
func TestWidened(t *testing.T) {
	r, _ := Parse("Bash(go build *)@/usr/local/go/bin/go")
	if got := r.Widened(policy.Capability{Network: true}).String(); got != "Bash(go build *)@/usr/local/go/bin/go +network:443" {
		t.Errorf("widened: %s", got)
	}
	n80, _ := policy.NetworkPorts(80)
	if got := r.Widened(policy.Capability{Network: true}).Widened(n80).String(); got != "Bash(go build *)@/usr/local/go/bin/go +network:80,443" {
		t.Errorf("widened twice: %s", got)
	}
	if got := r.Widened(policy.Capability{Git: true}).String(); got != "Bash(go build *)@/usr/local/go/bin/go +git" {
		t.Errorf("widened by git: %s", got)
	}
	e, _ := Parse("Edit(src/**)")
	if e.Widened(policy.Capability{Network: true}) != e {
		t.Error("an Edit rule was widened")
	}
}
