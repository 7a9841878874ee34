package loopguard

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// A scoped grant covers its command, every time, and not a chained variant
// or another argument.
func TestScopedGrantCoversItsCommandNotAChainedVariant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	session := sessionID(t)
	if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, "Bash(touch out/scoped.txt)"); err != nil {
		t.Fatal(err)
	}
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash("toolu_sg1", "touch out/scoped.txt")),
		claudetest.Tools(bash("toolu_sg2", "touch out/scoped.txt && touch out/chained.txt")),
		claudetest.Tools(bash("toolu_sg3", "touch other.txt")),
		claudetest.Tools(bash("toolu_sg4", "touch out/scoped.txt")),
		claudetest.Text("done"),
	}}, nil, "--session-id", session)
	wantRan(t, api, "toolu_sg1")
	if !e.exists("out/scoped.txt") {
		t.Error("scoped.txt missing: the granted command did not run")
	}
	wantDenied(t, api, "toolu_sg2", "chained_command")
	wantDenied(t, api, "toolu_sg3", "no_grant")
	for _, f := range []string{"out/chained.txt", "other.txt"} {
		if e.exists(f) {
			t.Errorf("%s exists: a command the grant does not cover ran", f)
		}
	}
	wantRan(t, api, "toolu_sg4") // a scoped grant is not single-use
}

// A grant bound to one session does not work in another.
func TestGrantBoundToSession(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		other   bool // run in another session than the grant's
		wantRan bool
	}{
		{"same session (control)", false, true},
		{"other session", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			granted := sessionID(t)
			if _, err := e.g.Grant(e.ctx, e.Dir, "--session", granted, "Bash(touch out/marker)"); err != nil {
				t.Fatal(err)
			}
			run := granted
			if tt.other {
				run = sessionID(t)
			}
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(bash("toolu_ss1", "touch out/marker")),
				claudetest.Text("done"),
			}}, nil, "--session-id", run)
			if ran := e.exists("out/marker"); ran != tt.wantRan {
				t.Fatalf("command ran = %v, want %v; tool results: %+v", ran, tt.wantRan, api.ToolResults())
			}
			if tt.wantRan {
				wantRan(t, api, "toolu_ss1")
			} else {
				wantDenied(t, api, "toolu_ss1", "no_grant")
			}
		})
	}
}

// The guard binary moved away while registered: the call is blocked, not
// let through. The control row has the binary in place and the same grant.
func TestGuardBinaryMovedAwayBlocks(t *testing.T) {
	t.Parallel()
	claude := installClient(t)
	for _, tt := range []struct {
		name  string
		moved bool
	}{
		{"in place (control)", false},
		{"moved away", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), "loopguard")
			copyFile(t, lgBin, bin)
			e := newEnvWith(t, claude, bin)
			session := sessionID(t)
			if _, err := e.g.Grant(e.ctx, e.Dir, "--session", session, "Bash(touch out/marker)"); err != nil {
				t.Fatal(err)
			}
			if tt.moved {
				if err := os.Rename(bin, bin+".moved"); err != nil {
					t.Fatal(err)
				}
			}
			api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
				claudetest.Tools(bash("toolu_mv1", "touch out/marker")),
				claudetest.Text("done"),
			}}, nil, "--session-id", session)
			r := result(t, api, "toolu_mv1")
			if ran := e.exists("out/marker"); ran == tt.moved {
				t.Fatalf("command ran = %v with the guard moved = %v; tool_result %+v", ran, tt.moved, r)
			}
			if r.IsError != tt.moved {
				t.Errorf("tool_result is_error = %v, want %v: %q", r.IsError, tt.moved, r.Content)
			}
			// Blocked by the client because the registered hook could not
			// start, not by some other refusal.
			if tt.moved && (!strings.Contains(r.Content, `onFailure is "block"`) || !strings.Contains(r.Content, "ENOENT")) {
				t.Errorf("tool_result %q does not say the missing hook blocked the call", r.Content)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	writeNew(t, to, 0o755, in)
}

// writeNew writes what r holds to a new file (not one already there) with
// mode perm.
func writeNew(t *testing.T, path string, perm os.FileMode, r io.Reader) {
	t.Helper()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// An exact approval given between two client runs is bound to its session:
// the identical call in another session is denied; the resumed session
// (--resume keeps the session id) runs it.
func TestApprovalAcrossRunsBoundToSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const cmd = "echo paid >> across.txt"
	session := sessionID(t)
	one := func(id string) claudetest.Script {
		return claudetest.Script{Main: []claudetest.Turn{claudetest.Tools(bash(id, cmd)), claudetest.Text("stopped")}}
	}
	api, _ := e.run(one("toolu_ax1"), nil, "--session-id", session)
	wantDenied(t, api, "toolu_ax1", "no_grant")
	if err := e.approveOnly(); err != nil {
		t.Fatal(err)
	}
	api, _ = e.run(one("toolu_ax2"), nil, "--session-id", sessionID(t))
	wantDenied(t, api, "toolu_ax2", "no_grant")
	if e.exists("across.txt") {
		t.Fatal("across.txt exists: another session used the approval")
	}
	api, _ = e.run(one("toolu_ax3"), nil, "--resume", session)
	wantRan(t, api, "toolu_ax3")
	if got := e.read("across.txt"); got != "paid\n" {
		t.Errorf("across.txt = %q; want the approved command run once in the resumed session", got)
	}
}
