//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestReadDir: readDir lists every name with the type os.ReadDir gives it
// (a directory, a link, a regular file, a FIFO) and the directory's
// change time; below the top it does not follow a link to a directory.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	for _, err := range []error{os.Mkdir(filepath.Join(dir, "d"), 0o755), os.WriteFile(filepath.Join(dir, "f"), nil, 0o644),
		os.Symlink("d", filepath.Join(dir, "l")), syscall.Mkfifo(filepath.Join(dir, "p"), 0o644)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctime, ents, err := readDir(nil, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]os.FileMode{}
	for _, e := range ents {
		got[e.name] = e.typ
	}
	want := map[string]os.FileMode{"d": os.ModeDir, "f": 0, "l": os.ModeSymlink, "p": os.ModeDevice}
	if len(got) != len(want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for n, typ := range want {
		if g, ok := got[n]; !ok || g != typ {
			t.Errorf("%s: type %v (listed %v), want %v", n, g, ok, typ)
		}
	}
	fi, _ := os.Stat(dir)
	if ctime != changeTime(fi) {
		t.Errorf("change time %d, want %d", ctime, changeTime(fi))
	}
	des, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.name)
	}
	slices.Sort(names)
	for i, d := range des {
		if i >= len(names) || names[i] != d.Name() {
			t.Errorf("names %v, os.ReadDir's %v", names, des)
			break
		}
	}
	if _, _, err := readDir(nil, filepath.Join(dir, "l"), false); err == nil {
		t.Error("below the top, a link to a directory was followed")
	}
	if _, _, err := readDir(nil, filepath.Join(dir, "l"), true); err != nil {
		t.Errorf("the top named through a link: %v", err)
	}
}
