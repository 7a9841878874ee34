//go:build linux

package confine

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// A launch's own directory is made in scratch/runs, where a later launch
// removes only what a launch older than a day left whose launcher is gone
// (its lock let go); a runs that is a link is refused, its target
// untouched.
func TestLaunchDir(t *testing.T) {
	scratch := t.TempDir()
	e := Env{UID: os.Getuid()}
	first, lock, err := launchDir(scratch, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(scratch, launchesDir)
	if filepath.Dir(first) != runs || !strings.HasPrefix(filepath.Base(first), "run-") {
		t.Fatalf("launch directory %s", first)
	}
	if fi, err := os.Lstat(first); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("launch directory %s: %v %v", first, fi, err)
	}
	// A cache beside runs is not the prune's (the prune reads runs alone).
	cache := filepath.Join(scratch, "go-build-ro-1")
	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(runs, "run-stale")
	other := filepath.Join(runs, "keep-stale")
	for _, d := range []string{stale, other, cache, first} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * staleLaunch)
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	second, _, err := launchDir(scratch, e, io.Discard)
	if err != nil || second == first {
		t.Fatalf("second launch directory %s %v", second, err)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("a launch's directory older than a day is left: %v", err)
	}
	// first is as old, but its launcher (the lock) lives.
	for _, d := range []string{first, other, cache} { // control
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	unlockRun(lock)
	if _, _, err := launchDir(scratch, e, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(first); !os.IsNotExist(err) {
		t.Errorf("a day-old launch directory whose launcher is gone is left: %v", err)
	}

	// runs a link (to a directory of the user's): refused, nothing made
	// there.
	scratch = t.TempDir()
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(scratch, launchesDir)); err != nil {
		t.Fatal(err)
	}
	if d, _, err := launchDir(scratch, e, io.Discard); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Errorf("runs a link: %s %v", d, err)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("made through the link: %v", ents)
	}
}

// TestRecoverKilledRecord: a record a later launch cannot use (not its
// directory's, a cgroup that is no launch's, not JSON) is said and
// removed, and nothing is done by it: no cgroup.kill is written where it
// points. Control: a usable record of a project with nothing to hold
// says so.
func TestRecoverKilledRecord(t *testing.T) {
	run := t.TempDir()
	elsewhere := t.TempDir()
	proj := t.TempDir()
	e := Env{UID: os.Getuid()}
	record := func(r pending) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		record, want string
	}{
		{record(pending{Project: []byte(proj), RunDir: []byte("/tmp/other")}), `cannot be used (it names "/tmp/other")`},
		{record(pending{Project: []byte(proj), RunDir: []byte(run), Cgroup: []byte(elsewhere)}), "is not a launch's"},
		{record(pending{Project: []byte(proj), RunDir: []byte(run), Dirs: []pendingDir{{Parent: 0, Name: []byte("x")}}}), "not a tree"},
		{`{"Project": `, "cannot be used"},
		{record(pending{Project: []byte(proj), RunDir: []byte(run), Dirs: []pendingDir{{Parent: -1, Name: []byte(proj)}}}), "swept now, nothing held back"},
	} {
		if err := os.WriteFile(filepath.Join(run, pendingName), []byte(c.record), 0o600); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		recoverKilled(run, e, &out)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("record %s: said %q, want %q", c.record, out.String(), c.want)
		}
		if _, err := os.Lstat(filepath.Join(run, pendingName)); !os.IsNotExist(err) {
			t.Errorf("record %s: left: %v", c.record, err)
		}
		if _, err := os.Lstat(filepath.Join(elsewhere, "cgroup.kill")); !os.IsNotExist(err) {
			t.Errorf("record %s: wrote cgroup.kill where it pointed: %v", c.record, err)
		}
	}
}

// BenchmarkWritePending: what a launch that writes this repository
// records for its sweep before its program starts (pending_linux.go), on
// every such launch.
func BenchmarkWritePending(b *testing.B) {
	proj, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	e := EnvFrom(os.Getenv, policy.Places{Home: home}, os.Getuid())
	e.TempDir = b.TempDir()
	p, err := NewPlan(Spec{Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}, Cap: policy.Capability{Write: true}}, e)
	if err != nil {
		b.Fatal(err)
	}
	defer unlockRun(p.runLock)
	b.ReportMetric(float64(len(p.Dirs)), "dirs")
	for b.Loop() {
		if err := writePending(p, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPendingRoundTrip: a record carries every byte of its paths (a name
// that is not UTF-8 included) and its directories as a tree, parents
// first; what a later launch reads is the plan's.
func TestPendingRoundTrip(t *testing.T) {
	run := t.TempDir()
	proj := "/p/r\xffoj"
	p := Plan{Project: proj, Scratch: "/s", RunDir: run, started: time.Unix(0, 42),
		Dirs: map[string]int64{proj: 1, proj + "/src": 2, proj + "/src/\xfe\xff": 3, proj + "/src/\xfe\xff/d": 4, "/elsewhere/x": 5},
		Held: []string{proj + "/\xff.envrc"}, Kept: []string{proj + "/.git"}, links: []string{proj + "/l\x80"},
		hooksPaths: []string{proj + "/.husky"}, heldDirs: map[string][2]uint64{proj + "/.vscode\xff": {1, 2}}}
	if err := writePending(p, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(run, pendingName))
	if err != nil {
		t.Fatal(err)
	}
	var r pending
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	got, ok := r.plan()
	if !ok || got.Project != p.Project || got.RunDir != p.RunDir || !got.started.Equal(p.started) ||
		!maps.Equal(got.Dirs, p.Dirs) || !slices.Equal(got.Held, p.Held) || !slices.Equal(got.Kept, p.Kept) ||
		!slices.Equal(got.links, p.links) || !slices.Equal(got.hooksPaths, p.hooksPaths) || !maps.Equal(got.heldDirs, p.heldDirs) {
		t.Errorf("read back %+v (%v), want %+v", got, ok, p)
	}
	for _, d := range append(r.Dirs, r.Links...) {
		if d.Parent >= 0 && strings.Contains(string(d.Name), "/") || d.Parent < 0 && strings.HasPrefix(string(d.Name), proj+"/") {
			t.Errorf("a name in a directory of the record is written as a path: %q (parent %d)", d.Name, d.Parent)
		}
	}
}
