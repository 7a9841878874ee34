//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/policy"
)

// TestMergedPaths: git's own merge finds the hook a commit's rename gives
// (the thirty-seventh attack run's notes.sh), in either object format,
// through a cherry-pick, a revert and a merge; controls: a commit of a
// source change on HEAD asks no merge and finds nothing, and one on a
// branch beside HEAD finds nothing.
func TestMergedPaths(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			proj, home, sh := gitShell(t)
			sh(`git init -q --object-format=` + format + ` && mkdir .husky && printf '#!/bin/sh\necho benign\n' > .husky/pre-commit &&
echo s > src.txt && git add -A && git commit -qm hook`)
			head := sh(`git rev-parse HEAD`)
			// The hook's content as notes.sh, then notes.sh the call's.
			ids := strings.Fields(sh(`H=$(git rev-parse HEAD:.husky/pre-commit) && B=$(printf '#!/bin/sh\necho PWNED\n' | git hash-object -w --stdin)
export GIT_INDEX_FILE=../ri; git read-tree HEAD; git update-index --force-remove .husky/pre-commit; git update-index --add --cacheinfo 100755,$H,notes.sh
TB=$(git write-tree); git update-index --add --cacheinfo 100755,$B,notes.sh; TC=$(git write-tree); unset GIT_INDEX_FILE
MB=$(git commit-tree $TB -p HEAD -m move); MC=$(git commit-tree $TC -p $MB -m tidy); D=$(git commit-tree $TB -p $MC -m back)
S=$(git commit-tree $(git rev-parse HEAD^{tree}) -p HEAD -m same); echo more >> src.txt; git add src.txt; X=$(git commit-tree $(git write-tree) -p HEAD -m src)
R=$(printf '100755 blob %s\tnotes.sh\n' $H | git mktree); R=$(git commit-tree $R -m root); RC=$(git commit-tree $(printf '100755 blob %s\tnotes.sh\n' $B | git mktree) -p $R -m c)
git reset -q; git checkout -q src.txt; echo $MB $MC $D $X $S $R $RC`))
			mb, mc, d, x, s, r, rc := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
			g, _, _ := gitSnapshot(t, proj, home)
			if want := map[string]int{"sha1": 20, "sha256": 32}[format]; g.idLen != want {
				t.Fatalf("object names of %d bytes, want %d", g.idLen, want)
			}
			count := func() string { return sh(`git count-objects | cut -d' ' -f1`) }
			before := count()
			for _, c := range []struct {
				name    string
				commits []string
				heads   []string
				found   string // the commit found to write the hook ("" none)
			}{
				{"cherry-pick and merge of the change to notes.sh", []string{mb, mc}, []string{head}, mc},
				{"cherry-pick of a change to notes.sh from a root", []string{r, rc}, []string{head}, rc},
				{"revert of a commit back to the hook's content", []string{d}, []string{head}, d},
				{"a source commit on HEAD (control)", []string{x}, []string{head, x}, ""},
				{"a source commit beside HEAD (control)", []string{x, s}, []string{head, s}, ""},
			} {
				bad := map[string][]string{}
				if err := g.mergedPaths(c.commits, c.heads, bad); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				got := ""
				for k, paths := range bad {
					if len(paths) == 1 && paths[0] == ".husky/pre-commit" {
						got = k
					} else {
						t.Errorf("%s: %s: %v", c.name, k, paths)
					}
				}
				if got != c.found {
					t.Errorf("%s: found %q, want %q (%v)", c.name, got, c.found, bad)
				}
			}
			// Nothing of the merges is left in the repository's store.
			if after := count(); after != before {
				t.Errorf("the merges left objects in the repository: %s loose, %s before", after, before)
			}
		})
	}
}

// gitShell makes dir/proj (and a home) and returns them with a function
// that runs a shell script in dir/proj as the user's git would run there
// (no configuration but the repository's, an identity), failing the test
// when it fails, and giving its output.
func gitShell(t *testing.T) (proj, home string, sh func(script string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	home = t.TempDir()
	proj = filepath.Join(dir, "proj")
	mustDo(t, os.MkdirAll(proj, 0o755))
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+home,
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	return proj, home, func(script string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-ec", script)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v %s", script, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// gitSnapshot is the +git check's snapshot of proj (its descriptor closed
// when the test ends), with the plan and environment of a launch there,
// its git reading no configuration but the repository's.
func gitSnapshot(t *testing.T, proj, home string) (*gitRefs, Plan, Env) {
	t.Helper()
	root, err := unix.Open(proj, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(root) })
	e := Env{Home: home, Places: policy.Places{Home: home, StateDir: filepath.Join(filepath.Dir(proj), "state")}}
	p := Plan{Project: proj, RunDir: filepath.Join(filepath.Dir(proj), "run-test"), started: time.Now()}
	g, err := snapshotRefs(Spec{Exe: "git"}, p, e, root)
	if err != nil || g == nil {
		t.Fatalf("snapshot: %v %v", g, err)
	}
	g.env = append(g.env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return g, p, e
}
