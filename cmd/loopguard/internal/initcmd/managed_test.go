package initcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
)

// TestManagedHintNamesEveryBinary: init --managed, refusing a binary a
// user could replace, shows the install line for all four binaries, the
// launcher included. Control: a root-owned system binary is accepted.
func TestManagedHintNamesEveryBinary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "loopguard")
	if err := os.WriteFile(p, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	cli.PrintError(&b, rootOnly(p))
	if want := "loopguard: hint: install the four binaries side by side where only root can write, e.g. sudo install -o root -g root -m 0755 loopguard loopguard-hook loopguard-exec loopguard-confine /usr/local/bin/, and run init --managed from there\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("init --managed's hint:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
	if err := rootOnly("/bin/sh"); err != nil {
		t.Errorf("control: /bin/sh refused: %v", err)
	}
}
