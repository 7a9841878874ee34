package confine

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestShadowsSourceStdlibName: an extension module named as a module of
// Python's standard library (argparse.so, logging.cpython-311-...so) is
// held wherever it is, source beside it or not: python -m and -c import
// it from the directory they run in before the standard library's (the
// ninety-third attack run's git filter, python3 -m nbstripout, ran the
// top's argparse.py). Controls: app.so with no source beside it is not,
// and a .pyc is judged by isBytecode, not here.
func TestShadowsSourceStdlibName(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := os.WriteFile(filepath.Join(dir, "util.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"argparse.so": true, "logging.cpython-311-x86_64-linux-gnu.so": true, "json.abi3.so": true,
		"util.so": true, "app.so": false, "app.cpython-311-x86_64-linux-gnu.so": false, "argparse.py": false,
	} {
		if got := shadowsSource(fd, name); got != want {
			t.Errorf("shadowsSource(%s) = %v, want %v", name, got, want)
		}
	}
	if !isBytecode("argparse.pyc") {
		t.Error("isBytecode(argparse.pyc) = false")
	}
}
