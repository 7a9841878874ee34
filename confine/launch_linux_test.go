//go:build linux

package confine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/internal/launchtest"
)

// buildSmallLauncher compiles cmd/loopguard-launch once per test binary.
var buildSmallLauncher = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "lg-launch-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "loopguard-launch")
	return out, launchtest.Build(context.Background(), "..", out)
})

func smallLauncher(t *testing.T) string {
	t.Helper()
	launchtest.Require(t)
	p, err := buildSmallLauncher()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runSmall runs the small launcher at stub with argv in env; it returns
// the output, trimmed, and the exit status.
func runSmall(t *testing.T, stub string, env []string, argv ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(stub, argv...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), cmd.ProcessState.ExitCode()
}

// TestSmallLauncherRunsTheSuite: every confinement test whose launches
// are read-only runs again, each such launch through the small launcher
// with the plan the hook would prepare, and must pass as it does through
// loopguard-exec: the same refusals by the kernel, the same controls. The
// plans' fallback does not exist, so a launch the small launcher handed
// on would fail, not pass through loopguard-exec.
func TestSmallLauncherRunsTheSuite(t *testing.T) {
	if fastLauncher != "" {
		t.Skip("running the suite already")
	}
	if ABI() < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", ABI())
	}
	stub := smallLauncher(t)
	cmd := exec.Command(testBinary(t), "-test.run", "^(TestConfinement|TestScratchLinkedAway)", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "LG_CONFINE_FAST="+stub)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite through the small launcher failed: %v\n%s", err, out)
	}
	for _, name := range []string{"TestConfinementFiles", "TestConfinementNetwork", "TestConfinementRedirects", "TestConfinementEnvironmentTokens", "TestConfinementInheritedDescriptors", "TestConfinementTerminalInjection", "TestScratchLinkedAway"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass through the small launcher:\n%s", name, out)
		}
	}
}

// TestSmallLauncherTrustsOnlyItsPlan: the small launcher runs nothing on a
// plan changed after the hook wrote it, on a plan for another program, or
// without its plan; in another environment it hands the launch to
// loopguard-exec with the spec's own command line. Control: the plan as
// written runs the probe.
func TestSmallLauncherTrustsOnlyItsPlan(t *testing.T) {
	w := newWorld(t)
	stub := smallLauncher(t)
	marker := filepath.Join(w.tmp, "ran")
	self := testBinary(t)
	s := Spec{Cap: readOnly, Project: w.project, Cwd: w.project, Exe: self, Argv: []string{probeName, "read", filepath.Join(w.project, "README.md")}}
	dir := filepath.Join(filepath.Dir(w.tmp), "plans")
	plan, err := Prepare(s, dir, self, w.lookup, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); filepath.Base(plan) != hex.EncodeToString(sum[:]) {
		t.Fatalf("the plan %s is not named by its hash", plan)
	}
	run := func(env []string, argv ...string) (string, int) { return runSmall(t, stub, env, argv...) }
	// The launcher's command line after the plan: here echo, which
	// prints the command line it is given when the launch is handed on.
	launch := func(plan string, s Spec) []string { return append([]string{plan, "/bin/echo"}, s.Args()...) }
	if out, code := run(w.env, launch(plan, s)...); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Fatalf("control: the plan as written: exit %d %q", code, out)
	}
	// Another environment, or a plan it cannot open: the launch is the
	// launcher's.
	want := strings.Join(s.Args(), " ")
	if out, code := run(append(w.env[:len(w.env):len(w.env)], "TMPDIR=/elsewhere"), launch(plan, s)...); code != 0 || out != want {
		t.Errorf("another TMPDIR: exit %d %q, want the launcher run as %q", code, out, want)
	}
	if out, code := run(w.env, launch(filepath.Join(dir, strings.Repeat("0", 64)), s)...); code != 0 || out != want {
		t.Errorf("no plan file: exit %d %q, want the launcher run as %q", code, out, want)
	}
	// A private directory gone since the plan (a cleaned temp
	// directory): the launcher makes it again.
	_, rest, _ := strings.Cut(string(data), "\x00private=")
	priv, _, _ := strings.Cut(rest, "\x00")
	_, priv, _ = strings.Cut(priv, " ")
	if err := os.Remove(priv); err != nil {
		t.Fatal(err)
	}
	if out, code := run(w.env, launch(plan, s)...); code != 0 || out != want {
		t.Errorf("a private directory gone: exit %d %q, want the launcher run as %q", code, out, want)
	}
	if err := os.Mkdir(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	// A changed plan, another program, no plan: nothing runs.
	changed := filepath.Join(dir, "changed")
	bad := strings.Replace(string(data), "rule=", "rule=1", 1)
	sum := sha256.Sum256([]byte(bad))
	forged := filepath.Join(dir, hex.EncodeToString(sum[:]))
	if err := os.WriteFile(changed, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forged, data, 0o600); err != nil { // right bytes, wrong name
		t.Fatal(err)
	}
	tampered := filepath.Join(dir, filepath.Base(plan)+"x")
	if err := os.WriteFile(plan+"x", []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	write := s
	write.Argv = []string{probeName, "write", marker}
	other := s
	other.Exe, other.Argv = "/bin/sh", []string{"sh", "-c", "echo x > " + marker}
	wider := write
	wider.Cap.Network = true
	elsewhere := write
	elsewhere.Project = w.home
	for _, argv := range [][]string{
		launch(changed, write),                             // a plan changed after the hook wrote it
		launch(forged, write),                              // a plan under another plan's name
		launch(tampered, write),                            // the same
		launch(plan, other),                                // the plan of another program
		launch(plan, wider),                                // ... of other options (the network)
		launch(plan, elsewhere),                            // ... of another project
		{plan, "/bin/echo", "exec", "--", self, probeName}, // no options
		{plan},
	} {
		out, code := run(w.env, argv...)
		if code != ExitFailed || !strings.Contains(out, "loopguard: the program was not run") {
			t.Errorf("%q: exit %d %q", argv, code, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q: the program ran", argv)
		}
	}
}

// TestPrunePlans: a plan file older than a week goes when a new plan is
// written; a recent one, and a file that is not a plan, stay.
func TestPrunePlans(t *testing.T) {
	dir := t.TempDir()
	old, recent, other := filepath.Join(dir, strings.Repeat("a", 64)), filepath.Join(dir, strings.Repeat("b", 64)), filepath.Join(dir, "notes")
	for _, f := range []string{old, recent, other} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-planAge - time.Hour)
	for _, f := range []string{old, other} {
		if err := os.Chtimes(f, long, long); err != nil {
			t.Fatal(err)
		}
	}
	prunePlans(dir, time.Now().Add(-planAge))
	if _, err := os.Stat(old); err == nil {
		t.Error("the old plan stayed")
	}
	for _, f := range []string{recent, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s went: %v", f, err)
		}
	}
}

