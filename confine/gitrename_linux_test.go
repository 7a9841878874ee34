//go:build linux

package confine

import (
	"slices"
	"strings"
	"testing"
)

// TestRenamedPaths: a commit whose merge writes executable configuration
// only once a later call has changed the branch it is merged onto (the
// fortieth attack run), or only onto one of the user's other branches, is
// found as the call makes it. Real git is the oracle: each case is first
// shown to write the hook through the user's own cherry-pick.
func TestRenamedPaths(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			proj, home, sh := gitShell(t)
			sh(`git init -q -b master --object-format=` + format + ` && mkdir .husky && printf '#!/bin/sh\n# lint what is staged\nnpx --no-install lint-staged\nnpm test --silent\nexit 0\n' > .husky/pre-commit &&
echo a > a.txt && echo s > src.txt && git add -A && git commit -qm hook &&
git checkout -q -b feature && printf '#!/bin/sh\n# before a push\nnpm run typecheck\nnpm run build --if-present\n' > .husky/pre-push && git add -A && git commit -qm push &&
git checkout -q master`)
			// The run's branch: the hook removed and its content in a.txt,
			// then a.txt changed. Both are found: the second's cherry-pick
			// writes the hook; the first's revert would take a.txt's
			// change to the hook too (what its parent had there, here the
			// user's, in a chain of the call's another of its commits).
			side := strings.Fields(sh(`git checkout -q -b side && git rm -q .husky/pre-commit && git show master:.husky/pre-commit > a.txt && git add a.txt && git commit -qm move && S1=$(git rev-parse HEAD) &&
echo 'echo PWNED' >> a.txt && git commit -qam tidy && echo $S1 $(git rev-parse HEAD) && git checkout -q master`))
			// A commit on master holding the push hook's content, then one
			// changing it: onto feature, the change is the hook's.
			onMaster := strings.Fields(sh(`git show feature:.husky/pre-push > q.txt && git add q.txt && git commit -qm q && Q1=$(git rev-parse HEAD) &&
echo 'echo PWNED' >> q.txt && git commit -qam q2 && echo $Q1 $(git rev-parse HEAD)`))
			// The controls: the same shapes with content like no hook.
			plain := strings.Fields(sh(`git checkout -q -b plain master~2 && echo b >> a.txt && git commit -qam b && echo 'echo PWNED' >> a.txt && git commit -qam c && echo $(git rev-parse HEAD~) $(git rev-parse HEAD) && git checkout -q master`))
			src := strings.Fields(sh(`echo more >> src.txt && git commit -qam src && echo $(git rev-parse HEAD)`))
			master, feature := sh(`git rev-parse master`), sh(`git rev-parse feature`)

			// The oracle: a later ordinary commit on master (a.txt
			// removed), and the user's cherry-pick runs the call's line.
			oracle := func(onto, pick, hook string) bool {
				out := sh(`git worktree add -q --detach ../o ` + onto + ` >/dev/null 2>&1 && cd ../o && ( [ ! -e a.txt ] || git rm -q a.txt ) && git commit -qm rm --allow-empty &&
( git cherry-pick ` + pick + ` >/dev/null 2>&1 || true ) && ( grep -c PWNED ` + hook + ` || true ) && cd - >/dev/null && git worktree remove --force ../o`)
				return out != "0" && out != ""
			}
			if !oracle(master, side[1], ".husky/pre-commit") {
				t.Fatal("the oracle: the user's cherry-pick of side after the removal of a.txt did not write the hook")
			}
			if !oracle(feature, onMaster[1], ".husky/pre-push") {
				t.Fatal("the oracle: the user's cherry-pick onto feature did not write the push hook")
			}
			if oracle(master, plain[1], ".husky/pre-commit") {
				t.Fatal("the oracle: the control's cherry-pick wrote the hook")
			}

			g, _, _ := gitSnapshot(t, proj, home)
			for _, c := range []struct {
				name    string
				commits []string
				tips    []string
				want    map[string]string // commit: the path found
			}{
				{"a branch whose hook is renamed once master loses a.txt", side, []string{master, feature}, map[string]string{side[0]: ".husky/pre-commit", side[1]: ".husky/pre-commit"}},
				{"a change onto the user's other branch", slices.Concat(onMaster, src), []string{master, feature}, map[string]string{onMaster[0]: ".husky/pre-push", onMaster[1]: ".husky/pre-push"}},
				{"the same branch with content like no hook (control)", plain, []string{master, feature}, nil},
				{"a source commit on master beside feature (control)", src, []string{master, feature}, nil},
				{"the branch, no branch with the hook (control)", side, []string{side[1]}, nil},
			} {
				bad := map[string][]string{}
				if err := g.renamedPaths(c.commits, c.tips, bad); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				got := map[string]string{}
				for k, paths := range bad {
					got[k] = strings.Join(paths, " ")
				}
				if len(got) != len(c.want) {
					t.Errorf("%s: found %v, want %v", c.name, got, c.want)
					continue
				}
				for k, p := range c.want {
					if got[k] != p {
						t.Errorf("%s: found %v, want %v", c.name, got, c.want)
					}
				}
			}
		})
	}
}
