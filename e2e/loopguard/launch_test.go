package loopguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
)

// TestSmallLauncherThroughRealClient: with the small launcher beside the
// hook, the real Claude Code's read-only calls run through it, with the
// plan the hook computed: the environment the client gives Bash is the
// one it gives the hook, so the plan fits and loopguard-exec (here a
// stand-in that only records that it ran, and runs nothing) is not needed.
// A read of the home is held (the kernel's refusals under the small
// launcher's ruleset are confine's TestSmallLauncherRunsTheSuite). With Claude Code's sandbox on, Bash gets another
// TMPDIR and cannot read the guard's state: the small launcher hands the
// launch to loopguard-exec, the stand-in records it, and the call fails
// closed (control: the hand-over happens, and nothing runs unconfined).
func TestSmallLauncherThroughRealClient(t *testing.T) {
	t.Parallel()
	if confine.ABI() < confine.MinABI {
		t.Skipf("the kernel's Landlock ABI is %d", confine.ABI())
	}
	claude := installClient(t)
	for _, sandbox := range []bool{false, true} {
		name := "no sandbox"
		if sandbox {
			name = "sandbox"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A copy of the build whose loopguard-exec records its runs.
			bin := t.TempDir()
			for _, b := range []string{"loopguard", "loopguard-hook", "loopguard-launch"} {
				data, err := os.ReadFile(filepath.Join(filepath.Dir(lgBin), b))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bin, b), data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			e := newEnvWith(t, claude, filepath.Join(bin, "loopguard"))
			// Where the stand-in records its runs: out/, which Bash may
			// write with the sandbox on too.
			ran := e.path("out/loopguard-exec-ran")
			stand := "#!/bin/sh\necho \"$@\" >> " + ran + "\necho 'loopguard-exec stand-in: not run' >&2\nexit 126\n"
			if err := os.WriteFile(filepath.Join(bin, "loopguard-exec"), []byte(stand), 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"--no-preset"}
			if !sandbox {
				args = append(args, "--no-sandbox")
			}
			e.initUser(args...)
			if err := os.WriteFile(e.path("README.md"), []byte("the project's readme\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(e.g.Home, "secret.txt")
			if err := os.WriteFile(secret, []byte("home-secret-marker\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := e.g.Grant(e.ctx, e.Dir, "Bash(cat *)"); err != nil {
				t.Fatal(err)
			}
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(bash("toolu_r1", "cat README.md")),
				claudetest.Tools(bash("toolu_r2", "cat "+secret)),
				claudetest.Text("done"),
			}}, nil, "--session-id", sessionID(t))
			ctl, att := result(t, api, "toolu_r1"), result(t, api, "toolu_r2")
			if strings.Contains(att.Content, "home-secret-marker") {
				t.Fatalf("the secret was printed: %q", att.Content)
			}
			handed, _ := os.ReadFile(ran)
			if !sandbox {
				if ctl.IsError || !strings.Contains(ctl.Content, "the project's readme") {
					t.Errorf("control: cat README.md through the small launcher: %q", ctl.Content)
				}
				if !att.IsError {
					t.Errorf("cat of a file in the home ran: %q", att.Content)
				}
				if len(handed) > 0 {
					t.Errorf("the small launcher handed launches to loopguard-exec: %s", handed)
				}
				return
			}
			// The sandbox: handed on, and nothing ran.
			if !strings.Contains(string(handed), "exec --cap read-only") {
				t.Errorf("under the sandbox the launch was not handed to loopguard-exec (%q); the control said %q", handed, ctl.Content)
			}
			if strings.Contains(ctl.Content, "the project's readme") {
				t.Errorf("under the sandbox a launch ran without loopguard-exec: %q", ctl.Content)
			}
		})
	}
}
