//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loopguard/loopguard/policy"
)

// TestBrokerInAnotherPIDNamespace: the first stage makes the files a
// filter-only launch creates at the project's top (broker_linux.go),
// finding where the program's path leads from its /proc entry. Inside
// Claude Code's sandbox the launch runs in a PID namespace that its /proc
// was not mounted for, and /proc/PID was another process, in the
// project's top: `cd src && touch made` made the file at the top. Here
// the launcher runs in a PID namespace of its own with the host's /proc.
// The files land where the program's paths say; the control: one made
// at the top by name is made there.
func TestBrokerInAnotherPIDNamespace(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a PID namespace without its own /proc needs root here")
	}
	j := newJail(t, false)
	s := Spec{Cap: policy.JailCapability, Project: j.project, Cwd: j.project, Exe: j.bin,
		Argv: []string{probeName, "jail-sh", `cd src && touch made && mkdir -p x && cd x && echo y > also && cd ../.. && touch top-made`}}
	cmd := j.command(append([]string{launcherName}, s.Args()[1:]...)...)
	cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1"}, cmd.Env...)
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	out, code := combined(t, cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, p := range []string{"src/made", "src/x/also", "top-made"} {
		if _, err := os.Lstat(filepath.Join(j.project, p)); err != nil {
			t.Errorf("%s was not made where the program named it: %v", p, err)
		}
	}
	for _, p := range []string{"made", "also"} {
		if _, err := os.Lstat(filepath.Join(j.project, p)); err == nil {
			t.Errorf("%s was made at the project's top", p)
		}
	}
}
