package shelltool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/ticket"
)

var testKey = bytes.Repeat([]byte{7}, 32)

type fixture struct {
	store *ticket.Store
	now   time.Time
	cwd   string
	ran   []string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{now: time.Unix(1_800_000_000, 0), cwd: t.TempDir()}
	f.store = &ticket.Store{Dir: filepath.Join(t.TempDir(), "tickets"), Now: func() time.Time { return f.now }}
	return f
}

// issue writes the hook's ticket for cmd, as host in the fixture's cwd,
// and returns the command the host hands the wrapper.
func (f *fixture) issue(t *testing.T, host, cmd string, key []byte) string {
	t.Helper()
	nonce, err := ticket.NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	marked := ticket.Mark(nonce, cmd)
	tk := &ticket.Ticket{Session: host, Nonce: nonce, Command: marked, Cwd: f.cwd, Expiry: f.now.Add(ticket.Lifetime).Unix()}
	if err := f.store.Issue(tk, key); err != nil {
		t.Fatal(err)
	}
	return marked
}

// run is one wrapper run as host with the call's arguments args; it
// returns the exit code and the refusal.
func (f *fixture) run(host string, args map[string]any) (int, string) {
	in, _ := json.Marshal(args)
	var stderr bytes.Buffer
	c := &Call{Store: f.store, Key: func() ([]byte, error) { return testKey, nil }, Host: host, Cwd: f.cwd, Stderr: &stderr,
		Exec: func(bash string, argv []string) error {
			f.ran = append(f.ran, argv[2])
			return nil
		}}
	return c.Run(in), stderr.String()
}

func wantRefused(t *testing.T, code int, msg, reason string) {
	t.Helper()
	if code != ticket.ExitRefused || !strings.Contains(msg, "loopguard: "+reason+": this command did not run") || !ticket.IsRefusal(msg) {
		t.Errorf("exit %d, %q; want refused with %s", code, msg, reason)
	}
}

// Each attack has its control: the legitimate call, on the hook's
// ticket, runs once.
func TestCallRunsOnlyOnItsTicket(t *testing.T) {
	const host, other = "host:100:5000", "host:200:5000"
	t.Run("control", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		code, msg := f.run(host, map[string]any{"command": cmd, "description": "say hi"})
		if code != 0 || msg != "" || len(f.ran) != 1 || f.ran[0] != cmd {
			t.Fatalf("exit %d %q ran %q: want the ticketed command run once", code, msg, f.ran)
		}
	})
	t.Run("no ticket", func(t *testing.T) {
		f := newFixture(t)
		code, msg := f.run(host, map[string]any{"command": "echo hi"})
		wantRefused(t, code, msg, ticket.ReasonNoDecision)
	})
	t.Run("forged", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", bytes.Repeat([]byte{8}, 32))
		code, msg := f.run(host, map[string]any{"command": cmd})
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("replayed", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		if code, _ := f.run(host, map[string]any{"command": cmd}); code != 0 {
			t.Fatal("the first run was refused")
		}
		code, msg := f.run(host, map[string]any{"command": cmd})
		wantRefused(t, code, msg, ticket.ReasonTicketUsed)
	})
	t.Run("expired", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		f.now = f.now.Add(ticket.Lifetime + time.Second)
		code, msg := f.run(host, map[string]any{"command": cmd})
		wantRefused(t, code, msg, ticket.ReasonTicketExpired)
	})
	t.Run("other host", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		code, msg := f.run(other, map[string]any{"command": cmd})
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("changed command", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		code, msg := f.run(host, map[string]any{"command": cmd + "; rm -rf ~"})
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("other cwd", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		f.cwd = t.TempDir()
		code, msg := f.run(host, map[string]any{"command": cmd})
		wantRefused(t, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("argument the tool does not take", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, host, "echo hi", testKey)
		code, msg := f.run(host, map[string]any{"command": cmd, "dir_path": "/"})
		wantRefused(t, code, msg, ticket.ReasonNoDecision)
	})
}

// A host that does not run the hook's rewrite: the nonce is derived from
// the host, the cwd and the command, so the ticket of one is not the
// ticket of another.
func TestDerivedNonce(t *testing.T) {
	f := newFixture(t)
	const host = "host:100:5000"
	n := Derived(host, f.cwd, "echo hi")
	tk := &ticket.Ticket{Session: host, Nonce: n, Command: "echo hi", Cwd: f.cwd, Expiry: f.now.Add(ticket.Lifetime).Unix()}
	if err := f.store.Issue(tk, testKey); err != nil {
		t.Fatal(err)
	}
	if code, msg := f.run(host, map[string]any{"command": "echo hi!"}); code != ticket.ExitRefused {
		t.Errorf("another command ran on the ticket: %q", msg)
	}
	if code, msg := f.run("host:101:5000", map[string]any{"command": "echo hi"}); code != ticket.ExitRefused {
		t.Errorf("another host ran the ticket: %q", msg)
	}
	if code, msg := f.run(host, map[string]any{"command": "echo hi"}); code != 0 {
		t.Errorf("control: the ticketed command was refused: %q", msg)
	}
	if Derived(host, f.cwd, "a") == Derived(host, f.cwd+"/x", "a") || Derived(host, f.cwd, "a") == Derived("host:1:1", f.cwd, "a") {
		t.Error("the derived nonce does not bind the cwd and the host")
	}
}

// The hook's host is the nearest ancestor that is not a shell: the
// process that runs the hook through bash -c is the one the wrapper finds
// as its parent when the same process spawns it.
func TestHookHostSkipsShells(t *testing.T) {
	if os.Getenv("SHELLTOOL_HOOKHOST") == "1" {
		h, err := HookHost()
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println("host=" + h)
		return
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Host(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// `; true` keeps bash from exec'ing the command: a shell stands
	// between.
	cmd := exec.Command("bash", "-c", "'"+exe+"' -test.run='^TestHookHostSkipsShells$'; true")
	cmd.Env = append(os.Environ(), "SHELLTOOL_HOOKHOST=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "host="+want+"\n") {
		t.Errorf("HookHost through bash -c: %q, want %s", out, want)
	}
	// Control: without a shell between, the host is the direct parent.
	cmd = exec.Command(exe, "-test.run=^TestHookHostSkipsShells$")
	cmd.Env = append(os.Environ(), "SHELLTOOL_HOOKHOST=1")
	out, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "host="+want+"\n") {
		t.Errorf("HookHost as a direct child: %q, want %s", out, want)
	}
}

func TestDiscoveryListsTheTool(t *testing.T) {
	var l []map[string]any
	if err := json.Unmarshal(Discovery(), &l); err != nil || len(l) != 1 || l[0]["name"] != Name {
		t.Fatalf("Discovery() = %s (%v)", Discovery(), err)
	}
	if got := DiscoveryCommand("/a b/loopguard-exec"); got != "'/a b/loopguard-exec' "+DiscoverWord {
		t.Errorf("DiscoveryCommand = %q", got)
	}
	if _, err := command([]byte(`{"command": 1}`)); err == nil {
		t.Error("a command that is not a string was taken")
	}
	var e *ticket.Error
	if _, err := command([]byte(`[]`)); !errors.As(err, &e) {
		t.Error("arguments that are not an object were taken")
	}
}
