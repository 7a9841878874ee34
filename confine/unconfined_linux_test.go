package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
