// Package loopguard drives the loopguard binary in end-to-end runs of the
// real Claude Code client: it builds the binary, runs its CLI with a private
// state directory, plays the human at a pseudo-terminal (approve, grant), and
// fronts the fake Messages API with a proxy that can hold the conversation
// until the human has acted.
//
// It needs a Secret Service session (run under scripts/with-keyring). The
// package's tests are the real-client tests of the guard; e2e/demo uses the
// same helpers. Nothing here prints or exits.
package loopguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopguard/loopguard/internal/keyringtest"
)

// cliTimeout bounds one loopguard CLI run.
const cliTimeout = 30 * time.Second

// ErrNoKeyring is returned when there is no session bus to reach the OS
// keyring through.
var ErrNoKeyring = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is empty): run under scripts/with-keyring, as make test and make demo do")

// Build builds ./cmd/loopguard, ./cmd/loopguard-hook, ./cmd/loopguard-exec
// and ./cmd/loopguard-confine of the module at repo into dir, as make build
// does, and returns loopguard's path: init
// then registers loopguard-hook, so the real clients run the hook binary
// users have.
func Build(ctx context.Context, repo, dir string, tags ...string) (string, error) {
	if _, err := goBuild(ctx, repo, filepath.Join(dir, "loopguard-hook"), "./cmd/loopguard-hook", tags...); err != nil {
		return "", err
	}
	if _, err := goBuild(ctx, repo, filepath.Join(dir, "loopguard-exec"), "./cmd/loopguard-exec", tags...); err != nil {
		return "", err
	}
	if _, err := goBuild(ctx, repo, filepath.Join(dir, "loopguard-confine"), "./cmd/loopguard-confine", tags...); err != nil {
		return "", err
	}
	return goBuild(ctx, repo, filepath.Join(dir, "loopguard"), "./cmd/loopguard", tags...)
}

// Setup builds loopguard into dir (Build) and, in a real keyring session,
// creates the key once, before tests run in parallel: concurrent first
// inits would race to create it. It returns the binary.
func Setup(ctx context.Context, repo, dir string) (string, error) {
	bin, err := Build(ctx, repo, dir)
	if err != nil || !keyringtest.Real() {
		return bin, err
	}
	g, err := NewGuard(bin, filepath.Join(dir, "keyinit"))
	if err != nil {
		return "", err
	}
	proj := filepath.Join(dir, "keyinit", "project")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return "", err
	}
	return bin, g.Init(ctx, proj)
}

// BuildMCP builds the fake bank MCP server (e2e/mcpfake) into dir.
func BuildMCP(ctx context.Context, repo, dir string) (string, error) {
	return goBuild(ctx, repo, filepath.Join(dir, "mcpfake"), "./e2e/mcpfake")
}

func goBuild(ctx context.Context, repo, out, pkg string, tags ...string) (string, error) {
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	// As make build and make install build it (static: no dynamic loader
	// on the hook's path), so that what the tests drive, and what
	// TestJailCallCost times, is what users run.
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("failed to build %s: %w: %s", pkg, err, bytes.TrimSpace(b))
	}
	return out, nil
}

// Guard is one loopguard installation: a binary, a HOME and a state
// directory of its own. The OS keyring (and so the key) is shared.
type Guard struct {
	Bin   string // loopguard executable
	Home  string // HOME for the CLI and the client (claudetest.Options.Home)
	State string // XDG_STATE_HOME; the state lives in State/loopguard
	// Extra is passed to the client (and so to the hook and Bash) too.
	Extra []string
}

// NewGuard makes a guard whose HOME and state live under root.
func NewGuard(bin, root string) (*Guard, error) {
	g := &Guard{Bin: bin, Home: filepath.Join(root, "home"), State: filepath.Join(root, "state")}
	for _, d := range []string{g.Home, g.State} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("failed to create %s: %w", d, err)
		}
	}
	return g, nil
}

// passEnv are the variables the keyring needs, taken from this process.
var passEnv = []string{"DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"}

// ClientEnv is what the client must pass on to the hook (claudetest.Options.Env);
// claudetest.Run sets HOME itself.
func (g *Guard) ClientEnv() []string {
	env := append([]string{"XDG_STATE_HOME=" + g.State}, g.Extra...)
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Env is the CLI's environment: a human's shell, not inside an agent.
func (g *Guard) Env() []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + g.Home, "NO_COLOR=1", "TERM=dumb"}, g.ClientEnv()...)
}

// Command returns the loopguard CLI command args, run in dir.
func (g *Guard) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.Bin, args...)
	cmd.Dir = dir
	cmd.Env = g.Env()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs the CLI in dir and returns its stdout; a non-zero exit is an
// error carrying stderr.
func (g *Guard) Run(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := g.Command(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("loopguard %s: %w\nstdout: %s\nstderr: %s",
			strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String(), nil
}

// Init runs `loopguard init --project` in dir: it creates the key if there is
// none and registers the hooks in dir/.claude/settings.json.
func (g *Guard) Init(ctx context.Context, dir string) error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return ErrNoKeyring
	}
	_, err := g.Run(ctx, dir, "init", "--project", "--wait", "0", "--no-jail")
	return err
}

// Pending is one row of `loopguard pending --json`.
type Pending struct {
	ID        string `json:"id"`
	Session   string `json:"session"`
	Agent     string `json:"agent"`
	AgentType string `json:"agent_type"`
	Tool      string `json:"tool"`
	Reason    string `json:"reason"`
	Status    string `json:"status"`
	State     string `json:"state"` // for people: "held, 1m50s left", ...
	Digest    string `json:"digest"`
	Summary   string `json:"summary"`
}

