package register

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestHooksReadsTheCommand: doctor reads each registered command
// back with ParseShell: the wrong agent or event, a chain after the hook,
// a missing binary, a missing fallback or one that is not loopguard's
// deny are each named. The control: the command init writes passes.
func TestHooksReadsTheCommand(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: bin, Deadline: 5 * time.Second}
	const deny = `{"decision":"deny"}`
	check := func(line string) []string {
		regs := []Found{{Event: "PreToolUse", Ours: true, Fields: map[string]any{"command": line, "timeout": float64(30)}}}
		return Hooks{Agent: "codex", Events: []string{"PreToolUse"}, CmdKey: "command", TimeoutKey: "timeout", UnitsPerSecond: 1,
			Fallback: func(string) string { return deny }, Host: "Codex"}.Check(regs, o)
	}
	good := o.Command("codex", "PreToolUse", deny).String()
	if p := check(good); len(p) != 0 {
		t.Errorf("control %s: %q", good, p)
	}
	for line, want := range map[string]string{
		o.Command("gemini", "PreToolUse", deny).String():                                                        "does not run `loopguard hook codex --event PreToolUse`",
		o.Command("codex", "PostToolUse", deny).String():                                                        "does not run",
		o.Command("codex", "PreToolUse", "").String() + "; echo ok":                                             "does not run",
		o.Command("codex", "PreToolUse", "").String():                                                           "no deny fallback",
		o.Command("codex", "PreToolUse", `{"decision":"allow"}`).String():                                       "is not loopguard's deny",
		Command{Binary: "/nonexistent/loopguard", Agent: "codex", Event: "PreToolUse", Fallback: deny}.String(): "does not exist",
	} {
		if p := check(line); !strings.Contains(strings.Join(p, "\n"), want) {
			t.Errorf("%s: want %q, got %q", line, want, p)
		}
	}
}

// TestDenyOn: the fallback is the deny, marshalled, for its event only, and
// made when first asked for, once (the hook never asks). The control:
// another event has none.
func TestDenyOn(t *testing.T) {
	made := 0
	f := DenyOn("PreToolUse", func() any {
		made++
		return map[string]string{"decision": "deny"}
	})
	if made != 0 {
		t.Fatalf("the deny was made %d times before it was asked for", made)
	}
	if got := f("PostToolUse"); got != "" {
		t.Errorf("another event: %q", got)
	}
	for range 2 {
		if got := f("PreToolUse"); got != `{"decision":"deny"}` {
			t.Errorf("PreToolUse: %q", got)
		}
	}
	if made != 1 {
		t.Errorf("the deny was made %d times, want once", made)
	}
}
