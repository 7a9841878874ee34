package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// init --ticket: the prefix in the settings' env, the hooks in shell form
// with --ticket; Unmerge takes both off again. Refused without the wrapper
// beside the binary, in another mode than enforce, or beside another layer.
func TestMergeTicket(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "loopguard-hook")
	wrapper := filepath.Join(dir, "loopguard-exec")
	o := Options{Binary: bin, Deadline: 5 * time.Second, Ticket: true}
	if _, _, err := Merge(nil, o); err == nil || !strings.Contains(err.Error(), "needs the wrapper") {
		t.Fatalf("no wrapper: %v", err)
	}
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"env": {"FOO": "1"}}` + "\n")
	out, _, err := Merge(orig, o)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		`"CLAUDE_CODE_SHELL_PREFIX":"` + wrapper + `"`,
		`"FOO":"1"`,
		`"command":"` + bin + ` hook --event PreToolUse --mode enforce --ticket"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("merged settings lack %s:\n%s", want, s)
		}
	}
	// Before the call, shell form (Claude Code runs it through the
	// prefix, and the hook proves the wrapper is in front); after it, exec
	// form (no shell, no wrapper: two process starts fewer a call).
	for _, ev := range Events {
		h := HandlerFor(o, ev)
		if shell := len(h.Args) == 0; shell == After(ev) {
			t.Errorf("%s in shell form %v, want %v: %+v", ev, shell, !After(ev), h)
		}
		if c, err := h.Hook(bin); err != nil || !c.Ticket || c.Event != ev {
			t.Errorf("%s: not read back as a ticket registration: %+v, %v", ev, c, err)
		}
		if !strings.Contains(s, `"`+ev+`":[{"matcher":"*","hooks":[{"type":"command","command":"`+h.Command+`"`) {
			t.Errorf("merged settings lack %s's handler %+v:\n%s", ev, h, s)
		}
	}
	hs, err := Hooks(out, bin)
	if err != nil || len(hs) != len(Events) || !hs[0].Ours {
		t.Fatalf("the shell-form hooks are not read back as loopguard's: %+v, %v", hs, err)
	}
	back, _, err := Unmerge(out, bin)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(back), "CLAUDE_CODE_SHELL_PREFIX") || strings.Contains(string(back), "hook --event") || !strings.Contains(string(back), `"FOO"`) {
		t.Fatalf("unmerged:\n%s", back)
	}
	// Re-init without --ticket takes the prefix off.
	plain := o
	plain.Ticket = false
	out2, _, err := Merge(out, plain)
	if err != nil || strings.Contains(string(out2), "CLAUDE_CODE_SHELL_PREFIX") {
		t.Fatalf("init without --ticket kept the prefix (%v):\n%s", err, out2)
	}
	// Another program as the prefix is not loopguard's to remove.
	other := []byte(`{"env": {"CLAUDE_CODE_SHELL_PREFIX": "/usr/bin/strace-wrap"}}`)
	if back, _, _ := Unmerge(other, bin); !strings.Contains(string(back), "strace-wrap") {
		t.Fatalf("someone else's prefix removed:\n%s", back)
	}
	for _, bad := range []Options{
		{Binary: bin, Deadline: time.Second, Ticket: true, Mode: "ask"},
		{Binary: bin, Deadline: time.Second, Ticket: true, NoHooks: true},
	} {
		if _, _, err := Merge(nil, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
