//go:build unix

package agenttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loopguard/loopguard/e2e/claudetest"
	lg "github.com/loopguard/loopguard/e2e/loopguard"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// Env is one test's guarded project: a loopguard with its own HOME and
// state, registered for one agent with `loopguard init --agent`.
type Env struct {
	T   *testing.T
	Ctx context.Context
	G   *lg.Guard
	Dir string

	Agent  *Agent // the client, when the Env is an Agent's (Agent.NewEnv)
	Client string // the client's executable, likewise
}

// NewEnv makes the guarded project; prepare runs on the new HOME before
// init (to write the client's own settings), and init gets initFlags. With
// agent "", nothing is registered: the test registers what it needs.
func NewEnv(t *testing.T, lgBin, agent string, prepare func(home string) error, initFlags ...string) *Env {
	t.Helper()
	keyringtest.Require(t)
	root := t.TempDir()
	g, err := lg.NewGuard(lgBin, root)
	if err != nil {
		t.Fatal(err)
	}
	// A temp directory of the test's own for the client, its hooks and
	// the launcher (whose scratch directory, and the records of launches
	// killed before their sweep, live there): with the shared one, a
	// launch of another test recovered this test's killed launcher and
	// said so in that test's output. Short, under the system's temp
	// directory: the clients make Unix sockets in it.
	tmp, err := os.MkdirTemp("", "lgt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	g.Extra = append(g.Extra, "TMPDIR="+tmp)
	e := &Env{T: t, Ctx: context.Background(), G: g, Dir: filepath.Join(root, "project")}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		if err := prepare(g.Home); err != nil {
			t.Fatal(err)
		}
	}
	if agent != "" {
		if out, err := g.Run(e.Ctx, e.Dir, append([]string{"init", "--agent", agent}, initFlags...)...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := g.Run(context.Background(), g.Home, "pending", "--all")
			t.Logf("loopguard pending --all:\n%s", out)
			out, _ = g.Run(context.Background(), g.Home, "audit", "-n", "20")
			t.Logf("loopguard audit:\n%s", out)
		}
	})
	return e
}

// ApproveOnly approves the one pending call at a pseudo-terminal.
func (e *Env) ApproveOnly() error { return e.G.ApproveOnly(e.Ctx) }

// Read returns a project file's content, or "<error>".
func (e *Env) Read(name string) string {
	b, err := os.ReadFile(filepath.Join(e.Dir, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// Exists reports whether a project file exists.
func (e *Env) Exists(name string) bool {
	_, err := os.Stat(filepath.Join(e.Dir, name))
	return err == nil
}

// WantBlocked checks that the client reported call i of api as blocked by
// loopguard with reason.
func WantBlocked(t *testing.T, api *FakeAPI, i int, reason string) {
	t.Helper()
	out := api.Output(i)
	if !strings.Contains(out, "loopguard: "+reason) {
		t.Errorf("call %d: the client reported %q; want it blocked by loopguard with %s", i, out, reason)
	}
}

// Main is the TestMain of an agent's e2e package: it builds loopguard into
// a temp dir named for agent (e2e/loopguard's Setup), runs the tests, and
// removes the dir. The binary's path and any setup error land in *bin and
// *setupErr (a test fails with the error rather than the whole package
// exiting).
func Main(m *testing.M, agent string, bin *string, setupErr *error) {
	dir, err := os.MkdirTemp("", "loopguard-"+agent+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	repo, err := claudetest.RepoRoot()
	if err == nil {
		*bin, err = lg.Setup(context.Background(), repo, dir)
	}
	*setupErr = err
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// HoldAuditLock takes the audit log's lock under state (XDG_STATE_HOME),
// as a stuck process would, until the returned func is called.
func HoldAuditLock(t *testing.T, state string) func() {
	t.Helper()
	dir := filepath.Join(state, "loopguard", "audit")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
