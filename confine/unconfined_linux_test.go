package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/undo"
)

// TestUnconfinedLaunch: the launcher runs the unconfined form's program in
// its cwd with no restriction (it writes beside the project, where no
// capability lets a program write) and the launcher's environment; a
// redirection in that form runs nothing (exit 126). Control: the same
// program under project-write is refused the write beside the project.
func TestUnconfinedLaunch(t *testing.T) {
	base := t.TempDir()
	project, cwd, outside := filepath.Join(base, "p"), filepath.Join(base, "p", "sub"), filepath.Join(base, "outside.txt")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "pwd > " + outside + " && echo \"$LG_UNCONFINED_PROBE\" >> " + outside
	launch := func(cp string, extra ...string) (string, int) {
		args := append([]string{"--cap", cp, "--project", project, "--cwd", cwd}, extra...)
		args = append(args, "--", "/bin/sh", "sh", "-c", script)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "LG_CONFINE_LAUNCH=1", "LG_UNCONFINED_PROBE=env-kept")
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := launch(CapUnconfined)
	got, err := os.ReadFile(outside)
	if code != 0 || err != nil || string(got) != cwd+"\nenv-kept\n" {
		t.Fatalf("unconfined: exit %d %q; wrote %q (%v)", code, out, got, err)
	}
	if err := os.Remove(outside); err != nil {
		t.Fatal(err)
	}
	if out, code := launch(CapUnconfined, "--redirect", "1>"+outside); code != ExitFailed || !strings.Contains(out, "no redirection") {
		t.Errorf("unconfined with a redirection: exit %d %q", code, out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the unconfined form with a redirection ran")
	}
	if ABI() < MinABI {
		t.Skipf("no Landlock ABI %d for the control", MinABI)
	}
	if out, code := launch("project-write"); code == 0 {
		t.Errorf("control: project-write wrote beside the project: %q", out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("control: project-write wrote beside the project")
	}
}

// TestUnconfinedHoldsTheProject: the unconfined form holds its project for
// as long as any of its processes runs (a child it left in the background
// included): a jailed call there waits for it to end, and says why; an
// unconfined call finds a confined call still running there and runs
// nothing. Controls: once the approved call's last process ends, the
// jailed call runs at once, and the unconfined call runs once the
// confined call has ended.
func TestUnconfinedHoldsTheProject(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("no Landlock ABI %d", MinABI)
	}
	base := t.TempDir()
	project, xdg := filepath.Join(base, "p"), filepath.Join(base, "xdg")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(xdg, "loopguard")
	order, up := filepath.Join(project, "order"), filepath.Join(base, "up")
	launch := func(cp, script string) (string, int) { return launchIn(xdg, cp, project, nil, script) }
	// The approved call leaves a child that runs 2 s more, its output
	// closed, so that the launch returns at once.
	out, code := launch(CapUnconfined, "(sleep 2; echo approved-end >> "+order+") >/dev/null 2>&1 & echo up > "+up)
	if code != 0 {
		t.Fatalf("unconfined: exit %d %q", code, out)
	}
	if running, err := undo.ApprovedRunning(state, project); err != nil || !running {
		t.Fatalf("after the unconfined launch returned, its child running: ApprovedRunning %v, %v", running, err)
	}
	out, code = launch("project-write", "echo jailed >> "+order)
	got, _ := os.ReadFile(order)
	if code != 0 || string(got) != "approved-end\njailed\n" {
		t.Errorf("a jailed call while the approved call runs: exit %d %q; order %q, want the approved call's end first", code, out, got)
	}
	if !strings.Contains(out, "waiting for a call the user approved") || !strings.Contains(out, "approved-end") {
		t.Errorf("the jailed call did not say why it waited, naming the approved call: %q", out)
	}
	if running, _ := undo.ApprovedRunning(state, project); running {
		t.Error("the approved call's processes have ended: still running")
	}
	_ = os.Remove(order)
	if out, code := launch("project-write", "echo jailed >> "+order); code != 0 || strings.Contains(out, "waiting") {
		t.Errorf("a jailed call with nothing running (control): exit %d %q", code, out)
	}
	// A confined call holds the project: the unconfined call runs nothing.
	lock, err := undo.LockProject(state, project, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(up)
	out, code = launch(CapUnconfined, "echo up > "+up)
	if _, err := os.Stat(up); code != ExitFailed || err == nil || !strings.Contains(out, "another call still runs in this project") {
		t.Errorf("an unconfined call while a confined call runs: exit %d %q (ran: %v)", code, out, err == nil)
	}
	lock.Close()
	if out, code := launch(CapUnconfined, "echo up > "+up); code != 0 {
		t.Errorf("the unconfined call once the confined call ended (control): exit %d %q", code, out)
	}
}

// TestUnconfinedHoldsNearProjects: a jailed call of a project that lies
// in the approved call's (a session started in sub/) waits for it too,
// and a jailed call that waited plans after the wait: what the approved
// call made meanwhile (a .vscode/, which a jailed call's sweep moves away
// when it made it) stays. Controls: a sibling project's jailed call does
// not wait; the approved call's .vscode/ is there after the jailed call.
func TestUnconfinedHoldsNearProjects(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("no Landlock ABI %d", MinABI)
	}
	base := t.TempDir()
	project, sub, sib, xdg := filepath.Join(base, "p"), filepath.Join(base, "p", "sub"), filepath.Join(base, "sib"), filepath.Join(base, "xdg")
	for _, d := range []string{sub, sib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	order := filepath.Join(sub, "order")
	launch := func(cp, proj, script string) (string, int) { return launchIn(xdg, cp, proj, nil, script) }
	// A jailed call ran in sub/ and in the sibling once: their stores.
	for _, d := range []string{sub, sib} {
		if out, code := launch("project-write", d, "true"); code != 0 {
			t.Fatalf("a first jailed call in %s: exit %d %q", d, code, out)
		}
	}
	out, code := launch(CapUnconfined, project, "(sleep 2; mkdir -p .vscode sub/.vscode; echo '{}' > sub/.vscode/settings.json; echo approved-end >> "+order+") >/dev/null 2>&1 &")
	if code != 0 {
		t.Fatalf("unconfined: exit %d %q", code, out)
	}
	if out, code := launch("project-write", sib, "true"); code != 0 || strings.Contains(out, "waiting") {
		t.Errorf("a sibling's jailed call (control): exit %d %q", code, out)
	}
	out, code = launch("project-write", sub, "echo jailed >> "+order)
	got, _ := os.ReadFile(order)
	if code != 0 || string(got) != "approved-end\njailed\n" || !strings.Contains(out, "waiting for a call the user approved") {
		t.Errorf("sub/'s jailed call while p's approved call runs: exit %d %q; order %q, want the approved call's end first", code, out, got)
	}
	if _, err := os.Stat(filepath.Join(sub, ".vscode", "settings.json")); err != nil {
		t.Errorf("the approved call's sub/.vscode/settings.json, after the jailed call that waited for it: %v (%s)", err, out)
	}
}

// TestAsWrittenHoldsTheProject: the as-written form (an exact approval
// under the jail grant that runs where the host runs it) runs the program
// with no restriction and holds its project as the unconfined form does:
// a jailed call there waits for its background child to end; with a
// confined call still running it runs nothing. Where the undo directory
// is read-only (a sandbox init did not set up, where a jailed call takes
// no lock either) it runs, with no hold, as it ran before.
func TestAsWrittenHoldsTheProject(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("no Landlock ABI %d", MinABI)
	}
	base := t.TempDir()
	project, xdg := filepath.Join(base, "p"), filepath.Join(base, "xdg")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(xdg, "loopguard")
	order, up := filepath.Join(project, "order"), filepath.Join(base, "up")
	launch := func(xdg, cp, script string) (string, int) { return launchIn(xdg, cp, project, nil, script) }
	out, code := launch(xdg, CapAsWritten, "(sleep 2; echo approved-end >> "+order+") >/dev/null 2>&1 & echo up > "+up+"; echo printed")
	if code != 0 || !strings.Contains(out, "printed") {
		t.Fatalf("as-written: exit %d %q", code, out)
	}
	if running, err := undo.ApprovedRunning(state, project); err != nil || !running {
		t.Fatalf("the as-written call's child running: ApprovedRunning %v, %v", running, err)
	}
	out, code = launch(xdg, "project-write", "echo jailed >> "+order)
	if got, _ := os.ReadFile(order); code != 0 || string(got) != "approved-end\njailed\n" {
		t.Errorf("a jailed call while the as-written call runs: exit %d %q; order %q, want the approved call's end first", code, out, got)
	}
	lock, err := undo.LockProject(state, project, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(up)
	out, code = launch(xdg, CapAsWritten, "echo up > "+up)
	if _, err := os.Stat(up); code != ExitFailed || err == nil || !strings.Contains(out, "another call still runs in this project") {
		t.Errorf("an as-written call while a confined call runs: exit %d %q (ran: %v)", code, out, err == nil)
	}
	lock.Close()
	// A read-only undo directory (a sandbox init did not set up, here a
	// read-only bind in a user and mount namespace): the call runs, with
	// no hold. Control: a state directory the user cannot write (not
	// read-only) runs nothing.
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare for the read-only undo directory")
	}
	_ = os.Remove(up)
	// With a place it reaches (--hold), nothing is held there either.
	lib := filepath.Join(base, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	ro := exec.Command("unshare", "-rm", "sh", "-c", `mount --bind -o ro "$1" "$1" && shift && exec "$@"`, "sh", xdg,
		os.Args[0], "--cap", CapAsWritten, "--project", project, "--cwd", project, "--hold", lib, "--", "/bin/sh", "sh", "-c", "echo up > "+up)
	ro.Env = append(os.Environ(), "LG_CONFINE_LAUNCH=1", "XDG_STATE_HOME="+xdg)
	if out, err := ro.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "loopguard") {
			t.Errorf("an as-written call with the undo directory read-only: %v %q", err, out)
		} else {
			t.Skipf("no read-only bind here: %v %q", err, out)
		}
	} else if _, err := os.Stat(up); err != nil {
		t.Errorf("an as-written call with the undo directory read-only did not run: %q", out)
	}
	closed := filepath.Join(base, "closed")
	if err := os.MkdirAll(closed, 0o500); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(up)
	if out, code := launch(closed, CapAsWritten, "echo up > "+up); os.Getuid() != 0 && code != ExitFailed {
		t.Errorf("control: an as-written call whose hold cannot be made (a state directory not writable): exit %d %q", code, out)
	}
}

