package confine

import (
	"slices"
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

// The unconfined form (an exact approval that needs more than the
// network) starts with what UnconfinedExclusion names, written bare, and
// parses back to the same launch, unconfined; the two entries never match
// each other's form, nor the jail's; a head that would need quoting, or a
// redirection, gets no form.
func TestUnconfinedCommand(t *testing.T) {
	const l = "/home/u/go/bin/loopguard-exec"
	spec := Spec{Cap: policy.JailCapability, Project: "/home/u/p", Cwd: "/home/u/p/sub", Exe: "/usr/bin/bash", Argv: []string{"bash", "-c", "git fetch origin && echo 'ok'"}}
	got, ok := UnconfinedCommand(l, spec)
	want := l + " exec --cap unconfined '--project' '/home/u/p' '--cwd' '/home/u/p/sub' '--' '/usr/bin/bash' 'bash' '-c' 'git fetch origin && echo '\\''ok'\\'''"
	if !ok || got != want {
		t.Fatalf("got %v %q\nwant %q", ok, got, want)
	}
	if UnconfinedExclusion(l) != l+" exec --cap unconfined *" || !strings.HasPrefix(got, strings.TrimSuffix(UnconfinedExclusion(l), "*")) {
		t.Errorf("the form %q does not start with the entry's fixed part %q", got, UnconfinedExclusion(l))
	}
	if ex := Exclusions(l); len(ex) != 3 || ex[0] != NetworkExclusion(l) || ex[1] != UnconfinedExclusion(l) || ex[2] != GitExclusion(l) {
		t.Errorf("Exclusions = %q", ex)
	}
	// The launcher reads the form back as the same launch, unconfined.
	parsed, err := Parse(spec.withUnconfined().Args()[1:])
	if err != nil || !parsed.Unconfined || parsed.Exe != spec.Exe || !slices.Equal(parsed.Argv, spec.Argv) || parsed.Cwd != spec.Cwd {
		t.Errorf("parsed %+v, %v", parsed, err)
	}
	// The entries' fixed parts tell the forms apart.
	net, _ := policy.NetworkPorts(443)
	net.Write = true
	nspec := spec
	nspec.Cap = net
	netForm, ok := NetworkCommand(l, nspec)
	if !ok {
		t.Fatal("control: no network form")
	}
	jail := l + " exec --cap jail '--project' '/home/u/p' '--cwd' '/home/u/p' '--' '/usr/bin/bash' 'bash' '-c' 'x'"
	// An entry's fixed part: up to its first wildcard; a final " *"
	// keeps its space (the capability word ends there).
	fixed := func(entry string) string {
		f, _, _ := strings.Cut(strings.TrimSuffix(entry, "*"), "*")
		return f
	}
	gspec := spec
	gspec.Cap = policy.Capability{Write: true, Git: true}
	gitForm, ok := GitCommand(l, gspec)
	if !ok {
		t.Fatal("control: no git form")
	}
	gnspec := nspec
	gnspec.Cap.Git = true
	gitNet := l + " exec --cap " + gnspec.Cap.String() + " '--project' '/home/u/p' '--' 'x'"
	for _, c := range []struct{ entry, form string }{
		{UnconfinedExclusion(l), netForm}, {UnconfinedExclusion(l), jail}, {NetworkExclusion(l), got}, {NetworkExclusion(l), jail},
		{GitExclusion(l), got}, {GitExclusion(l), netForm}, {GitExclusion(l), jail}, {GitExclusion(l), gitNet},
		{NetworkExclusion(l), gitForm}, {UnconfinedExclusion(l), gitForm}, {NetworkExclusion(l), gitNet},
	} {
		if strings.HasPrefix(c.form, fixed(c.entry)) {
			t.Errorf("entry %q matches the other form %q", c.entry, c.form)
		}
	}
	for _, c := range []struct {
		name     string
		launcher string
		redirect bool
	}{
		{"a launcher path with a space", "/home/u/my bin/loopguard-exec", false},
		{"a launcher path with a quote", "/home/u/b'in/loopguard-exec", false},
		{"a redirection", l, true},
	} {
		s := spec
		if c.redirect {
			s.Redirects = []Redirect{{Fd: 1, Op: ">", Path: "/home/u/.bashrc"}}
		}
		if got, ok := UnconfinedCommand(c.launcher, s); ok {
			t.Errorf("%s: got an unconfined form %q", c.name, got)
		}
	}
	// A capability word is never "unconfined": a grant cannot name it.
	if _, err := policy.ParseCapability(CapUnconfined); err == nil {
		t.Error("policy parses the unconfined form's word as a capability")
	}
}

func (s Spec) withUnconfined() Spec { s.Unconfined = true; return s }

// The git form (git's own directory alone, out of Claude Code's sandbox)
// starts with what GitExclusion names, written bare, and parses back to
// the same launch under project-write+git; any other capability, or a
// launcher path that would need quoting, gets no git form.
func TestGitCommand(t *testing.T) {
	const l = "/home/u/go/bin/loopguard-exec"
	spec := Spec{Cap: policy.Capability{Write: true, Git: true}, Project: "/home/u/p", Cwd: "/home/u/p", Exe: "/usr/bin/bash", Argv: []string{"bash", "-c", "git add -A && git commit -m 'x y'"}}
	got, ok := GitCommand(l, spec)
	want := l + ` exec --cap project-write+git '--project' '/home/u/p' '--cwd' '/home/u/p' '--' '/usr/bin/bash' 'bash' '-c' 'git add -A && git commit -m '\''x y'\'''`
	if !ok || got != want {
		t.Fatalf("got %v %q\nwant %q", ok, got, want)
	}
	if GitExclusion(l) != l+" exec --cap project-write+git *" || !strings.HasPrefix(got, strings.TrimSuffix(GitExclusion(l), "*")) {
		t.Errorf("the form %q does not start with the entry's fixed part %q", got, GitExclusion(l))
	}
	parsed, err := Parse(spec.Args()[1:])
	if err != nil || parsed.Unconfined || parsed.Cap != spec.Cap || !slices.Equal(parsed.Argv, spec.Argv) {
		t.Errorf("parsed %+v, %v", parsed, err)
	}
	net, _ := policy.NetworkPorts(443)
	net.Write, net.Git = true, true
	for _, c := range []struct {
		name     string
		launcher string
		cp       policy.Capability
	}{
		{"the jail", l, policy.JailCapability},
		{"project-write alone", l, policy.Capability{Write: true}},
		{"read-only", l, policy.Capability{}},
		{"with the network too", l, net},
		{"a launcher path with a space", "/home/u/my bin/loopguard-exec", policy.Capability{Write: true, Git: true}},
	} {
		s := spec
		s.Cap = c.cp
		if got, ok := GitCommand(c.launcher, s); ok {
			t.Errorf("%s: got a git form %q", c.name, got)
		}
	}
}

// TestAsWrittenCommand: the as-written form (an exact approval under the
// jail grant that takes no route out) is the unconfined launch under its
// own --cap word, which no excludedCommands entry init writes matches, so
// that inside Claude Code's sandbox it stays there; it parses back to the
// same launch. Controls: the unconfined form's word and text are as
// before; policy parses neither word as a capability.
func TestAsWrittenCommand(t *testing.T) {
	const l = "/home/u/go/bin/loopguard-exec"
	spec := Spec{Project: "/home/u/p", Cwd: "/home/u/p/sub", Exe: "/usr/bin/bash", Argv: []string{"bash", "-c", "make all && ./deploy.sh"}}
	got, ok := AsWrittenCommand(l, spec)
	want := l + " exec --cap as-written '--project' '/home/u/p' '--cwd' '/home/u/p/sub' '--' '/usr/bin/bash' 'bash' '-c' 'make all && ./deploy.sh'"
	if !ok || got != want {
		t.Fatalf("got %v %q\nwant %q", ok, got, want)
	}
	for _, entry := range Exclusions(l) {
		if f, _, _ := strings.Cut(strings.TrimSuffix(entry, "*"), "*"); strings.HasPrefix(got, f) {
			t.Errorf("the excludedCommands entry %q matches the as-written form %q", entry, got)
		}
	}
	aw := spec
	aw.Unconfined, aw.AsWritten = true, true
	parsed, err := Parse(aw.Args()[1:])
	if err != nil || !parsed.Unconfined || !parsed.AsWritten || parsed.Exe != spec.Exe || !slices.Equal(parsed.Argv, spec.Argv) || parsed.Cwd != spec.Cwd {
		t.Errorf("parsed %+v, %v", parsed, err)
	}
	if un, _ := UnconfinedCommand(l, spec); !strings.HasPrefix(un, l+" exec --cap unconfined ") {
		t.Errorf("control: the unconfined form %q", un)
	}
	if p, err := Parse(spec.withUnconfined().Args()[1:]); err != nil || !p.Unconfined || p.AsWritten {
		t.Errorf("control: the unconfined word parsed %+v, %v", p, err)
	}
	if _, err := policy.ParseCapability(CapAsWritten); err == nil {
		t.Error("policy parses the as-written form's word as a capability")
	}
	s := spec
	s.Redirects = []Redirect{{Fd: 1, Op: ">", Path: "/home/u/.bashrc"}}
	if got, ok := AsWrittenCommand(l, s); ok {
		t.Errorf("a redirection: got an as-written form %q", got)
	}
}
