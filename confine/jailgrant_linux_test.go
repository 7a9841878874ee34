package confine

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// shell runs script with bash -c through the launcher under c, in the
// project, as the jail's user: what a call the jail grant covers runs.
func (j *jail) jailShell(t *testing.T, c policy.Capability, script string) (string, int) {
	t.Helper()
	s := Spec{Cap: c, Project: j.project, Cwd: j.project, Exe: "/bin/bash", Argv: []string{"bash", "-c", script}}
	cmd := j.command(append([]string{launcherName}, s.Args()[1:]...)...)
	cmd.Env = append([]string{"LG_CONFINE_LAUNCH=1", "GITHUB_TOKEN=ghp_jailsecret"}, cmd.Env...)
	return combined(t, cmd)
}

// TestJailGrantRunsAShell: the jail grant runs the model's text whole in
// bash under the jail capability: a chain, a pipe, a loop and a
// here-document work and write the project (control), while a write
// outside it, to executable configuration or the home, the network, and
// the agent's token in the environment are refused or absent.
func TestJailGrantRunsAShell(t *testing.T) {
	bothModes(t, func(t *testing.T, j *jail) {
		out, code := j.jailShell(t, policy.JailCapability, `cd src && ls | wc -l > count.txt && for f in *.go; do echo "$f"; done; cat > ../docs/notes.txt <<'X'
jailed
X
cat count.txt`)
		if code != 0 || !strings.Contains(out, "main.go") {
			t.Fatalf("the ordinary chain (control): exit %d: %s", code, out)
		}
		if b, err := os.ReadFile(filepath.Join(j.project, "docs", "notes.txt")); err != nil || string(b) != "jailed\n" {
			t.Errorf("notes.txt: %q %v", b, err)
		}
		for _, c := range []struct{ script, path string }{
			{"echo x > " + filepath.Join(j.home, ".bashrc"), filepath.Join(j.home, ".bashrc")},
			{"echo x >> .git/config", filepath.Join(j.project, ".git", "config")},
			{"echo x > " + filepath.Join(j.tmp, "left"), filepath.Join(j.tmp, "left")},
		} {
			before, _ := os.ReadFile(c.path)
			if _, code := j.jailShell(t, policy.JailCapability, c.script); code == 0 {
				t.Errorf("%s: exit 0", c.script)
			}
			after, _ := os.ReadFile(c.path)
			if string(after) != string(before) {
				t.Errorf("%s: %s changed to %q", c.script, c.path, after)
			}
		}
		// A new .envrc never reaches the project: refused, or swept when
		// the call ends (namespaces let the top be written).
		j.jailShell(t, policy.JailCapability, "echo 'eval x' > .envrc")
		if _, err := os.Lstat(filepath.Join(j.project, ".envrc")); err == nil {
			t.Error("a jailed call left .envrc in the project")
		}
		if out, _ := j.jailShell(t, policy.JailCapability, "env"); strings.Contains(out, "ghp_jailsecret") || !strings.Contains(out, "PATH=") {
			t.Errorf("env under the jail shows the token or lacks PATH:\n%s", out)
		}
		if out, code := j.jailShell(t, policy.JailCapability, "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected"); code == 0 || strings.Contains(out, "connected") {
			t.Errorf("a TCP connect from the jail: exit %d: %s", code, out)
		}
	})
}

// TestJailOwnLoopback: with namespaces of its own a capability without the
// network gets a network namespace whose only interface is its own
// loopback. A server the call starts answers the same call on 127.0.0.1
// (control: a test suite's own httptest server, a database on TCP), while
// a listener of the machine's loopback, started by this test outside the
// jail, is not reached over TCP or UDP. With the filter alone nothing is
// reached, the call's own server included (its socket is refused).
func TestJailOwnLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("outside-secret\n"))
			c.Close()
		}
	}()
	outside := l.Addr().(*net.TCPAddr).Port
	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 64)
		n, _, err := u.ReadFrom(b)
		if err == nil {
			got <- string(b[:n])
		}
	}()
	udp := u.LocalAddr().(*net.UDPAddr).Port
	// The call's own server, and a client of it in the same call.
	own := `python3 -c '
import socket, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
port = s.getsockname()[1]
if os.fork() == 0:
    c = socket.create_connection(("127.0.0.1", port)); print(c.recv(64).decode().strip(), flush=True); os._exit(0)
a, _ = s.accept(); a.sendall(b"own-server\n"); a.close(); os.wait()
'`
	bothModes(t, func(t *testing.T, j *jail) {
		out, code := j.jailShell(t, policy.JailCapability, own)
		if j.ns && (code != 0 || !strings.Contains(out, "own-server")) {
			t.Errorf("the call's own server on its loopback (control): exit %d: %s", code, out)
		}
		if !j.ns && (code == 0 || strings.Contains(out, "own-server")) {
			t.Errorf("with the filter alone a server in the jail ran: exit %d: %s", code, out)
		}
		out, code = j.jailShell(t, policy.JailCapability, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", outside))
		if code == 0 || strings.Contains(out, "outside-secret") {
			t.Errorf("the machine's loopback listener reached from the jail: exit %d: %s", code, out)
		}
		j.jailShell(t, policy.JailCapability, fmt.Sprintf("echo leaked > /dev/udp/127.0.0.1/%d", udp))
	})
	select {
	case s := <-got:
		t.Errorf("a UDP datagram from the jail reached the machine's loopback: %q", s)
	case <-time.After(200 * time.Millisecond):
	}
	// The listener itself works from outside (control for the above).
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "outside-secret\n" {
		t.Fatalf("the outside listener answered %q", b)
	}
}