// TestUnconfinedHoldsWhatItReaches: the places an approved call reaches
// outside its project (--hold: the hook's related places) are held as the
// project is: a jailed call of a session whose project is one waits for
// it; a confined call still running in one refuses it. Controls: a
// sibling the call does not reach does not wait; a place the user cannot
// write is not held; --hold is refused under a capability.
func TestUnconfinedHoldsWhatItReaches(t *testing.T) {
	if ABI() < MinABI {
		t.Skipf("no Landlock ABI %d", MinABI)
	}
	base := t.TempDir()
	project, lib, sib, xdg := filepath.Join(base, "p"), filepath.Join(base, "lib"), filepath.Join(base, "sib"), filepath.Join(base, "xdg")
	for _, d := range []string{project, lib, sib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(xdg, "loopguard")
	order := filepath.Join(lib, "order")
	launch := func(cp, proj string, extra []string, script string) (string, int) {
		return launchIn(xdg, cp, proj, extra, script)
	}
	hold := []string{"--hold", filepath.Join(lib, "deploy.sh"), "--hold", "/usr/bin"}
	_ = os.WriteFile(filepath.Join(lib, "deploy.sh"), []byte("echo deploy\n"), 0o644)
	out, code := launch(CapUnconfined, project, hold, "(sleep 2; echo approved-end >> "+order+") >/dev/null 2>&1 &")
	if code != 0 {
		t.Fatalf("unconfined with --hold: exit %d %q", code, out)
	}
	if running, _ := undo.ApprovedRunning(state, lib); !running {
		t.Errorf("%s, which the approved call reaches: not held", lib)
	}
	if running, _ := undo.ApprovedRunning(state, "/usr/bin"); running && os.Getuid() != 0 {
		t.Error("/usr/bin, which the user cannot write (control): held")
	}
	if out, code := launch("project-write", sib, nil, "true"); code != 0 || strings.Contains(out, "waiting") {
		t.Errorf("a sibling the call does not reach (control): exit %d %q", code, out)
	}
	out, code = launch("project-write", lib, nil, "echo jailed >> "+order)
	if got, _ := os.ReadFile(order); code != 0 || string(got) != "approved-end\njailed\n" {
		t.Errorf("a jailed call in %s while the approved call runs: exit %d %q; order %q, want the approved call's end first", lib, code, out, got)
	}
	lock, err := undo.LockProject(state, lib, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, code := launch(CapUnconfined, project, hold, "true"); code != ExitFailed || !strings.Contains(out, "which this call reaches") {
		t.Errorf("unconfined while a confined call runs in a place it reaches: exit %d %q", code, out)
	}
	lock.Close()
	if out, code := launch("project-write", project, hold, "true"); code != ExitFailed || !strings.Contains(out, "--hold") {
		t.Errorf("--hold under a capability (control): exit %d %q", code, out)
	}
}

// launchIn runs the launcher (this test binary) with state under xdg:
// capability cp, project proj (its cwd too), options extra, and sh -c
// script; it returns the output and the exit status.
func launchIn(xdg, cp, proj string, extra []string, script string) (string, int) {
	args := append([]string{"--cap", cp, "--project", proj, "--cwd", proj}, extra...)
	args = append(args, "--", "/bin/sh", "sh", "-c", script)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LG_CONFINE_LAUNCH=1", "XDG_STATE_HOME="+xdg)
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}