// TestSmallLauncherRefusesASwappedGitDir: a worktree's git directory is
// checked when the hook prepares the plan; if a concurrent call (+git code
// writes the common git directory) replaces it by a link to ~/.ssh before
// the launch, the small launcher does not follow the link: nothing runs.
// Control: the same plan before the swap reads the git directory.
func TestSmallLauncherRefusesASwappedGitDir(t *testing.T) {
	w := newWorld(t)
	stub := smallLauncher(t)
	common := filepath.Join(w.outside, "main.git")
	gitdir := filepath.Join(common, "worktrees", "wt")
	for _, f := range []string{filepath.Join(common, "HEAD"), filepath.Join(common, "objects", "x"), filepath.Join(gitdir, "HEAD")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(filepath.Dir(w.project), "wtproj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self := testBinary(t)
	s := Spec{Cap: readOnly, Project: proj, Cwd: proj, Exe: self, Argv: []string{probeName, "list", gitdir}}
	plan, err := Prepare(s, filepath.Join(filepath.Dir(w.tmp), "plans"), self, w.lookup, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(plan)
	if !strings.Contains(string(data), "\x00rulenofollow=") {
		t.Fatalf("the plan opens the git directory following links: %q", data)
	}
	run := func() (string, int) {
		return runSmall(t, stub, w.env, append([]string{plan, "/nonexistent/loopguard-exec"}, s.Args()...)...)
	}
	if out, code := run(); code != 0 || !strings.HasSuffix(out, "ok") {
		t.Fatalf("control: the worktree's git directory before the swap: exit %d %q", code, out)
	}
	if err := os.Rename(gitdir, gitdir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.home, ".ssh"), gitdir); err != nil {
		t.Fatal(err)
	}
	if out, code := run(); code != ExitFailed || strings.Contains(out, "ok") {
		t.Errorf("after the swap: exit %d %q, want nothing run", code, out)
	}
}
