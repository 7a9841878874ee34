package hookmain

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/agents/opencode"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/ticket"
)

// OpenCode's effective shell must be the installed wrapper itself (the
// same file, symlinks resolved); anything else is refused, each beside
// the control.
func TestOpenCodeShellProblem(t *testing.T) {
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "loopguard-exec")
	if err := os.WriteFile(wrapper, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(wrapper, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "loopguard-exec") // the same name elsewhere
	if err := os.WriteFile(other, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		shell string
		ok    bool
	}{
		{wrapper, true},
		{link, true},
		{"", false},
		{"loopguard-exec", false},
		{"/bin/bash", false},
		{other, false},
		{filepath.Join(dir, "missing"), false},
	} {
		why := opencodeShellProblem(c.shell, wrapper)
		if (why == "") != c.ok {
			t.Errorf("shell %q: %q; want ok %v", c.shell, why, c.ok)
		}
		if !c.ok && !strings.Contains(why, wrapper) {
			t.Errorf("shell %q: %q does not name the wrapper", c.shell, why)
		}
	}
}

// After a shell call, the plugin's report of it: a call that ran with no
// ticket on record (no marker, or a marker no hook issued) raises
// ran_without_decision; one the wrapper refused ran nothing and raises
// nothing (the control).
func TestOpenCodeAfterCallFlagsNoTicket(t *testing.T) {
	opts := agents.Options{Adapter: opencode.Adapter{}}
	opencodeOptions(&opts, func() string { return "/opt/lg/loopguard-exec" })
	refusal := "loopguard: " + ticket.ReasonNoDecision + ": this command did not run: no hook decided this command (it carries no ticket). Retry."
	for _, c := range []struct {
		name, cmd, output string
		alarm             bool
	}{
		{"ran with no marker", "echo hi", "hi\n", true},
		{"ran with a marker no hook issued", ticket.Mark(strings.Repeat("ab", 16), "echo hi"), "hi\n", true},
		{"control: refused by the wrapper", "echo hi", refusal, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]any{"event": opencode.After, "session_id": "s1", "call_id": "c1", "tool": "bash",
				"args": map[string]any{"command": c.cmd, "description": "d"}, "directory": t.TempDir(), "output": c.output}
			call, _, err := opts.Adapter.Decode(m, opencode.After)
			if err != nil {
				t.Fatal(err)
			}
			d := opts.Before(context.Background(), &hooks.Engine{}, call)
			if got := d != nil && d.Reason == ticket.ReasonRanWithoutDecision; got != c.alarm {
				t.Errorf("decision %+v; want the ran_without_decision alarm: %v", d, c.alarm)
			}
		})
	}
}
