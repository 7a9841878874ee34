package shellwrap

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/ticket"
)

var testKey = bytes.Repeat([]byte{7}, 32)

const host, otherHost = "host:100:5000", "host:200:5000"

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

// issue writes the hook's ticket for cmd, for host in the fixture's cwd,
// and returns the command the host runs (the marker line first).
func (f *fixture) issue(t *testing.T, cmd string, key []byte) string {
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

// run is one wrapper run as h in cwd with the host's command cmd.
func (f *fixture) run(h, cwd, cmd string) (int, string) {
	var stderr bytes.Buffer
	s := &Shell{Store: f.store, Key: func() ([]byte, error) { return testKey, nil }, Host: h, Cwd: cwd, Stderr: &stderr,
		Exec: func(bash string, argv []string) error {
			f.ran = append(f.ran, argv[2])
			return nil
		}}
	return s.Run(cmd), stderr.String()
}

func wantRefused(t *testing.T, f *fixture, code int, msg, reason string) {
	t.Helper()
	if code != ticket.ExitRefused || !strings.Contains(msg, "loopguard: "+reason+": this command did not run") || !ticket.IsRefusal(msg) {
		t.Errorf("exit %d, %q; want refused with %s", code, msg, reason)
	}
	if len(f.ran) != 0 {
		t.Errorf("ran %q; want nothing run", f.ran)
	}
}

// Each attack beside its control: the legitimate command, on the hook's
// ticket, runs once, as the host handed it over.
func TestShellRunsOnlyOnItsTicket(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		code, msg := f.run(host, f.cwd, cmd)
		if code != 0 || msg != "" || len(f.ran) != 1 || f.ran[0] != cmd {
			t.Fatalf("exit %d %q ran %q: want the ticketed command run once", code, msg, f.ran)
		}
	})
	t.Run("no ticket", func(t *testing.T) {
		f := newFixture(t)
		code, msg := f.run(host, f.cwd, "echo hi")
		wantRefused(t, f, code, msg, ticket.ReasonNoDecision)
	})
	t.Run("a marker no hook issued", func(t *testing.T) {
		f := newFixture(t)
		code, msg := f.run(host, f.cwd, ticket.Mark(strings.Repeat("ab", 16), "echo hi"))
		wantRefused(t, f, code, msg, ticket.ReasonNoDecision)
	})
	t.Run("forged", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", bytes.Repeat([]byte{9}, 32))
		code, msg := f.run(host, f.cwd, cmd)
		wantRefused(t, f, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("replayed", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		if code, _ := f.run(host, f.cwd, cmd); code != 0 {
			t.Fatalf("control: the first run exit %d", code)
		}
		f.ran = nil
		code, msg := f.run(host, f.cwd, cmd)
		wantRefused(t, f, code, msg, ticket.ReasonTicketUsed)
	})
	t.Run("expired", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		f.now = f.now.Add(ticket.Lifetime + time.Second)
		code, msg := f.run(host, f.cwd, cmd)
		wantRefused(t, f, code, msg, ticket.ReasonTicketExpired)
	})
	t.Run("changed after the hook", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		code, msg := f.run(host, f.cwd, cmd+"; touch pwned")
		wantRefused(t, f, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("another host process", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		code, msg := f.run(otherHost, f.cwd, cmd)
		wantRefused(t, f, code, msg, ticket.ReasonTicketInvalid)
	})
	t.Run("another cwd", func(t *testing.T) {
		f := newFixture(t)
		cmd := f.issue(t, "echo hi", testKey)
		code, msg := f.run(host, t.TempDir(), cmd)
		wantRefused(t, f, code, msg, ticket.ReasonTicketInvalid)
	})
}

// Only "-c" and one command make the launcher a shell; its other command
// lines (the launcher's, the prefix's one argument) are not.
func TestIs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-c", "echo hi"}, true},
		{[]string{"-c"}, false},
		{[]string{"-l"}, false},
		{[]string{"-c", "echo", "hi"}, false},
		{[]string{"-l", "-c", "echo hi"}, false},
		{[]string{"'/x/loopguard-exec' 'eval ls'"}, false},
		{[]string{"exec", "--cap", "read-only", "--", "/bin/ls"}, false},
	} {
		if got := Is(c.args); got != c.want {
			t.Errorf("Is(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
