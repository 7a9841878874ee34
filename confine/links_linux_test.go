//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// TestJailMakesNoLinks: a call under the jail (no human decided it) can
// neither make a link in the project nor move one there: the file tools
// write the project beside it, and a directory on their path swapped for
// a link would take their write out of the project
// (e2e TestFileToolsThroughASwappedDirectory). The controls: the same
// call writes and renames a file and a directory in the project, makes a
// link in its private temp directory, and an approved project-write call
// (a human's decision) still makes a link.
func TestJailMakesNoLinks(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		elsewhere := filepath.Join(j.home, ".ssh")
		out, code := j.launch(t, policy.JailCapability, "jail-sh", `cd src && mkdir d && echo x > d/f && mv d d2 && mv d2/f d2/g && echo ok-write > ok.txt
ln -s `+elsewhere+` lnk 2>/dev/null && echo made-link > made.txt
ln -s `+elsewhere+` "$TMPDIR/l" && mv "$TMPDIR/l" moved 2>/dev/null && echo moved-link > moved.txt
ln -s `+elsewhere+` "$TMPDIR/l2" && echo tmp-link > tmp.txt; exit 0`)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		src := filepath.Join(j.project, "src")
		for _, n := range []string{"ok.txt", "d2/g", "tmp.txt"} {
			if _, err := os.Lstat(filepath.Join(src, n)); err != nil {
				t.Errorf("namespaces %v: the jailed call's %s (control): %v\n%s", j.ns, n, err, out)
			}
		}
		for _, n := range []string{"lnk", "made.txt", "moved", "moved.txt"} {
			if _, err := os.Lstat(filepath.Join(src, n)); err == nil {
				t.Errorf("namespaces %v: the jailed call made %s: a link in the project", j.ns, n)
			}
		}
		// An approved project-write call: a human decided it.
		out, code = j.launch(t, projectWrite, "jail-sh", `cd src && ln -s `+elsewhere+` approved-lnk`)
		if fi, err := os.Lstat(filepath.Join(src, "approved-lnk")); code != 0 || err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("namespaces %v: an approved project-write call made no link (control): %d %v\n%s", j.ns, code, err, out)
		}
	})
}
