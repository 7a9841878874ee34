package doctor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/install"
)

// With no session bus, doctor fails fast (well under a second), names the
// keyring as the problem with a hint, and nothing waits. A bus address that
// nobody listens on fails just as fast.
func TestDoctorNoBusFast(t *testing.T) {
	for _, addr := range []string{"", "unix:path=" + filepath.Join(t.TempDir(), "nobody")} {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
		self, err := cli.SelfPath()
		if err != nil {
			t.Fatal(err)
		}
		env := doctorEnv{self: self, settings: install.Env{Home: home, Cwd: home}, lookClaude: func() string { return "" }}
		var out bytes.Buffer
		start := time.Now()
		err = doctorRun(context.Background(), &doctorOptions{out: &out, env: env})
		took := time.Since(start)
		var ee *cli.Exit
		if !errors.As(err, &ee) || ee.Code == cli.ExitOK {
			t.Fatalf("addr %q: want a failing exit, got %v", addr, err)
		}
		if took > time.Second {
			t.Errorf("addr %q: doctor took %v", addr, took)
		}
		s := out.String()
		if !strings.Contains(s, "FAIL  keyring: keyring probe: ") || !strings.Contains(s, "      fix: ") {
			t.Errorf("addr %q: keyring failure not named:\n%s", addr, s)
		}
	}
}

func TestCheckClaudeVersions(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		out  string
		want checkStatus
	}{
		{"2.1.328 (Claude Code)", statusOK},
		{"2.1.295 (Claude Code)", statusOK},
		{"3.0.0 (Claude Code)", statusOK},
		{"2.1.294 (Claude Code)", statusWarn},
		{"1.9.999 (Claude Code)", statusWarn},
		{"no version here", statusWarn},
	} {
		bin := filepath.Join(dir, "claude")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+c.out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := checkClaude(context.Background(), func() string { return bin })
		if r.status != c.want {
			t.Errorf("%q: %v (%s)", c.out, r.status, r.detail)
		}
		os.Remove(bin)
	}
}
