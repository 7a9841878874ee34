package loopguard

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/internal/keyringtest"
)

// Built once for the package by TestMain.
var (
	lgBin    string // loopguard
	mcpBin   string // e2e/mcpfake
	setupErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "loopguard-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setupErr = setup(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func setup(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	repo, err := claudetest.RepoRoot()
	if err != nil {
		return err
	}
	if mcpBin, err = BuildMCP(ctx, repo, dir); err != nil {
		return err
	}
	lgBin, err = Setup(ctx, repo, dir)
	return err
}

// env is one test's guarded project: a loopguard with its own HOME and
// state, registered by `loopguard init --project` in Dir.
type env struct {
	t      *testing.T
	ctx    context.Context
	claude string
	g      *Guard
	Dir    string
	// clientEnv is added to the client's environment (a PATH, say).
	clientEnv []string
}

// installClient is where each real-client test starts: it needs a keyring
// session and the package's setup, and returns the installed client.
func installClient(t *testing.T) string {
	t.Helper()
	keyringtest.Require(t)
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	return claudetest.Install(t)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	claude := installClient(t)
	return newEnvWith(t, claude, lgBin)
}

func newEnvWith(t *testing.T, claude, bin string) *env {
	t.Helper()
	root := t.TempDir()
	g, err := NewGuard(bin, root)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: context.Background(), claude: claude, g: g, Dir: filepath.Join(root, "project")}
	forgetScratch(t, e.Dir)
	// out/ is where granted commands write: a confined program may write
	// the project, but create nothing at its top level.
	if err := os.MkdirAll(filepath.Join(e.Dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := g.Init(e.ctx, e.Dir); err != nil {
		t.Fatal(err)
	}
	if bin == lgBin {
		// Built as make build builds it, with loopguard-hook beside it:
		// the real client runs the hook binary users have.
		b, err := os.ReadFile(filepath.Join(e.Dir, ".claude", "settings.json"))
		if err != nil || !strings.Contains(string(b), `"command": "`+filepath.Join(filepath.Dir(bin), "loopguard-hook")+`"`) {
			t.Fatalf("init did not register loopguard-hook (%v):\n%s", err, b)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := g.Run(context.Background(), g.Home, "pending", "--all")
			t.Logf("loopguard pending --all:\n%s", out)
			out, _ = g.Run(context.Background(), g.Home, "grants")
			t.Logf("loopguard grants:\n%s", out)
		}
	})
	return e
}

// forgetScratch removes, when the test ends, the private caches that the
// launches in project made in the launcher's scratch directories (the temp
// directory's and Claude Code's sandbox's, which tests share with the
// user): each test's project is new, so each made caches of its own, and
// they outlived it (1.4 GB a make test; the test run that filled a CI
// machine's disk on 2026-12-07 had them).
func forgetScratch(t *testing.T, project string) {
	t.Helper()
	paths := []string{project}
	if abs, err := filepath.Abs(project); err == nil && abs != project {
		paths = append(paths, abs)
	}
	uid := os.Getuid()
	t.Cleanup(func() {
		if p, err := filepath.EvalSymlinks(project); err == nil {
			paths = append(paths, p)
		}
		for _, root := range confine.ScratchRoots(os.TempDir(), uid) {
			for _, p := range paths {
				for _, name := range confine.ProjectCaches(p) {
					_ = os.RemoveAll(filepath.Join(confine.ScratchDirIn(root, uid), name))
				}
			}
		}
	})
}

// heldApprovedRunsOnce plays one conversation that asks for `echo word >>
// runs.txt` twice (calls id+"1" and id+"2"): the first is refused
// (no_grant), the human approves it from a terminal, and the identical
// second runs, once.
func (e *env) heldApprovedRunsOnce(id, word string) {
	t := e.t
	t.Helper()
	cmd := "echo " + word + " >> runs.txt"
	api, _ := e.run(claudetest.Script{Main: []claudetest.Turn{
		claudetest.Tools(bash(id+"1", cmd)),
		claudetest.Tools(bash(id+"2", cmd)),
		claudetest.Text("done"),
	}}, func(p *Proxy) { p.OnToolResult(id+"1", e.approveOnly) })
	wantDenied(t, api, id+"1", "no_grant")
	wantRan(t, api, id+"2")
	if got := e.read("runs.txt"); got != word+"\n" {
		t.Errorf("runs.txt = %q; want the approved call to have run once", got)
	}
}

// run runs the client once in the project against script, with prep
// registering proxy steps first. It fails the test when the client does not
// exit 0 or a proxy step failed.
func (e *env) run(script claudetest.Script, prep func(p *Proxy), args ...string) (*claudetest.FakeAPI, *Proxy) {
	t := e.t
	t.Helper()
	api := claudetest.NewFakeAPI(t, script)
	p, err := StartProxy(api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if prep != nil {
		prep(p)
	}
	debug := filepath.Join(t.TempDir(), "client-debug.txt")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(debug)
			t.Logf("client debug log (tail):\n%s", claudetest.Tail(string(b), 40))
		}
	})
	res := claudetest.Run(t, claudetest.Options{
		Claude: e.claude, API: api, Dir: e.Dir, Home: e.g.Home, Args: append(args, "--debug-file", debug),
		Env: append(append(e.g.ClientEnv(), e.clientEnv...), "ANTHROPIC_BASE_URL="+p.URL()),
	})
	if res.ExitCode != 0 {
		t.Fatalf("claude exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("%v\ntool results: %+v", err, p.Results())
	}
	return api, p
}

// approveOnly approves the one pending call at a pseudo-terminal.
func (e *env) approveOnly() error { return e.g.ApproveOnly(e.ctx) }

func (e *env) path(name string) string { return filepath.Join(e.Dir, name) }

func (e *env) exists(name string) bool {
	_, err := os.Stat(e.path(name))
	return err == nil
}

func (e *env) read(name string) string {
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func bash(id, command string) claudetest.ToolCall {
	return claudetest.Call(id, "Bash", map[string]any{"command": command, "description": "test command"})
}

func result(t *testing.T, api *claudetest.FakeAPI, id string) claudetest.ToolResult {
	t.Helper()
	r, ok := api.ToolResult(id)
	if !ok {
		t.Fatalf("no tool_result for %s; tool results: %+v", id, api.ToolResults())
	}
	return r
}

// wantDenied checks that the client reported call id as refused by loopguard
// with reason.
func wantDenied(t *testing.T, api *claudetest.FakeAPI, id, reason string) claudetest.ToolResult {
	t.Helper()
	r := result(t, api, id)
	if !r.IsError || !strings.Contains(r.Content, "loopguard: "+reason) {
		t.Errorf("tool_result %s = %+v; want an error from loopguard with reason %s", id, r, reason)
	}
	return r
}

// wantRan checks that the client reported call id as run.
func wantRan(t *testing.T, api *claudetest.FakeAPI, id string) {
	t.Helper()
	if r := result(t, api, id); r.IsError {
		t.Errorf("tool_result %s is an error: %q", id, r.Content)
	}
}

// sessionID is a fresh UUID for --session-id.
func sessionID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
