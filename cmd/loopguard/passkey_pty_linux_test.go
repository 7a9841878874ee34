//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/clitest"
	webconsole "github.com/loopguard/loopguard/console"
)

// passkeyAddOnPTY runs passkey add on a fresh terminal of its own in a
// private HOME and answers its prompt with answer(code shown); it returns
// the screen, the links made (files) and the error of the run.
func passkeyAddOnPTY(t *testing.T, home string, answer func(code string) string) (string, int, error) {
	t.Helper()
	bin := clitest.LoopguardBinary(t)
	m, s := clitest.OpenPTY(t)
	t.Cleanup(func() { m.Close() })
	cmd := exec.Command(bin, "passkey", "add", "--name", "phone")
	cmd.Env, cmd.Dir = clitest.HarnessEnv(home), home
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
	code := scr.Expect(t, `Type ([a-z2-9]{6}) to print it \(anything else cancels\): `)[1]
	typeLine(t, m, answer(code))
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("passkey add did not finish:\n%s", scr.String())
	}
	links, _ := filepath.Glob(filepath.Join(home, "state", "loopguard", "console", "enroll", "*.json"))
	return scr.String(), len(links), err
}

var linkRE = regexp.MustCompile(`/enroll#([A-Za-z0-9_-]{43})`)

// The W3: a passkey is registered only through passkey add at the
// human's terminal, as approve does: refused inside an agent and without a
// terminal, and on a terminal the link is printed only once the code shown
// there is typed back (a wrong one makes no link). Control: the code typed
// back prints a link the console accepts.
func TestPasskeyAddNeedsTheTerminal(t *testing.T) {
	home := t.TempDir()
	bin := clitest.LoopguardBinary(t)
	agent := exec.Command(bin, "passkey", "add")
	agent.Env = append(clitest.HarnessEnv(home), "CLAUDECODE=1")
	if out, err := agent.CombinedOutput(); err == nil || !strings.Contains(string(out), "inside") || linkRE.Match(out) {
		t.Errorf("inside an agent: %v\n%s", err, out)
	}
	noTTY := exec.Command(bin, "passkey", "add")
	noTTY.Env = clitest.HarnessEnv(home)
	noTTY.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as the agent's commands run
	if out, err := noTTY.CombinedOutput(); err == nil || !strings.Contains(string(out), "no controlling terminal") || linkRE.Match(out) {
		t.Errorf("without a terminal: %v\n%s", err, out)
	}
	// Input that does not read the screen: a fixed answer.
	scr, links, err := passkeyAddOnPTY(t, home, func(string) string { return "y" })
	if err == nil || linkRE.MatchString(scr) || links != 0 || !strings.Contains(scr, "no link was made") {
		t.Errorf("a wrong code: %v, %d links\n%s", err, links, scr)
	}
	// Control: the code shown, typed back.
	scr, links, err = passkeyAddOnPTY(t, home, func(code string) string { return code })
	m := linkRE.FindStringSubmatch(scr)
	if err != nil || m == nil || links != 1 {
		t.Fatalf("the code typed back: %v, %d links\n%s", err, links, scr)
	}
	cs := &webconsole.Store{Dir: filepath.Join(home, "state", "loopguard", "console")}
	if e, err := cs.Enrollment(m[1], time.Now()); err != nil || e.Name != "phone" {
		t.Errorf("the printed link: %+v %v", e, err)
	}
	if _, err := os.Stat(cs.Dir); err != nil {
		t.Fatal(err)
	}
}
