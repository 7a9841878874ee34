package codextest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/agenttest"
)

// TestCodexApprovedRunsInBash: exec_command runs its cmd with the shell
// the model names, which no hook payload carries; loopguard analyses
// bash. The ninety-second attack run's F2 (under --no-jail): the model
// names /bin/sh (dash) and sends `: $'\'⏎id > pwned.txt⏎#'`, one `:` to
// bash; approved, it runs as bash reads it (the allow pins it to bash),
// and id does not run. The control: an ordinary command, with the model's
// /bin/sh and without a shell named, runs and prints what it prints.
func TestCodexApprovedRunsInBash(t *testing.T) {
	t.Parallel()
	sh := map[string]any{"shell": "/bin/sh", "login": false}
	for _, tc := range []struct {
		name, cmd, want string
		extra           map[string]any
	}{
		{"dash", ": $'\\'\nid > pwned.txt\n#'", "", sh},
		{"control-sh", "echo hi; printf '%s\\n' \"a  b\"", "hi\na  b", sh},
		{"control", "echo hi; printf '%s\\n' \"a  b\"", "hi\na  b", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := codex.NewEnv(t)
			api := e.Run(agenttest.Script{
				Commands: []string{tc.cmd, tc.cmd},
				Extra:    []map[string]any{tc.extra, tc.extra},
				Between: func(i int, _ string) {
					if i != 0 {
						return
					}
					if err := e.ApproveOnly(); err != nil {
						t.Error(err)
					}
				},
			})
			if _, err := os.Stat(filepath.Join(e.Dir, "pwned.txt")); err == nil {
				t.Fatal("id ran: the model's shell read the approved text otherwise than bash")
			}
			outs := api.Outputs()
			if len(outs) < 2 || !strings.Contains(outs[1], tc.want) || strings.Contains(outs[1], "uid=") {
				t.Fatalf("the approved call's output: %q, want %q", outs, tc.want)
			}
			if !strings.Contains(outs[1], "Process exited with code 0") {
				t.Fatalf("the approved call did not run: %q", outs[1])
			}
		})
	}
}
