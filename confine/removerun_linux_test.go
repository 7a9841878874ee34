//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestChmodBeneathFollowsNoLink: removeRun's chmod of a directory that
// lacks its owner's bits goes through no link, last name or on the way
// (the thirty-eighth attack run swapped a cache's directory for a link
// to ~/.netrc between the walk's Lstat and its chmod by path, and the
// next launch's prune made it 0777). Control: a directory of the tree.
func TestChmodBeneathFollowsNoLink(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	victimDir := filepath.Join(out, "vd")
	victimFile := filepath.Join(out, "netrc")
	if err := os.Mkdir(victimDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victimFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(victimDir, filepath.Join(root, "last")))
	must(os.Symlink(out, filepath.Join(root, "way")))
	must(os.Mkdir(filepath.Join(root, "sub"), 0o755))
	must(os.Symlink(victimFile, filepath.Join(root, "sub", "f")))
	for _, rel := range []string{"last", "way/vd", "sub/f", "../" + filepath.Base(out) + "/vd"} {
		if err := chmodBeneath(root, rel, 0o777); err == nil {
			t.Errorf("chmodBeneath(%s) = nil, want an error", rel)
		}
	}
	for p, want := range map[string]os.FileMode{victimDir: 0o700, victimFile: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	// Control: a directory of the tree whose owner lacks its bits.
	d := filepath.Join(root, "sub", "d")
	must(os.Mkdir(d, 0o300))
	must(chmodBeneath(root, relBelow(root, d), 0o700))
	if fi, err := os.Lstat(d); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("control: %v %v", fi.Mode().Perm(), err)
	}
	// And removeRun still removes a tree with such a directory in it.
	must(os.WriteFile(filepath.Join(d, "x"), nil, 0o600))
	must(os.Chmod(d, 0o300))
	must(os.Remove(filepath.Join(root, "sub", "f")))
	must(os.Remove(filepath.Join(root, "last")))
	must(os.Remove(filepath.Join(root, "way")))
	if err := removeRun(root); err != nil {
		t.Fatalf("removeRun: %v", err)
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Fatalf("root left: %v", err)
	}
}

// TestOwnerMayReachLinear: the sweep gives the owner's bits back on the
// way to a directory by opening each from the one before it, not each
// from the project again (the seventy-third attack run's 300 mode-0
// directories a thousand deep took a recovery 12 s, past the hook's
// deadline). The bytes allocated are the deterministic measure: the way
// through a thousand directories costs at most twenty times the way
// through a hundred (a hundred times, quadratic). Control: a
// directory on the way without its owner's search bit gets it back, and
// is said.
func TestOwnerMayReachLinear(t *testing.T) {
	root := t.TempDir()
	chain := func(n int) string {
		rel := strings.TrimSuffix(strings.Repeat("d/", n), "/")
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	short, long := chain(100), chain(1000)
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	allocated := func(rel string) uint64 {
		ownerMayReach(fd, "", rel) // warm
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 3 {
			ownerMayReach(fd, "", rel)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	b100, b1000 := allocated(short), allocated(long)
	if b1000 > 20*b100 {
		t.Errorf("the way through 1,000 directories allocates %d bytes, through 100 %d: not linear (at most 20 times)", b1000, b100)
	}
	mid := filepath.Join(root, strings.Repeat("d/", 50))
	if err := os.Chmod(mid, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := ownerMayReach(fd, "", long)
	fi, err := os.Stat(mid)
	if err != nil || fi.Mode().Perm()&0o700 != 0o700 || len(lines) != 1 || !strings.Contains(lines[0], "mode 0600") {
		t.Errorf("control: a directory at mode 0600 on the way: now %v (%v), said %q", fi.Mode(), err, lines)
	}
}

// TestLinkJudgmentBounded: one link's judgment costs at most maxLinkCost
// names looked up, and one sweep's at most maxSweepLinkCost; past them the
// link is held unjudged, with its own reason, whoever made it (the
// seventy-fourth attack run's links to a link of 4 KB of text, resolved
// 40 times over, cost 0.4 s each and kept a killed call's git directory
// in the project for minutes after the session; the seventy-sixth moved
// such a cost onto an old link, which was then left, leading into the Go
// cache). Controls: a link within the project is judged to stay, one into
// the scratch directory to be held as leading out.
func TestLinkJudgmentBounded(t *testing.T) {
	root := t.TempDir()
	scratch := filepath.Join(t.TempDir(), "scratch")
	if err := os.MkdirAll(filepath.Join(root, strings.Repeat("d/", 800)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.Repeat("d/", 800)+strings.Repeat("../", 800)+"A", filepath.Join(root, "A")); err != nil {
		t.Fatal(err)
	}
	spent := 0
	j := linkJudge{outs: []string{scratch}, dirs: map[string]bool{}, spent: &spent}
	if j.leadsOut(root, "d/d", true) || !j.leadsOut(root, scratch+"/x", true) {
		t.Fatalf("control: a link to d/d held %v, one into the scratch directory held %v; want false, true", j.leadsOut(root, "d/d", true), j.leadsOut(root, scratch+"/x", true))
	}
	before := spent
	if !j.leadsOut(root, "A", true) {
		t.Error("a link the call made, to a link that loops through 4 KB of text, is not held")
	}
	if out, why := j.judge(root, "A", false); !out || why != whyLinkCost {
		t.Errorf("a link the call did not make, past the bound: held %v (%q), want held as too costly to judge", out, why)
	}
	if _, why := j.judge(root, scratch+"/x", false); why != whyLink {
		t.Errorf("control: a link into the scratch directory is held as %q, want as leading out", why)
	}
	if n := spent - before; n > 2*(maxLinkCost+len(root)+2000) {
		t.Errorf("two judgments cost %d, over the bound of %d each", n, maxLinkCost)
	}
	spent = maxSweepLinkCost
	if !j.leadsOut(root, "d/d", true) || !j.leadsOut(root, "d/d", false) {
		t.Error("past the sweep's bound, a link is not held unjudged")
	}
}
