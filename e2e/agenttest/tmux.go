package agenttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tmux is a client's own terminal UI running in a tmux session on a
// private server (a real terminal emulator: full-screen clients ask the
// terminal questions, such as the cursor position, and wait for answers).
type Tmux struct {
	t      testing.TB
	socket string
	home   string // the session's HOME
}

// StartTmux starts argv in dir with env (the whole environment) in a new
// tmux session of its own, 160 columns by 50 rows, and kills it when the
// test ends. tmux must be installed (make deps installs it).
func StartTmux(t testing.TB, dir string, env, argv []string) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: run `make deps`")
	}
	m := &Tmux{t: t, socket: fmt.Sprintf("lg-%d", time.Now().UnixNano())}
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			m.home = h
		}
	}
	args := []string{"new-session", "-d", "-s", "main", "-x", "160", "-y", "50", "-c", dir, "env", "-i"}
	args = append(append(args, env...), argv...)
	if out, err := m.cmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(m.stop)
	return m
}

// stop ends the client (Ctrl-C, then the server), and waits for its
// session to be gone, so that it writes nothing after the test; then it
// kills what the client left running from its home (Codex 0.171.0 leaves
// an app-server daemon, installed below the home, in a session of its
// own).
func (m *Tmux) stop() {
	defer m.killLeftFromHome()
	for i := 0; i < 50; i++ {
		if m.cmd("has-session", "-t", "main").Run() != nil {
			break
		}
		if i%10 == 0 {
			_ = m.Keys("C-c")
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = m.cmd("kill-server").Run()
	time.Sleep(500 * time.Millisecond)
}

func (m *Tmux) cmd(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-L", m.socket}, args...)...)
}

// Screen is what the terminal shows now.
func (m *Tmux) Screen() string {
	out, _ := m.cmd("capture-pane", "-p", "-t", "main").Output()
	return string(out)
}

// WaitFor waits until the terminal shows s, and returns the screen.
func (m *Tmux) WaitFor(ctx context.Context, s string) (string, error) {
	for {
		sc := m.Screen()
		if strings.Contains(sc, s) {
			return sc, nil
		}
		select {
		case <-ctx.Done():
			return sc, fmt.Errorf("the terminal never showed %q: %w", s, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Keys types keys (tmux send-keys names: "Enter", "Down", or text).
func (m *Tmux) Keys(keys ...string) error {
	return m.cmd(append([]string{"send-keys", "-t", "main"}, keys...)...).Run()
}

// killLeftFromHome kills every process whose program lies below the
// session's HOME (a temporary home of the test's own).
func (m *Tmux) killLeftFromHome() {
	if m.home == "" || !strings.HasPrefix(m.home, os.TempDir()+"/") {
		return
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", p.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, m.home+"/") {
			continue
		}
		if proc, err := os.FindProcess(pid); err == nil && proc.Kill() == nil {
			m.t.Logf("killed %d (%s), left running by the client", pid, exe)
		}
	}
}
