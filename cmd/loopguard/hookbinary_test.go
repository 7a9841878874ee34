package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/backend/vault/vaulttest"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
)

// init registers loopguard-hook only when it is beside loopguard and of the
// same build; every other case registers loopguard itself and says why.
func TestHookBinary(t *testing.T) {
	src := clitest.TwinSource(t)
	dir := t.TempDir()
	full, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	clitest.GoBuild(t, src, full, "-X main.v=1")

	check := func(what, wantBin, wantWhy string) {
		t.Helper()
		bin, why := cli.HookBinary(full)
		if bin != wantBin || (wantWhy == "") != (why == "") || !strings.Contains(why, wantWhy) {
			t.Errorf("%s: HookBinary = %s, %q; want %s, %q", what, bin, why, wantBin, wantWhy)
		}
	}
	check("absent", full, "is not installed")

	clitest.GoBuild(t, src, hook, "-X main.v=1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	check("same build", hook, "")

	// Under the Vault backend loopguard itself, saving an exec a call.
	cfgDir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "loopguard")
	if err := vaulttest.WriteConfig(cfgDir, "http://127.0.0.1:1", "t"); err != nil {
		t.Fatal(err)
	}
	check("Vault backend", full, "names the Vault backend")
	if err := os.Remove(filepath.Join(cfgDir, "config.json")); err != nil {
		t.Fatal(err)
	}
	check("same build, local backend again", hook, "")

	clitest.GoBuild(t, src, hook, "-X main.v=2")
	check("another build", full, "not from the same build")

	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("not a Go binary", full, "cannot read the build")

	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	clitest.GoBuild(t, src, hook, "-X main.v=1")
	if err := os.Chmod(hook, 0o644); err != nil {
		t.Fatal(err)
	}
	check("not executable", full, "not an executable file")
}

// Every CLI command warns when the loopguard-hook beside it is of another
// build; the controls: none when it is of the same build or not there.
func TestWarnStaleHook(t *testing.T) {
	src := clitest.TwinSource(t)
	dir := t.TempDir()
	full, hook := filepath.Join(dir, "loopguard"), filepath.Join(dir, "loopguard-hook")
	clitest.GoBuild(t, src, full, "-X main.v=1")
	warn := func() string {
		var b strings.Builder
		warnStaleHook(&b, full)
		return b.String()
	}
	if w := warn(); w != "" {
		t.Errorf("no loopguard-hook: %q", w)
	}
	clitest.GoBuild(t, src, hook, "-X main.v=1")
	if w := warn(); w != "" {
		t.Errorf("same build: %q", w)
	}
	clitest.GoBuild(t, src, full, "-X main.v=2")
	if w := warn(); !strings.Contains(w, "loopguard: warning: ") || !strings.Contains(w, "not from the same build") {
		t.Errorf("another build: %q", w)
	}
}