// Pending lists the open pending calls, newest first.
func (g *Guard) Pending(ctx context.Context) ([]Pending, error) {
	out, err := g.Run(ctx, g.Home, "pending", "--json")
	if err != nil {
		return nil, err
	}
	var rows []Pending
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		return nil, fmt.Errorf("pending --json is not a JSON list: %w: %s", err, out)
	}
	return rows, nil
}

// OnlyPending returns the one open pending call; anything else is an error.
func (g *Guard) OnlyPending(ctx context.Context) (Pending, error) {
	rows, err := g.Pending(ctx)
	if err != nil {
		return Pending{}, err
	}
	if len(rows) != 1 {
		return Pending{}, fmt.Errorf("want exactly one pending call, have %d: %+v", len(rows), rows)
	}
	return rows[0], nil
}

// ApproveOnly approves the one open pending call at a pseudo-terminal.
func (g *Guard) ApproveOnly(ctx context.Context) error {
	p, err := g.OnlyPending(ctx)
	if err != nil {
		return err
	}
	_, err = g.Approve(ctx, p)
	return err
}

// Show returns `loopguard show ID`: the full call as a human reviews it.
func (g *Guard) Show(ctx context.Context, id string) (string, error) {
	return g.Run(ctx, g.Home, "show", id)
}

// Deny refuses pending call id.
func (g *Guard) Deny(ctx context.Context, id string) error {
	_, err := g.Run(ctx, g.Home, "deny", id)
	return err
}

// confirmPrompt is what approve and grant print before reading the answer.
const confirmPrompt = "Type the first 8 characters of the digest"

// Approve approves pending call p as a human at a terminal: it runs
// `loopguard approve ID` on a pseudo-terminal, types the first 8 characters
// of the digest and expects "Approved". It returns the screen.
func (g *Guard) Approve(ctx context.Context, p Pending) (string, error) {
	if len(p.Digest) < 8 {
		return "", fmt.Errorf("pending %s has no digest", p.ID)
	}
	screen, err := g.onTTY(ctx, g.Home, func(string) (string, error) { return p.Digest[:8], nil }, "approve", p.ID)
	if err != nil {
		return screen, err
	}
	if !strings.Contains(screen, "Approved "+p.ID) {
		return screen, fmt.Errorf("approve %s did not say Approved:\n%s", p.ID, screen)
	}
	return screen, nil
}

// Grant runs `loopguard grant ARGS...` in the project dir as a human at a
// terminal, reading the digest it shows ("digest:  <hex>") and typing its
// first 8 characters. It returns the screen.
func (g *Guard) Grant(ctx context.Context, dir string, args ...string) (string, error) {
	screen, err := g.onTTY(ctx, dir, func(screen string) (string, error) {
		_, rest, ok := strings.Cut(screen, "digest:")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 || len(fields[0]) != 64 {
			return "", fmt.Errorf("no digest on the screen:\n%s", screen)
		}
		return fields[0][:8], nil
	}, append([]string{"grant"}, args...)...)
	if err != nil {
		return screen, err
	}
	if !strings.Contains(screen, "Granted ") {
		return screen, fmt.Errorf("grant did not say Granted:\n%s", screen)
	}
	return screen, nil
}

// onTTY runs the CLI on a new pseudo-terminal as its controlling terminal,
// waits for the confirmation prompt, types answer(screen) and a newline, and
// waits for the process to end. It returns everything the terminal showed.
func (g *Guard) onTTY(ctx context.Context, dir string, answer func(screen string) (string, error), args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Bin, args...)
	cmd.Dir = dir
	cmd.Env = g.Env()
	t, err := startOnPTY(cmd)
	if err != nil {
		return "", err
	}
	defer t.close()
	what := "loopguard " + strings.Join(args, " ")
	screen, err := t.waitFor(ctx, confirmPrompt)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return t.screen(), fmt.Errorf("%s: no confirmation prompt: %w\nscreen:\n%s", what, err, screen)
	}
	typed, err := answer(screen)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return screen, err
	}
	if err := t.write(typed + "\n"); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return screen, fmt.Errorf("%s: failed to type on the terminal: %w", what, err)
	}
	werr := cmd.Wait()
	screen = t.drain()
	if werr != nil {
		return screen, fmt.Errorf("%s: %w\nscreen:\n%s", what, werr, screen)
	}
	return screen, nil
}

// AuditEntry is one line of `loopguard audit --json`.
type AuditEntry struct {
	Event    string `json:"event"`
	Session  string `json:"session"`
	Agent    string `json:"agent"`
	Tool     string `json:"tool"`
	Digest   string `json:"digest"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Grant    string `json:"grant"`
	Pending  string `json:"pending"`
}

// Audit returns the whole audit log, oldest first.
func (g *Guard) Audit(ctx context.Context) ([]AuditEntry, error) {
	out, err := g.Run(ctx, g.Home, "audit", "--json", "-n", "0")
	if err != nil {
		return nil, err
	}
	var entries []AuditEntry
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, fmt.Errorf("audit --json line is not JSON: %w: %s", err, line)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// LastDecision returns the newest audit entry of the hook for event.
func (g *Guard) LastDecision(ctx context.Context, event string) (AuditEntry, error) {
	entries, err := g.Audit(ctx)
	if err != nil {
		return AuditEntry{}, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Event == event {
			return entries[i], nil
		}
	}
	return AuditEntry{}, fmt.Errorf("no %s decision in the audit log", event)
}
