package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// shell runs script with bash -c through the launcher under c, in the
// project, as the jail's user: what a call the jail grant covers runs.
func (j *jail) jailShell(t *testing.T, c policy.Capability, script string) (string, int) {
	t.Helper()
	s := Spec{Cap: c, Project: j.project, Cwd: j.project, Exe: "/bin/bash", Argv: []string{"bash", "-c", script}}
	cmd := j.command(append([]string{launcherName}, s.Args()[1:]...)...)
	cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1", "GITHUB_TOKEN=ghp_jailsecret"}, cmd.Env...)
	return combined(t, cmd)
}

// TestJailGrantRunsAShell: the jail grant runs the model's text whole in
// bash under the jail capability: a chain, a pipe, a loop and a
// here-document work and write the project (control), while a write
// outside it, to executable configuration or the home, the network, and
// the agent's token in the environment are refused or absent.
func TestJailGrantRunsAShell(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		out, code := j.jailShell(t, policy.JailCapability, `cd src && ls | wc -l > count.txt && for f in *.go; do echo "$f"; done; cat > ../docs/notes.txt <<'X'
jailed
X
cat count.txt`)
		if code != 0 || !strings.Contains(out, "main.go") {
			t.Fatalf("the ordinary chain (control): exit %d: %s", code, out)
		}
		if b, err := os.ReadFile(filepath.Join(j.project, "docs", "notes.txt")); err != nil || string(b) != "jailed\n" {
			t.Errorf("notes.txt: %q %v", b, err)
		}
		for _, c := range []struct{ script, path string }{
			{"echo x > " + filepath.Join(j.home, ".bashrc"), filepath.Join(j.home, ".bashrc")},
			{"echo x >> .git/config", filepath.Join(j.project, ".git", "config")},
			{"echo x > " + filepath.Join(j.tmp, "left"), filepath.Join(j.tmp, "left")},
		} {
			before, _ := os.ReadFile(c.path)
			if _, code := j.jailShell(t, policy.JailCapability, c.script); code == 0 {
				t.Errorf("%s: exit 0", c.script)
			}
			after, _ := os.ReadFile(c.path)
			if string(after) != string(before) {
				t.Errorf("%s: %s changed to %q", c.script, c.path, after)
			}
		}
		// A new .envrc never reaches the project: refused, or swept when
		// the call ends (namespaces let the top be written).
		j.jailShell(t, policy.JailCapability, "echo 'eval x' > .envrc")
		if _, err := os.Lstat(filepath.Join(j.project, ".envrc")); err == nil {
			t.Error("a jailed call left .envrc in the project")
		}
		if out, _ := j.jailShell(t, policy.JailCapability, "env"); strings.Contains(out, "ghp_jailsecret") || !strings.Contains(out, "PATH=") {
			t.Errorf("env under the jail shows the token or lacks PATH:\n%s", out)
		}
		if out, code := j.jailShell(t, policy.JailCapability, "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected"); code == 0 || strings.Contains(out, "connected") {
			t.Errorf("a TCP connect from the jail: exit %d: %s", code, out)
		}
	})
}
