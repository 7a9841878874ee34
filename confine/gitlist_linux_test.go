//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRefsPastAnUnreadablePseudoRef: a pseudo-ref the call made a
// link (ln -s nowhere .git/ORIG_HEAD, which git reads as no ref) failed
// readRefs with ELOOP, and the check said it could not list the refs and
// held nothing: the fortieth attack run's new branch with the call's hook
// stayed for the user's git checkout. git is now asked, and the branch is
// held. Control: the same link beside a branch of a source change stays.
func TestCheckRefsPastAnUnreadablePseudoRef(t *testing.T) {
	for _, c := range []struct{ name, during string }{
		{"hook", `printf '#!/bin/sh\necho PWNED\n' > .githooks/pre-commit && git add -A && git commit -qm evil && git checkout -q master`},
		{"dir", `printf '#!/bin/sh\necho PWNED\n' > .githooks/pre-commit && git add -A && git commit -qm evil && git checkout -q master && rm -f .git/ORIG_HEAD && mkdir .git/ORIG_HEAD .git/FETCH_HEAD`},
		{"control", `echo f > f.txt && git add -A && git commit -qm f && git checkout -q master`},
	} {
		proj, home, run := gitShell(t)
		sh := func(script string) { run(script) }
		sh(`git init -q -b master && git config core.hooksPath .githooks && mkdir .githooks && printf '#!/bin/sh\nexit 0\n' > .githooks/pre-commit && git add -A && git commit -qm hook`)
		g, p, e := gitSnapshot(t, proj, home)
		sh(`git checkout -q -b feature && ` + c.during + ` && { [ -e .git/ORIG_HEAD ] || ln -s nowhere .git/ORIG_HEAD; }`)
		held := &holder{p: p, e: e}
		lines := g.check(held)
		held.close()
		out, _ := exec.Command("git", "-C", proj, "for-each-ref", "--format=%(refname)", "refs/heads/feature").Output()
		if c.name == "control" {
			if len(out) == 0 || strings.Contains(strings.Join(lines, "\n"), "refs/heads/feature") {
				t.Errorf("control: feature gone or lines %q", lines)
			}
			continue
		}
		if len(out) != 0 || !strings.Contains(strings.Join(lines, "\n"), "refs/heads/feature") {
			t.Errorf("%s: the call's branch stayed: %q", c.name, lines)
		}
	}
}

// TestCheckLinksHeld: each link a +git call makes in the git directory is
// held (git makes none, and follows them): the fortieth attack run made
// .git/packed-refs and an object directory links into the project, which
// a later call without +git wrote, and .git/logs a link to a directory of
// the call's whose HEAD reflog said "checkout: moving from EVIL" (the
// reflog walk did not follow it, git did, and the user's git checkout -
// checked out the call's hook). Control: a commit's own reflog stays.
func TestCheckLinksHeld(t *testing.T) {
	for _, c := range []struct{ name, during string }{
		{".git/packed-refs", `mkdir junk && : > junk/packed-refs && ln -s ../junk/packed-refs .git/packed-refs`},
		{".git/objects/ab", `mkdir junk && rm -rf .git/objects/ab && ln -s ../../junk .git/objects/ab`},
		{".git/logs", `B=$(printf '#!/bin/sh\necho PWNED\n' | git hash-object -w --stdin) && rm -f .git/ei && GIT_INDEX_FILE=.git/ei git read-tree HEAD && GIT_INDEX_FILE=.git/ei git update-index --cacheinfo 100755,$B,.githooks/pre-commit && C=$(git commit-tree $(GIT_INDEX_FILE=.git/ei git write-tree) -p HEAD -m e) && rm .git/ei && M=$(git rev-parse HEAD) && cp -a .git/logs junk && printf '%s %s a <a@b> 1700000000 +0000\tcheckout: moving from %s to master\n' $M $M $C >> junk/HEAD && mv .git/logs .git/logs.old && ln -s ../junk .git/logs`},
		{"control", `echo f > f.txt && git add -A && git commit -qm f`},
	} {
		proj, home, run := gitShell(t)
		sh := func(script string) { run(script) }
		sh(`git init -q -b master && git config core.hooksPath .githooks && mkdir .githooks && printf '#!/bin/sh\nexit 0\n' > .githooks/pre-commit && git add -A && git commit -qm hook`)
		g, p, e := gitSnapshot(t, proj, home)
		sh(c.during)
		held := &holder{p: p, e: e}
		lines := g.check(held)
		held.close()
		if c.name == "control" {
			_, lerr := os.Lstat(filepath.Join(proj, ".git/logs"))
			if lerr != nil || len(lines) != 0 {
				t.Errorf("control: %v %q", lerr, lines)
			}
			continue
		}
		if _, lerr := os.Lstat(filepath.Join(proj, c.name)); lerr == nil || !strings.Contains(strings.Join(lines, "\n"), "held back "+c.name) {
			t.Errorf("%s: %s stayed: %q", c.name, c.name, lines)
		}
	}
}
