//go:build linux

package ticket

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// frontRole makes this test binary a process of TestInFront's (role, the
// wrapper to look for): "self" checks InFrontSelf; "wrapper" runs the
// binary again as "hook", its child, as the wrapper runs a hook as a
// child; "hook" checks InFront. It prints "in front" or the error.
const (
	frontRole    = "LOOPGUARD_TICKET_TEST_ROLE"
	frontWrapper = "LOOPGUARD_TICKET_TEST_WRAPPER"
)

func TestMain(m *testing.M) {
	switch os.Getenv(frontRole) {
	case "":
		os.Exit(m.Run())
	case "self":
		report(InFrontSelf(os.Getenv(frontWrapper)))
	case "hook":
		report(InFront(os.Getenv(frontWrapper)))
	case "wrapper":
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), frontRole+"=hook")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		_ = cmd.Run()
	}
	os.Exit(0)
}

func report(err error) {
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("in front")
}

// TestInFront: the hook's proof that the wrapper stands in front of the
// session, whether the wrapper runs it as a child (InFront: its parent) or
// in its own process (InFrontSelf). Both hold for the wrapper's binary run
// with exactly one argument (the host's line: the controls), and fail for
// a process run with more, and for another wrapper than the one installed.
func TestInFront(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, role, wrapper string
		args                []string
		want                string
	}{
		{"self, as the prefix", "self", self, []string{"HOST LINE"}, "in front"},
		{"self, more arguments", "self", self, []string{"HOST", "LINE"}, "not as the host's prefix"},
		{"self, another wrapper", "self", "/bin/true", []string{"HOST LINE"}, "not run through the wrapper (its process is"},
		{"parent, as the prefix", "wrapper", self, []string{"HOST LINE"}, "in front"},
		{"parent, more arguments", "wrapper", self, []string{"HOST", "LINE"}, "not as the host's prefix"},
		{"parent, another wrapper", "wrapper", "/bin/true", []string{"HOST LINE"}, "not run through the wrapper (its parent is"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(self, tt.args...)
			cmd.Env = append(os.Environ(), frontRole+"="+tt.role, frontWrapper+"="+tt.wrapper)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got := strings.TrimSpace(string(out)); !strings.Contains(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestGateRunsOwnHook: the wrapper runs loopguard's own hook line in its
// process when Gate.Hook does (its exit code is the wrapper's), and as a
// child when Hook declines; a Bash call with the same words as the hook
// reaches neither (it needs a ticket).
func TestGateRunsOwnHook(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "loopguard-exec")
	hook := filepath.Join(dir, "loopguard-hook")
	out := filepath.Join(dir, "child-ran")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"$@\" > "+out+"\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := hook + " hook --event PreToolUse --ticket"
	var got []string
	ran := true
	g := &Gate{Self: self, Stderr: io.Discard, Hook: func(argv []string) (int, bool) {
		got = argv
		return 3, ran
	}}
	if code := g.Run(line); code != 3 || !slices.Equal(got, []string{hook, "hook", "--event", "PreToolUse", "--ticket"}) {
		t.Fatalf("in process: exit %d, argv %q", code, got)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the hook ran as a child too")
	}
	ran = false
	if code := g.Run(line); code != 7 {
		t.Fatalf("declined: exit %d, want the child's 7", code)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "hook --event PreToolUse --ticket\n" {
		t.Fatalf("declined: the child did not run with the hook's arguments: %q, %v", b, err)
	}
	got = nil
	f := newFixture(t)
	g2 := f.gate("s1")
	g2.Self, g2.Stderr, g2.Hook = self, io.Discard, g.Hook
	if code := g2.Run(hostLine(line)); code != ExitRefused || got != nil {
		t.Fatalf("a Bash call with the hook's words: exit %d, hook argv %q", code, got)
	}
}
