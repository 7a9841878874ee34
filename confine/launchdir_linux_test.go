//go:build linux

package confine

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loopguard/loopguard/internal/testfs"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/undo"
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
		// A project that is gone: nothing to sweep, nor to say.
		{record(pending{Project: []byte(proj + "/gone"), RunDir: []byte(run)}), ""},
		// Another directory where the project was, for more than
		// movedFor (made again under its name): dropped, and said.
		{record(pending{Project: []byte(proj), ProjectID: [2]uint64{1, 1}, RunDir: []byte(run), Started: time.Now().Add(-2 * movedFor).UnixNano()}), "not swept, and not tried again"},
	} {
		if err := os.WriteFile(filepath.Join(run, pendingName), []byte(c.record), 0o600); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		recoverKilled(run, "", e, &out, lockTry)
		if !strings.Contains(out.String(), c.want) || c.want == "" && out.Len() > 0 {
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
		if err := writePending(p, "", undoRecord{}, ""); err != nil {
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
	p := Plan{Project: proj, RootID: [2]uint64{7, 1 << 40}, Scratch: "/s", RunDir: run, started: time.Unix(0, 42),
		Dirs: map[string]int64{proj: 1, proj + "/src": 2, proj + "/src/\xfe\xff": 3, proj + "/src/\xfe\xff/d": 4, "/elsewhere/x": 5},
		Held: []string{proj + "/\xff.envrc"}, Kept: []string{proj + "/.git"}, links: []string{proj + "/l\x80"},
		hooksPaths: []string{proj + "/.husky"}, venvs: []string{proj + "/.v\xffenv"}, heldDirs: map[string][2]uint64{proj + "/.vscode\xff": {1, 2}}}
	if err := writePending(p, "", undoRecord{}, ""); err != nil {
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
	if !ok || got.Project != p.Project || got.RootID != p.RootID || got.RunDir != p.RunDir || !got.started.Equal(p.started) ||
		!maps.Equal(got.Dirs, p.Dirs) || !slices.Equal(got.Held, p.Held) || !slices.Equal(got.Kept, p.Kept) ||
		!slices.Equal(got.links, p.links) || !slices.Equal(got.hooksPaths, p.hooksPaths) || !slices.Equal(got.venvs, p.venvs) || !maps.Equal(got.heldDirs, p.heldDirs) {
		t.Errorf("read back %+v (%v), want %+v", got, ok, p)
	}
	for _, d := range append(r.Dirs, r.Links...) {
		if d.Parent >= 0 && strings.Contains(string(d.Name), "/") || d.Parent < 0 && strings.HasPrefix(string(d.Name), proj+"/") {
			t.Errorf("a name in a directory of the record is written as a path: %q (parent %d)", d.Name, d.Parent)
		}
	}
}

// TestJailProjectMoved: a call of an enclosing project (the fifteenth
// attack run's: project-write there makes links) moves the project aside
// while a call in it runs, or after that call's launcher was killed, and
// puts a link to the home in its place. The call's own sweep then walked
// the home and held back .bashrc; the next launch's recovery did the same.
// Now the launcher sweeps the directory the call began in, opened before
// the program ran, wherever it is, and a recovery sweeps only while the
// project's path leads to that directory again (its record stays until
// then), and no launch runs whose project's path has a link on it. The
// oracle: the home's .bashrc stays. Controls: src/g, the git
// directory the call made, is held back from the directory it made it in,
// and once the project is back, the next launch sweeps for the killed call.
func TestJailProjectMoved(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		bashrc := filepath.Join(j.home, ".bashrc")
		if err := os.WriteFile(bashrc, []byte("# the user's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if os.Getuid() == 0 {
			_ = os.Lchown(bashrc, nobody, nobody)
		}
		aside := j.project + ".aside"
		swap := func() {
			t.Helper()
			if err := os.Rename(j.project, aside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(j.home, j.project); err != nil {
				t.Fatal(err)
			}
		}
		back := func() {
			t.Helper()
			if err := os.Remove(j.project); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(aside, j.project); err != nil {
				t.Fatal(err)
			}
		}
		plant := `exec >/dev/null 2>&1
mkdir -p src/g/objects src/g/refs && echo 'ref: refs/heads/main' > src/g/HEAD && printf '[core]\n\tbare = true\n' > src/g/config
`
		config := filepath.Join(j.project, "src/g/config")
		home := func(when, out string) {
			t.Helper()
			if b, err := os.ReadFile(bashrc); err != nil || string(b) != "# the user's\n" || strings.Contains(out, ".bashrc") {
				t.Errorf("namespaces %v: %s: ~/.bashrc %q %v:\n%s", j.ns, when, b, err, out)
			}
		}

		// The call's own sweep.
		cmd := j.launchCmd(projectWrite, "jail-sh", plant+`i=0; while [ ! -e go.txt ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(config); err == nil {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("namespaces %v: the call made no src/g", j.ns)
			}
		}
		swap()
		if err := os.WriteFile(filepath.Join(aside, "go.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		home("the call's own sweep", buf.String())
		if _, err := os.Lstat(filepath.Join(aside, "src/g/config")); err == nil || !strings.Contains(buf.String(), "src/g") {
			t.Errorf("namespaces %v: src/g was not held back from the directory the call began in (control; %v):\n%s", j.ns, err, buf.String())
		}
		back()

		// A killed launcher's recovery.
		j.killedOnce(t, config, plant+"sleep 30")
		swap()
		out, _ := j.launchWithin(t, 30*time.Second, readOnly, "jail-sh", "true")
		home("a recovery while the project was moved", out)
		if !strings.Contains(out, "not swept; a later launch tries again") {
			t.Errorf("namespaces %v: the recovery said nothing of the moved project:\n%s", j.ns, out)
		}
		if !strings.Contains(out, "the program was not run") || !strings.Contains(out, "a link is on its path") {
			t.Errorf("namespaces %v: a launch whose project's path is a link ran:\n%s", j.ns, out)
		}
		back()
		out, code := j.launchWithin(t, 30*time.Second, readOnly, "jail-sh", "true")
		if code != 0 || !strings.Contains(out, "was killed before its sweep: swept now") || !strings.Contains(out, "src/g") {
			t.Errorf("namespaces %v: once the project was back, the next launch (exit %d) did not sweep for the killed call (control):\n%s", j.ns, code, out)
		}
		home("the recovery once the project was back", out)
	})
}

// TestPruneCaches: a private cache no launch has used for a week (by its
// file in scratch/used, not its own time, which the program using it can
// set) is removed (a tree the program made unreadable too), at most once
// an hour; one in use (its own time a year ago), one with no such file
// yet (which gets one), a name that is not a cache's, and a link named as
// one (its target untouched) stay; a plan marks its caches used.
func TestPruneCaches(t *testing.T) {
	scratch := t.TempDir()
	target := t.TempDir()
	now := time.Now()
	if err := os.Mkdir(filepath.Join(scratch, usedDir), 0o700); err != nil {
		t.Fatal(err)
	}
	// mk makes a cache used age ago (no file in used when age is 0),
	// its own time a year ago.
	mk := func(name string, age time.Duration) string {
		d := filepath.Join(scratch, name)
		if err := os.MkdirAll(filepath.Join(d, "ab/cd"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "ab/cd/f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(d, "ab"), 0); err != nil {
			t.Fatal(err)
		}
		year := now.Add(-365 * 24 * time.Hour)
		if err := os.Chtimes(d, year, year); err != nil {
			t.Fatal(err)
		}
		if age > 0 {
			used := filepath.Join(scratch, usedDir, name)
			if err := os.WriteFile(used, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			old := now.Add(-age)
			if err := os.Chtimes(used, old, old); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	t.Cleanup(func() { _ = removeRun(scratch) })
	stale := mk(CacheDir("go-build", true, "/gone"), 8*24*time.Hour)
	staleNpm := mk(CacheDir("npm", false, "/gone"), 30*24*time.Hour)
	fresh := mk(CacheDir("pycache", true, "/here"), 6*24*time.Hour)
	unmarked := mk(CacheDir("pycache", false, "/older"), 0)
	notCache := mk("go-build-rw-xyz", 30*24*time.Hour)
	runs := mk(launchesDir, 30*24*time.Hour)
	link := filepath.Join(scratch, CacheDir("go-build", false, "/link"))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	pruneCaches(scratch, now)
	for _, d := range []string{stale, staleNpm, filepath.Join(scratch, usedDir, filepath.Base(stale))} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s, unused for more than a week, is left: %v", d, err)
		}
	}
	for _, d := range []string{fresh, unmarked, notCache, runs, link, target} { // control
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(scratch, usedDir, filepath.Base(unmarked))); err != nil || now.Sub(fi.ModTime()) > time.Minute {
		t.Errorf("a cache with no file in used got none now: %v %v", fi, err)
	}
	// Within the hour nothing is looked at; after it, what went stale is.
	later := mk(CacheDir("go-build", false, "/later"), 8*24*time.Hour)
	pruneCaches(scratch, now.Add(10*time.Minute))
	if _, err := os.Lstat(later); err != nil {
		t.Errorf("pruned again within the hour: %v", err)
	}
	pruneCaches(scratch, now.Add(2*time.Hour))
	if _, err := os.Lstat(later); !os.IsNotExist(err) {
		t.Errorf("a stale cache is left after the hour: %v", err)
	}

	// A plan marks its caches used: a project used now is not pruned,
	// whatever the time of its cache.
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	e := Env{Home: filepath.Join(root, "home"), TempDir: filepath.Join(root, "tmp"), UID: os.Getuid(), Places: policy.Places{Home: filepath.Join(root, "home")}}
	if err := os.MkdirAll(e.TempDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := Spec{Project: proj, Cwd: proj, Exe: "/bin/true", Argv: []string{"true"}, Cap: policy.Capability{Write: true}}
	sc := ScratchDirIn(e.TempDir, e.UID)
	used := filepath.Join(sc, usedDir, CacheDir("go-build", true, proj))
	p, err := NewPlan(s, e)
	if err != nil {
		t.Fatal(err)
	}
	unlockRun(p.runLock)
	old := now.Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(used, old, old); err != nil {
		t.Fatal(err)
	}
	if p, err = NewPlan(s, e); err != nil {
		t.Fatal(err)
	}
	unlockRun(p.runLock)
	if fi, err := os.Lstat(used); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("the plan's cache's mark %s: %v %v", used, fi, err)
	}
}

// TestRecoverForHook: the hook's recovery (`exec --recover`) finds a
// launch killed before its sweep only where its directory is unlocked,
// sweeps for it only when it is of the hook's project (another project's
// record stays for that project's next launch), and waits, when asked,
// for a launcher that holds its lock a moment longer (killed, not yet
// exited). Controls: the same record of the hook's own project is swept
// and removed; a locked one is not reported without the wait.
func TestRecoverForHook(t *testing.T) {
	root := t.TempDir()
	uid := os.Getuid()
	runs := filepath.Join(ScratchDirIn(root, uid), launchesDir)
	run := filepath.Join(runs, "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(runs), 0o700); err != nil {
		t.Fatal(err)
	}
	proj, other := t.TempDir(), t.TempDir()
	write := func(project string) {
		b, err := json.Marshal(pending{Project: []byte(project), RunDir: []byte(run), Dirs: []pendingDir{{Parent: -1, Name: []byte(project)}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, pendingName), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := Env{UID: uid}
	recov := func(project string) string {
		var out strings.Builder
		if code := recoverMain([]string{"--project", project, root}, e, &out); code != 0 {
			t.Fatalf("recover: exit %d: %s", code, out.String())
		}
		return out.String()
	}
	recorded := func() bool {
		_, err := os.Lstat(filepath.Join(run, pendingName))
		return err == nil
	}

	write(other)
	if KilledLaunch([]string{root}, uid, proj, 0) {
		t.Error("another project's killed launch is reported: the hook would start a recovery that leaves it, after every call")
	}
	if !KilledLaunch([]string{root}, uid, other, 0) {
		t.Fatal("control: an unlocked launch directory with a record of the project is not reported")
	}
	if said := recov(proj); said != "" || !recorded() {
		t.Errorf("another project's record: said %q, left %v; want nothing said and the record left", said, recorded())
	}
	if said := recov(other); !strings.Contains(said, "swept now") || recorded() {
		t.Errorf("control: the project's own record: said %q, left %v; want it swept and removed", said, recorded())
	}

	write(proj)
	lock, err := lockRun(run, false)
	if err != nil {
		t.Fatal(err)
	}
	if KilledLaunch([]string{root}, uid, proj, 0) {
		t.Error("a launch directory its launcher still locks is reported as killed")
	}
	go func() { time.Sleep(200 * time.Millisecond); unlockRun(lock) }()
	if !KilledLaunch([]string{root}, uid, proj, 5*time.Second) {
		t.Error("a launcher that lets go of its lock within the wait is not waited for")
	}
	if said := recov(proj); !strings.Contains(said, "swept now") || recorded() {
		t.Errorf("after the wait: said %q, left %v; want it swept", said, recorded())
	}
	if KilledLaunch([]string{root}, uid, proj, 0) {
		t.Error("reported again after its recovery")
	}
	// Not absolute, not clean: refused, nothing read.
	var out strings.Builder
	if code := recoverMain([]string{"--project", proj, "tmp"}, e, &out); code != ExitFailed {
		t.Errorf("a relative root: exit %d (%s), want %d", code, out.String(), ExitFailed)
	}
}

// TestKilledLaunchReadsLittle: the hook asks after every call whether a
// launch of its project was killed, so what it reads is bounded by what it
// needs. A scratch directory that is not the user's own and private is not
// read (the seventy-first attack run planted a 64 MB record in another
// user's, and the hook parsed it after every call until its deadline); of a
// record, only the first field, and no further than the project's own
// would reach: a record of the project behind other fields counts as none.
// Controls: the same records, in a private scratch directory, with the
// project first, are found, trailing megabytes and all.
func TestKilledLaunchReadsLittle(t *testing.T) {
	root := t.TempDir()
	uid := os.Getuid()
	scratch := ScratchDirIn(root, uid)
	run := filepath.Join(scratch, launchesDir, "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	enc, _ := json.Marshal([]byte(proj))
	big := strings.Repeat(`{},`, 8<<20/3) + `{}`
	record := func(body string) {
		if err := os.WriteFile(filepath.Join(run, pendingName), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	found := func() bool { return KilledLaunch([]string{root}, uid, proj, 0) }

	record(`{"Project":` + string(enc) + `,"Dirs":[` + big + `]}`)
	if !found() {
		t.Fatal("control: a record of the project, its first field, with megabytes after it, is not found")
	}
	if err := os.Chmod(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	if found() {
		t.Error("a scratch directory others may read (0755) is read: it is not one the user's launches made")
	}
	if err := os.Chmod(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(scratch, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if found() {
			t.Error("another user's scratch directory is read")
		}
		if err := os.Chown(scratch, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	record(`{"Dirs":[` + big + `],"Project":` + string(enc) + `}`)
	if found() {
		t.Error("a record whose first field is not the project is read to its end")
	}
	record(`{"Project":` + string(enc) + `}`)
	if !found() {
		t.Error("control: a plain record of the project is not found")
	}
}

// BenchmarkKilledLaunch: what the hook after every call pays to look for
// a launch killed before its sweep (hookmain.recoverAfter), where there
// is none: a launches' directory with one live launch (locked) in one of
// the four temp directories, the others without a scratch directory.
func BenchmarkKilledLaunch(b *testing.B) {
	root := b.TempDir()
	uid := os.Getuid()
	run := filepath.Join(ScratchDirIn(root, uid), launchesDir, "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, pendingName), []byte("{}"), 0o600); err != nil {
		b.Fatal(err)
	}
	lock, err := lockRun(run, false)
	if err != nil {
		b.Fatal(err)
	}
	defer unlockRun(lock)
	roots := ScratchRoots(root, uid)
	for b.Loop() {
		if KilledLaunch(roots, uid, "/nowhere", 0) {
			b.Fatal("a live launch reported as killed")
		}
	}
}

// TestPlanRefusesProjectHoldingScratch: a launch that may write a project
// holding its temp directory (the sixty-sixth attack run's /p with
// TMPDIR=/p/tmp, where the program wrote other launches' records) is not
// made. Controls: the same project read-only, and a project beside the
// temp directory that may be written, are.
func TestPlanRefusesProjectHoldingScratch(t *testing.T) {
	top := t.TempDir()
	proj, beside := filepath.Join(top, "p"), filepath.Join(top, "q")
	for _, d := range []string{filepath.Join(proj, "tmp"), beside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e := EnvFrom(func(string) string { return "" }, policy.Places{Home: filepath.Join(top, "home")}, os.Getuid())
	e.TempDir = filepath.Join(proj, "tmp")
	plan := func(project string, write bool) error {
		p, err := NewPlan(Spec{Project: project, Cwd: project, Exe: "/bin/true", Argv: []string{"true"}, Cap: policy.Capability{Write: write}}, e)
		if err == nil {
			unlockRun(p.runLock)
		}
		return err
	}
	if err := plan(proj, true); err == nil || !strings.Contains(err.Error(), "holds the temp directory") {
		t.Errorf("project-write in a project holding TMPDIR: %v, want it refused", err)
	}
	// Refused before its scratch directory is made, or its records read
	// (a killed launch's recovery runs when a launch makes its own).
	if _, err := os.Lstat(ScratchDirIn(e.TempDir, os.Getuid())); !os.IsNotExist(err) {
		t.Errorf("the refused launch made its scratch directory: %v", err)
	}
	if err := plan(proj, false); err != nil {
		t.Errorf("control: read-only there: %v", err)
	}
	if err := plan(beside, true); err != nil {
		t.Errorf("control: project-write beside TMPDIR: %v", err)
	}
	// The sixty-seventh attack run's TMPDIR: a link outside the project
	// that leads into it.
	link := filepath.Join(top, "tl")
	if err := os.Symlink(filepath.Join(beside, "t"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(beside, "t"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.TempDir = link
	if err := plan(beside, true); err == nil || !strings.Contains(err.Error(), "holds the temp directory") {
		t.Errorf("project-write in a project a TMPDIR link leads into: %v, want it refused", err)
	}
	if err := plan(proj, true); err != nil {
		t.Errorf("control: project-write in %s, with TMPDIR a link elsewhere: %v", proj, err)
	}
}

// TestRecoverKeepsOnlyTheProjectsGitDirs: a record's git directories
// (Kept) are the project's own .git and those its .git file names; a
// record naming another directory (another repository's .git outside the
// project) gets only those. Control: the project's .git and a linked
// worktree's git directory stay.
func TestRecoverKeepsOnlyTheProjectsGitDirs(t *testing.T) {
	top := t.TempDir()
	proj, wt, other := filepath.Join(top, "p"), filepath.Join(top, "main", ".git", "worktrees", "p"), filepath.Join(top, "other", ".git")
	for _, d := range []string{proj, wt, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, "HEAD"), []byte("ref: refs/heads/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: "+wt+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := keptOf(proj, []string{filepath.Join(proj, ".git"), wt, other, "/"})
	if want := []string{filepath.Join(proj, ".git"), wt}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestScratchRootsAbsolute: a relative or unset TMPDIR gives /tmp's
// roots (the launcher's temp directory then), never a relative root that
// the recovery refuses whole (the sixty-seventh attack run's TMPDIR=tmp
// turned the hook's recovery off). Control: an absolute one is kept.
func TestScratchRootsAbsolute(t *testing.T) {
	want := []string{"/tmp", "/tmp/claude-7"}
	for _, tmp := range []string{"", "tmp", "./x/../tmp"} {
		if got := ScratchRoots(tmp, 7); !slices.Equal(got, want) {
			t.Errorf("TMPDIR %q: %v, want %v", tmp, got, want)
		}
	}
	if got := ScratchRoots("/var/t", 7); !slices.Equal(got, []string{"/tmp", "/tmp/claude-7", "/var/t", "/var/t/claude-7"}) {
		t.Errorf("control: TMPDIR /var/t: %v", got)
	}
}

// TestOneLineSeparators: a name a call made that holds a line or a
// paragraph separator (U+2028, U+2029: a new line to some renderers) is
// escaped in the lines a sweep prints, as a newline is (the sixty-ninth
// attack run's "a\u2028loopguard: approved"). Control: plain text and
// a letter outside ASCII stay as they are.
func TestOneLineSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"held back a\u2028loopguard: approved": `held back a\u2028loopguard: approved`,
		"b\u2029c":                             `b\u2029c`,
		"d\ne":                                 `d\ne`,
		"plain src/g é":                        "plain src/g é",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUndoStateOf: the recovery marks a killed call's undo record only in
// a state directory that is its own where it knows one, and the user's own
// and private in any case (a record, forged where the user's processes
// write, could name another). Control: the recovery's own private one.
func TestUndoStateOf(t *testing.T) {
	own, other, open := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{own, other} {
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	e := Env{UID: os.Getuid()}
	e.Places.StateDir = own
	if !undoStateOf(own, e) {
		t.Error("control: the recovery's own private state directory is refused")
	}
	for name, dir := range map[string]string{"another": other, "relative": "state", "unclean": own + "/.", "not private": open} {
		if undoStateOf(dir, e) {
			t.Errorf("%s state directory (%s) is taken", name, dir)
		}
	}
	e.Places.StateDir = ""
	if !undoStateOf(other, e) || undoStateOf(open, e) {
		t.Error("with no state directory of its own: a private one is refused, or one open to others taken")
	}
}

// killedRecord sets up a launch of proj killed before its sweep, as the
// eighty-fifth attack run's call A: a record in scratch/runs/run-RANDOM
// whose plan saw proj and proj/a, naming the state directory state (its
// undo store made, as the launch's record makes it), and a/g, a git
// directory the call made after its plan, beside a/legit.txt, a file it
// made too (an ordinary one, kept). It returns the launch's directory.
func killedRecord(t *testing.T, proj, state string) string {
	t.Helper()
	run := filepath.Join(t.TempDir(), "runs", "run-0123456789abcdef")
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := undo.Open(state, proj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pending{Project: []byte(proj), RunDir: []byte(run), Started: time.Now().Add(-time.Second).UnixNano(),
		Dirs:      []pendingDir{{Parent: -1, Name: []byte(proj), Ctime: 1}, {Parent: 0, Name: []byte("a"), Ctime: 1}},
		UndoState: []byte(state), HeldIn: []byte(state)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, pendingName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	testfs.Tree(t, proj, []byte("ref: refs/heads/main\n"), 0o600, "a/g/HEAD", "a/g/objects/.keep", "a/g/refs/.keep")
	if err := os.WriteFile(filepath.Join(proj, "a/g/config"), []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a/legit.txt"), []byte("legit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return run
}

// syncBuf is a strings.Builder two goroutines may use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRecoverKilledTakesUndoLock: the eighty-fifth attack run's call B
// waited for the undo lock of call A, ran once A's launcher was killed,
// and took the owner's bits of a, where A had made a/g, in a loop, beside
// the guard's recovery of A, which could not look in a and dropped the
// record: a/g stayed for the user's git. The hook's and the guard's
// recovery (lockWait) now sweep with the project's undo lock, waiting
// for the live call to end first; a launch's look at every launch before
// its plan (lockTry) leaves the record while a call runs there; and a
// launch of the project that took the lock (recoverOwn) sweeps before its
// before-state and program. Controls: the record of the killed call is
// swept once the lock is free, its a/legit.txt kept; the live call's
// lock is never taken from it.
func TestRecoverKilledTakesUndoLock(t *testing.T) {
	proj := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	e := Env{UID: os.Getuid(), Places: policy.Places{StateDir: state}}
	run := killedRecord(t, proj, state)
	record := filepath.Join(run, pendingName)
	config := filepath.Join(proj, "a/g/config")
	// A live call of the project holds its undo lock.
	live, err := undo.LockProject(state, proj, false, nil)
	if err != nil {
		t.Fatal(err)
	}

	// A launch's prune: the record stays while the call runs.
	var out strings.Builder
	if kept := recoverKilled(run, "", e, &out, lockTry); !kept {
		t.Errorf("lockTry with a live call: the record was not kept: %s", out.String())
	}
	if _, err := os.Lstat(config); err != nil {
		t.Errorf("lockTry with a live call: swept beside it: %v\n%s", err, out.String())
	}
	if _, err := os.Lstat(record); err != nil {
		t.Errorf("lockTry with a live call: the record is gone: %v", err)
	}

	// The guard's recovery: waits for the live call.
	said := &syncBuf{}
	done := make(chan bool)
	go func() { done <- recoverKilled(run, proj, e, said, lockWait) }()
	select {
	case <-done:
		t.Fatalf("the recovery ran while a call of the project held its undo lock:\n%s", said)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := os.Lstat(config); err != nil {
		t.Fatalf("the recovery swept while a call of the project ran: %v\n%s", err, said)
	}
	if !strings.Contains(said.String(), "its sweep waits for that call to end") {
		t.Errorf("the waiting recovery said nothing of it: %q", said)
	}
	live.Close() // the live call ends
	select {
	case kept := <-done:
		if kept {
			t.Errorf("the record was kept:\n%s", said)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the recovery did not end once the lock was free")
	}
	if _, err := os.Lstat(config); !os.IsNotExist(err) {
		t.Errorf("a/g/config still in the project after the recovery: %v\n%s", err, said)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "a/legit.txt")); string(b) != "legit\n" {
		t.Errorf("a/legit.txt: %q (control)", b)
	}
	if !strings.Contains(said.String(), "held back a/g") {
		t.Errorf("the recovery: %s", said)
	}
	if _, err := os.Lstat(record); !os.IsNotExist(err) {
		t.Errorf("the record stays after the sweep: %v", err)
	}

	// A launch that took the lock recovers its project's killed launch
	// before its program (recoverOwn, lockHeld), and leaves another
	// project's.
	proj2 := t.TempDir()
	run2 := killedRecord(t, proj2, state)
	scratch := filepath.Dir(filepath.Dir(run2))
	other := filepath.Join(scratch, launchesDir, "run-fedcba9876543210")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	ob, _ := json.Marshal(pending{Project: []byte(proj), RunDir: []byte(other)})
	if err := os.WriteFile(filepath.Join(other, pendingName), ob, 0o600); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(scratch, launchesDir, "run-mine")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := undo.LockProject(state, proj2, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	recoverOwn(Plan{Project: proj2, Scratch: scratch, RunDir: mine}, e, &out)
	lock.Close()
	if _, err := os.Lstat(filepath.Join(proj2, "a/g/config")); !os.IsNotExist(err) {
		t.Errorf("recoverOwn: a/g/config still in the project: %v\n%s", err, out.String())
	}
	if _, err := os.Lstat(filepath.Join(other, pendingName)); err != nil {
		t.Errorf("recoverOwn: another project's record: %v (control)", err)
	}
}

// TestRecoverKilledUnfinished: which sweeps leave their record for a
// later try (recoverKilled; TestJailKilledRecoveryKeepsRecord runs one):
// one that could not look in a directory or move what it found, for
// movedFor. Control: a sweep that held what it found, and one that found
// nothing.
func TestRecoverKilledUnfinished(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{unlooked("a", unix.EIO)}, true},
		{[]string{"loopguard: held back a/b: x", "loopguard: could not move a/g out of the project (operation not permitted), and it is still there"}, true},
		{[]string{"loopguard: held back a/g: x (moved to y)"}, false},
		{nil, false},
	} {
		if got := unfinished(c.lines); got != c.want {
			t.Errorf("%q: unfinished %v, want %v", c.lines, got, c.want)
		}
	}
}

// TestRecoverKilledClosesHeld: a launcher killed in its own sweep, after
// it moved a/g into held/RUN but before it took that folder's mode
// (holder.close), left a whole git directory in a folder of mode 0700,
// and the recovery, which had nothing more to hold, said "nothing held
// back" (the eighty-fifth attack run). It takes the folder's mode now,
// and says so. Controls: a recovery with no such folder says nothing of
// one; its own move of what is left (a/legit.txt stays) is unchanged.
func TestRecoverKilledClosesHeld(t *testing.T) {
	for _, before := range []bool{true, false} {
		proj := t.TempDir()
		state := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(state, 0o700); err != nil {
			t.Fatal(err)
		}
		e := Env{UID: os.Getuid(), Places: policy.Places{StateDir: state}}
		run := killedRecord(t, proj, state)
		held := filepath.Join(state, "held", filepath.Base(run))
		if before {
			if err := os.MkdirAll(held, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(proj, "a/g"), filepath.Join(held, "1-a%2Fg")); err != nil {
				t.Fatal(err)
			}
		} else if err := os.RemoveAll(filepath.Join(proj, "a/g")); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		recoverKilled(run, "", e, &out, lockWait)
		fi, err := os.Lstat(held)
		switch {
		case before && (err != nil || fi.Mode().Perm() != 0):
			t.Errorf("the killed launch's held folder: %v %v, want mode 0\n%s", fi, err, out.String())
		case before && !strings.Contains(out.String(), "held back before its launcher was killed, by its own sweep: 1 entries in "+held):
			t.Errorf("the recovery did not say so: %s", out.String())
		case !before && (err == nil || strings.Contains(out.String(), "before its launcher was killed")):
			t.Errorf("no held folder (control): %v\n%s", err, out.String())
		}
		if b, _ := os.ReadFile(filepath.Join(proj, "a/legit.txt")); string(b) != "legit\n" {
			t.Errorf("a/legit.txt: %q (control)", b)
		}
	}
}
