package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/install"
)

// doctor's two-phase line: skip when off, ok with the wrapper as the
// prefix, FAIL when a project file replaces or unsets it, or the prefix is
// missing.
func TestCheckTicket(t *testing.T) {
	root := t.TempDir()
	home, proj, bin := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "bin")
	for _, d := range []string{filepath.Join(home, ".claude"), filepath.Join(proj, ".claude"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook := filepath.Join(bin, "loopguard-hook")
	for _, p := range []string{hook, filepath.Join(bin, "loopguard-exec")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := doctorEnv{self: filepath.Join(bin, "loopguard"), settings: install.Env{Home: home, Cwd: proj}}
	user := filepath.Join(home, ".claude", "settings.json")
	write := func(p string, data []byte) {
		t.Helper()
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merged := func(ticket bool) []byte {
		out, _, err := install.Merge(nil, install.Options{Binary: hook, Deadline: 5 * time.Second, Ticket: ticket})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := func(status checkStatus, text string) {
		t.Helper()
		r := checkTicket(env)
		if r.status != status || !strings.Contains(r.detail, text) {
			t.Fatalf("got %v %q, want %v %q", r.status, r.detail, status, text)
		}
	}
	write(user, merged(false))
	want(statusSkip, "off")
	write(user, merged(true))
	want(statusOK, "on: every Bash command runs through "+filepath.Join(bin, "loopguard-exec"))
	write(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"env": {"CLAUDE_CODE_SHELL_PREFIX": ""}}`))
	want(statusFail, "no_wrapper")
	write(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"env": {"CLAUDE_CODE_SHELL_PREFIX": "/tmp/evil"}}`))
	want(statusFail, "/tmp/evil")
	// A project's settings that run code around the wrapper; the user's
	// own may (control).
	write(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"env": {"BASH_ENV": "benv.sh"}}`))
	want(statusFail, "sets BASH_ENV, which makes the shell run a file at start")
	write(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"env": {"NODE_ENV": "test"}}`))
	want(statusOK, "on:")
	os.Remove(filepath.Join(proj, ".claude", "settings.json"))
	data := strings.Replace(string(merged(true)), `"CLAUDE_CODE_SHELL_PREFIX"`, `"OTHER"`, 1)
	write(user, []byte(data))
	want(statusFail, "no settings file sets")
}
