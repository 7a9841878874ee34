package confine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestJailVersionFileHeld: a version file mise reads (.nvmrc,
// .python-version) that a confined call leaves holding path: or a path
// is held back, one it made and one it rewrote in place (which changes
// no directory), in both modes (the ninety-third attack run's
// .python-version of path:$PWD/build/py made python3 its script on the
// user's next cd). Controls: the user's .nvmrc rewritten to another
// version, and a new .node-version naming one, stay.
func TestJailVersionFileHeld(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		testfs.Tree(t, j.project, []byte("20\n"), 0o644, ".nvmrc", "web/.nvmrc", "svc/.ruby-version")
		if os.Getuid() == 0 {
			for _, p := range []string{".nvmrc", "web", "web/.nvmrc", "svc", "svc/.ruby-version"} {
				if err := os.Lchown(filepath.Join(j.project, p), nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(200 * time.Millisecond) // the sweep's coarse clock (TestJailBytecodeHeld)
		out, _ := j.launch(t, projectWrite, "jail-sh", `echo "path:$PWD/build/py" > .python-version
printf 'path:/tmp/nd\n' > web/.nvmrc
echo ../build/rb > svc/.ruby-version
echo 22 > .nvmrc
echo 22.1.0 > .node-version
exit 1`)
		for _, p := range []string{".python-version", "web/.nvmrc", "svc/.ruby-version"} {
			if b, err := os.ReadFile(filepath.Join(j.project, p)); err == nil && string(b) != "20\n" {
				t.Errorf("namespaces %v: %s holds %q after the call:\n%s", j.ns, p, b, out)
			}
		}
		for p, want := range map[string]string{".nvmrc": "22\n", ".node-version": "22.1.0\n"} {
			if b, _ := os.ReadFile(filepath.Join(j.project, p)); string(b) != want {
				t.Errorf("namespaces %v: control: %s = %q, want %q:\n%s", j.ns, p, b, want, out)
			}
		}
	})
}
