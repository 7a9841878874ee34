package policy

import "testing"

func TestCapabilityRoundTrip(t *testing.T) {
	for _, c := range []Capability{{}, {Network: true}, {Write: true}, {Write: true, Network: true},
		{Write: true, Git: true}, {Write: true, Git: true, Network: true}} {
		got, err := ParseCapability(c.String())
		if err != nil || got != c {
			t.Errorf("%+v: %q parsed as %+v, %v", c, c.String(), got, err)
		}
	}
	for _, bad := range []string{"", "root", "read-only+git", "project-write+network+git", "project-write+network+network", "read-only+", "project-write+write"} {
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
	if w := ro.Widen(Capability{Network: true}); w.String() != "read-only+network" || !w.Covers(ro) || ro.Covers(w) {
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
	for _, e := range anyDepth {
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
	if (Places{}).Classify("/p/src/main.go").Protected() || NameCouldBeProtected("main.go") {
		t.Error("main.go is protected")
	}
	if len(names) < 20 {
		t.Fatalf("only %d names", len(names))
	}
}
