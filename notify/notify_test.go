package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
)

// hostile is a summary holding everything a shell would act on. By the
// time it gets here it has been escaped (no control characters); what is
// left must still reach the command as inert data.
const hostile = "Bash echo $(touch PWNED) `touch PWNED2` ' \" $HOME ; rm -rf / \\x1b[31m \\n done"

func note() Note {
	return Note{ID: "abcdefghijklmnopqrstuvwx", Prefix: "abcdef", Tool: "Bash", Summary: hostile, Reason: "no_grant",
		Session: "s1", Project: "/p", HeldUntil: time.Now().Add(time.Minute)}
}

// TestCommandInertData: the summary reaches the notify command byte for
// byte through the environment and stdin, and nothing in it runs, even
// when the human's own command is a shell script that quotes it.
func TestCommandInertData(t *testing.T) {
	dir := t.TempDir()
	script := `printf '%s' "$LOOPGUARD_SUMMARY" > env.txt; printf '%s' "$LOOPGUARD_PENDING_PREFIX" > prefix.txt; cat > stdin.txt`
	cmd := []string{"/bin/sh", "-c", "cd " + dir + " && " + script}
	if err := RunCommand(context.Background(), cmd, note()); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	if string(got) != hostile {
		t.Errorf("LOOPGUARD_SUMMARY = %q, want %q", got, hostile)
	}
	if p, _ := os.ReadFile(filepath.Join(dir, "prefix.txt")); string(p) != "abcdef" {
		t.Errorf("prefix = %q", p)
	}
	in, _ := os.ReadFile(filepath.Join(dir, "stdin.txt"))
	if !strings.Contains(string(in), hostile) || !strings.Contains(string(in), "loopguard approve abcdef") {
		t.Errorf("stdin = %q", in)
	}
	for _, f := range []string{"PWNED", "PWNED2"} {
		for _, d := range []string{dir, "."} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Errorf("%s was created: the summary ran", f)
			}
		}
	}
}

// TestCommandDeadline: a command that hangs is killed with its process
// group when the deadline passes, and Fire returns at once.
func TestCommandDeadline(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	nf := Notifier{Command: []string{"/bin/sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}, Deadline: 300 * time.Millisecond}
	var failed error
	start := time.Now()
	done := nf.Fire(note(), func(_ string, err error) { failed = err })
	if time.Since(start) > 100*time.Millisecond {
		t.Errorf("Fire blocked for %s", time.Since(start))
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the notification did not end after its deadline")
	}
	if failed == nil || !strings.Contains(failed.Error(), "deadline") {
		t.Errorf("failure = %v, want a deadline", failed)
	}
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file: %q", data)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Control: a quick command succeeds.
	failed = nil
	<-Notifier{Command: []string{"/bin/true"}}.Fire(note(), func(_ string, err error) { failed = err })
	if failed != nil {
		t.Errorf("control: %v", failed)
	}
	// A missing program is a failure, reported, not a panic.
	failed = nil
	<-Notifier{Command: []string{filepath.Join(dir, "absent")}}.Fire(note(), func(_ string, err error) { failed = err })
	if failed == nil {
		t.Error("a missing notify program was not reported")
	}
}

// fakeServer serves org.freedesktop.Notifications on the session bus and
// records what it is asked to show.
type fakeServer struct {
	mu    sync.Mutex
	caps  []string
	calls chan []any
}

func (f *fakeServer) GetCapabilities() ([]string, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caps, nil
}

func (f *fakeServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.calls <- []any{app, summary, body, hints}
	return 7, nil
}

// startFake claims the notification service's name on the session bus of
// the test (make test runs in a private one), or skips.
func startFake(t testing.TB, caps ...string) (*fakeServer, string) {
	t.Helper()
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		t.Skip("no session bus: run through scripts/with-keyring (make test)")
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Skipf("session bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeServer{caps: caps, calls: make(chan []any, 100)}
	if err := conn.Export(f, dbusPath, dbusIface); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(dbusName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Skipf("cannot own %s on this bus (%v, %v): a real notification server runs here", dbusName, reply, err)
	}
	return f, addr
}

// TestDesktop: the notification carries the id prefix and the escaped
// summary; a server that reads markup gets the summary markup-escaped.
func TestDesktop(t *testing.T) {
	f, addr := startFake(t, "body", "body-markup")
	n := note()
	n.Summary = "Bash echo <b>bold</b> & <a href='x'>link</a>"
	id, err := Desktop(context.Background(), addr, n)
	if err != nil || id != 7 {
		t.Fatalf("Desktop = %d, %v", id, err)
	}
	c := <-f.calls
	if c[0] != "loopguard" || !strings.Contains(c[1].(string), "abcdef") || !strings.Contains(c[1].(string), "held") {
		t.Errorf("title %q", c[1])
	}
	body := c[2].(string)
	if strings.ContainsAny(body, "<>") || !strings.Contains(body, "&lt;b&gt;bold&lt;/b&gt; &amp;") || !strings.Contains(body, "loopguard approve abcdef") {
		t.Errorf("body %q", body)
	}
	// Without body-markup the text goes as it is (it is already escaped
	// for the terminal).
	f.mu.Lock()
	f.caps = []string{"body"}
	f.mu.Unlock()
	if _, err := Desktop(context.Background(), addr, n); err != nil {
		t.Fatal(err)
	}
	if c := <-f.calls; !strings.Contains(c[2].(string), "<b>bold</b>") {
		t.Errorf("plain body %q", c[2])
	}
}

// TestDesktopUnavailable: no service on the bus is ErrUnavailable (not
// logged by the hook), and Fire still returns at once.
func TestDesktopUnavailable(t *testing.T) {
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		t.Skip("no session bus: run through scripts/with-keyring (make test)")
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Skip(err)
	}
	var owned bool
	_ = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, dbusName).Store(&owned)
	conn.Close()
	if owned {
		t.Skip("a notification server runs on this bus")
	}
	if _, err := Desktop(context.Background(), addr, note()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Desktop without a server = %v, want ErrUnavailable", err)
	}
	var failed error
	<-Notifier{Bus: func(context.Context) (string, error) { return "", errors.New("no bus") }}.Fire(note(), func(_ string, err error) { failed = err })
	if !errors.Is(failed, ErrUnavailable) {
		t.Errorf("no bus = %v, want ErrUnavailable", failed)
	}
}

// BenchmarkDesktop is the cost of one desktop notification (connect, ask
// the capabilities, notify) against a server on the session bus. It runs
// only on the held path, in the background, while the hook waits anyway.
func BenchmarkDesktop(b *testing.B) {
	f, addr := startFake(b, "body")
	go func() {
		for range f.calls {
		}
	}()
	n := note()
	for b.Loop() {
		if _, err := Desktop(context.Background(), addr, n); err != nil {
			b.Fatal(err)
		}
	}
}
