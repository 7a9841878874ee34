//go:build unix

package agenttest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loopguard/loopguard/internal/keyringtest"
)

// Agent is one client as its e2e package drives it. What differs between
// the clients is a field here; the run and the scenarios (scenario.go) are
// shared.
type Agent struct {
	Name  string // `loopguard init --agent Name`, and the client in messages
	Title string // the client as a person names it ("Qwen Code")
	// Client is the pinned npm package.
	Client Client
	// Prepare, when set, writes the client's own settings in the new HOME
	// before loopguard registers there.
	Prepare func(home string) error
	// NewAPI starts the fake model API the client speaks.
	NewAPI func(testing.TB, Script) *FakeAPI
	// Tool and Arg name the shell tool the fake model asks for, when not
	// the API's default (Script.Tool).
	Tool, Arg string
	// Configure, when set, points the client at api before each run.
	Configure func(e *Env, api *FakeAPI) error
	// Start runs the client once (Run.Codex, Run.Gemini...).
	Start func(Run, context.Context) (Result, error)
	// Hooks is the file, under HOME, that holds loopguard's registration.
	Hooks string
	// Refused are the words of the client's report of a call that say it
	// did not run.
	Refused []string

	lgBin    string
	setupErr error
}

// Main is the package's TestMain (see the function Main).
func (a *Agent) Main(m *testing.M) { Main(m, a.Name, &a.lgBin, &a.setupErr) }

// NewEnv installs the client and makes a project where loopguard is
// registered for it with `loopguard init --agent`.
func (a *Agent) NewEnv(t *testing.T) *Env { return a.newEnv(t, a.Name, "--no-jail") }

// NewJailedEnv is NewEnv with init's defaults, the jail grant included:
// every Bash call no narrower grant covers runs in the jail without a
// decision where the agent runs loopguard's input rewrite.
func (a *Agent) NewJailedEnv(t *testing.T) *Env { return a.newEnv(t, a.Name) }

// NewBareEnv is NewEnv with nothing registered: the test registers what it
// needs.
func (a *Agent) NewBareEnv(t *testing.T) *Env { return a.newEnv(t, "") }

func (a *Agent) newEnv(t *testing.T, register string, initFlags ...string) *Env {
	t.Helper()
	keyringtest.Require(t)
	if a.setupErr != nil {
		t.Fatalf("setup: %v", a.setupErr)
	}
	bin := Install(t, a.Client)
	e := NewEnv(t, a.lgBin, register, a.Prepare, initFlags...)
	e.Agent, e.Client = a, bin
	return e
}

// HooksFile is the file that holds loopguard's registration.
func (e *Env) HooksFile() string { return filepath.Join(e.G.Home, e.Agent.Hooks) }

// Run plays s through one run of the client (args added to its command
// line) and fails the test unless the client exited 0 and reported the
// outcome of every call.
func (e *Env) Run(s Script, args ...string) *FakeAPI { return e.run(s, args, true) }

// RunAnyExit is Run for a client that may exit non-zero once it has
// reported every call.
func (e *Env) RunAnyExit(s Script, args ...string) *FakeAPI { return e.run(s, args, false) }

func (e *Env) run(s Script, args []string, wantExit0 bool) *FakeAPI {
	t, a := e.T, e.Agent
	t.Helper()
	if s.Tool == "" {
		s.Tool, s.Arg = a.Tool, a.Arg
	}
	api := a.NewAPI(t, s)
	if a.Configure != nil {
		if err := a.Configure(e, api); err != nil {
			t.Fatal(err)
		}
	}
	r := Run{Bin: e.Client, API: api, Home: e.G.Home, Dir: e.Dir, Env: e.G.ClientEnv(), Args: args}
	res, err := a.Start(r, e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: exit %d in %v", a.Name, res.ExitCode, res.Duration)
	if wantExit0 && res.ExitCode != 0 {
		t.Fatalf("%s exit %d\nstdout: %s\nstderr: %s", a.Name, res.ExitCode, res.Stdout, res.Stderr)
	}
	if got := len(api.Outputs()); got != len(s.Commands) {
		t.Fatalf("the client reported %d of %d calls: %q\nstdout: %s\nstderr: %s", got, len(s.Commands), api.Outputs(), res.Stdout, res.Stderr)
	}
	return api
}

// ApproveAfter is a Script.Between that plays the human: after call i it
// approves the one pending call at a pseudo-terminal.
func (e *Env) ApproveAfter(i int) func(int, string) {
	return func(j int, _ string) {
		if j != i {
			return
		}
		if err := e.ApproveOnly(); err != nil {
			e.T.Error(err)
		}
	}
}
