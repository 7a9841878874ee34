//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	"github.com/loopguard/loopguard/confine"
)

// initOnPTY runs `loopguard init --user` on a fresh pty in a private HOME
// whose PATH holds a user toolchain dir (tc, with cargo), and answers its
// offers with the given lines. It returns the HOME, the toolchain dir and
// the screen.
func initOnPTY(t *testing.T, answer func(scr *clitest.Screen, m *os.File)) (string, string, []string) {
	t.Helper()
	bin := clitest.KeyringBinary(t)
	home := t.TempDir()
	tc := filepath.Join(home, ".cargo", "bin")
	if err := os.MkdirAll(tc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tc, "cargo"), []byte("\x7fELF cargo\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	// The last value of a name wins: the project and a PATH of our own.
	env := append(clitest.HarnessEnv(home, "PATH"), "CLAUDE_PROJECT_DIR="+proj,
		"PATH="+tc+":"+filepath.Dir(bin)+":/usr/local/go/bin:/usr/bin:/bin")
	m, s := clitest.OpenPTY(t)
	t.Cleanup(func() { m.Close() })
	cmd := exec.Command(bin, "init", "--user", "--no-sandbox")
	cmd.Env, cmd.Dir = env, home
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	scr := &clitest.Screen{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			scr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	answer(scr, m)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("init: %v\n%s", err, scr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("init did not finish:\n%s", scr.String())
	}
	run := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Env, c.Dir = env, proj
		out, _ := c.CombinedOutput()
		return string(out)
	}
	return home, tc, []string{run("grants"), run("check", "cargo build")}
}

func typeLine(t *testing.T, m *os.File, s string) {
	t.Helper()
	if _, err := m.WriteString(s + "\r"); err != nil {
		t.Fatal(err)
	}
}

// TestInitOffersPTY: on a terminal init asks whether to trust the toolchain
// dir it found in PATH and whether to grant the read-only preset (then the
// usual digest confirmation); yes records the dir in the config and mints
// the preset.
func TestInitOffersPTY(t *testing.T) {
	home, tc, out := initOnPTY(t, func(scr *clitest.Screen, m *os.File) {
		scr.Expect(t, `trust /.*/\.cargo/bin \(cargo\)\? .*pinned to the file's content.* \[y/N\] `)
		typeLine(t, m, "y")
		scr.Expect(t, `The read-only preset lets these run without a decision.*\n.*ls \*, cat \*`)
		scr.Expect(t, `Grant it\? \[y/N\] `)
		typeLine(t, m, "y")
		d := scr.Expect(t, `digest: +([0-9a-f]{64})`)
		scr.Expect(t, `Type the first 8 characters`)
		typeLine(t, m, d[1][:8])
		scr.Expect(t, `Granted [0-9a-f]{12}: Bash\(ls \*\)`)
	})
	cfg, _ := os.ReadFile(filepath.Join(home, ".config", "loopguard", "config.json"))
	if !strings.Contains(string(cfg), `"`+tc+`"`) {
		t.Errorf("the trusted toolchain dir is not in the config:\n%s", cfg)
	}
	if !strings.Contains(out[0], "preset:readonly") || !strings.Contains(out[0], "yes: in every session") {
		t.Errorf("grants:\n%s", out[0])
	}
	if !strings.Contains(out[1], "verdict:  simple") {
		t.Errorf("cargo is not simple after trusting its dir:\n%s", out[1])
	}
}

// TestInitOffersDeclinedPTY: answering no (or just Enter) trusts nothing
// and grants nothing but the jail.
func TestInitOffersDeclinedPTY(t *testing.T) {
	home, tc, out := initOnPTY(t, func(scr *clitest.Screen, m *os.File) {
		scr.Expect(t, `trust /.*/\.cargo/bin \(cargo\)\?.*\[y/N\] `)
		typeLine(t, m, "")
		scr.Expect(t, `Grant it\? \[y/N\] `)
		typeLine(t, m, "n")
	})
	cfg, _ := os.ReadFile(filepath.Join(home, ".config", "loopguard", "config.json"))
	if strings.Contains(string(cfg), tc) {
		t.Errorf("a declined dir is in the config:\n%s", cfg)
	}
	// The jail is init's default, not an offer (--no-jail leaves it out).
	switch {
	case confine.ABI() >= confine.MinABI && (!strings.Contains(out[0], "Bash(*)") || strings.Contains(out[0], "Bash(ls")):
		t.Errorf("grants after declining (want the jail alone):\n%s", out[0])
	case confine.ABI() < confine.MinABI && !strings.Contains(out[0], "No grants"):
		t.Errorf("grants after declining:\n%s", out[0])
	}
	if !strings.Contains(out[1], "path_shadowed") {
		t.Errorf("cargo after declining:\n%s", out[1])
	}
}
