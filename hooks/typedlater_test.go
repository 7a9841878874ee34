package hooks

import (
	"context"
	"strings"
	"testing"
)

// TestTypedIntoRunsJailed: where the host lets the model type into a
// running command and no hook sees what it types (Codex's write_stdin),
// an exactly approved program that reads commands from its standard
// input (a shell or REPL, through a wrapper or inside a chain) runs in the
// jail: the human approved the program, not what is typed into it later.
// Controls: the same approval where the host has no such channel runs as
// approved, and so does an approved command that reads no commands.
func TestTypedIntoRunsJailed(t *testing.T) {
	for _, tc := range []struct {
		cmd        string
		typesLater bool
		jailed     bool
	}{
		{"nice python3", true, true},
		{"env bash", true, true},
		{"python3", true, true},
		{"echo start; sh", true, true},
		{"nice python3", false, false},   // control: Claude Code has no write_stdin
		{"rm -f notes.txt", true, false}, // control: reads no commands
	} {
		h, _ := rewriteHarness(t, jailLauncher, "python3", "nice", "env")
		decide := func() Decision {
			c := h.call(h.bashCall(tc.cmd))
			c.TypesLater = tc.typesLater
			return h.eng().Decide(context.Background(), c)
		}
		d := decide()
		if d.Behavior == Allow {
			t.Fatalf("%q: allowed before any approval: %+v", tc.cmd, d)
		}
		h.approve(d)
		d = decide()
		if d.Behavior != Allow || d.Reason != ReasonExactGrant {
			t.Fatalf("%q (types later %v): after approval got %s %s: %s", tc.cmd, tc.typesLater, d.Behavior, d.Reason, d.Message)
		}
		got, _ := d.UpdatedInput["command"].(string)
		switch {
		case tc.jailed && got != jailedCommand(h, tc.cmd):
			t.Errorf("%q: runs as %q; want it in the jail, %q", tc.cmd, got, jailedCommand(h, tc.cmd))
		case tc.jailed && !strings.Contains(d.Message, "runs in the jail"):
			t.Errorf("%q: the model is not told it runs in the jail: %s", tc.cmd, d.Message)
		case !tc.jailed && d.UpdatedInput != nil:
			t.Errorf("%q (types later %v): rewritten to %v; want it to run as approved", tc.cmd, tc.typesLater, d.UpdatedInput)
		}
	}
}
