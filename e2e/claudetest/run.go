package claudetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// DefaultTimeout bounds one client run when Options.Timeout is zero.
const DefaultTimeout = 90 * time.Second

// Options describes one non-interactive client run.
type Options struct {
	Claude  string        // client executable, from Install
	API     *FakeAPI      // fake API the client talks to
	Dir     string        // project folder, the client's working directory
	Prompt  string        // the -p prompt; "go" when empty
	Args    []string      // extra client arguments, e.g. "--mcp-config", path
	Env     []string      // extra environment, KEY=VALUE; later entries win
	Home    string        // HOME and CLAUDE_CONFIG_DIR parent; a temp folder when empty
	Timeout time.Duration // DefaultTimeout when zero
}

// Result is what one client run produced.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int // -1 when the run was killed at its timeout
	TimedOut bool
	Duration time.Duration
	// CPU is the client's user and system time with that of the processes
	// it waited for (its hooks, its sandbox's), from wait4.
	CPU time.Duration
}

// Events decodes the stream-json lines of Stdout, skipping lines that are
// not JSON objects.
func (r Result) Events() []map[string]any {
	var out []map[string]any
	for _, line := range bytes.Split([]byte(r.Stdout), []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// Run runs `claude -p PROMPT --output-format stream-json --verbose` in
// opts.Dir against opts.API. It fails the test only when the client cannot be
// started; a non-zero exit is reported in Result.
func Run(t testing.TB, opts Options) Result {
	t.Helper()
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	res, err := RunClient(context.Background(), opts)
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	t.Logf("claude run: exit %d in %v (timed out: %v)", res.ExitCode, res.Duration.Round(time.Millisecond), res.TimedOut)
	if res.ExitCode != 0 {
		t.Logf("claude stderr (tail):\n%s", Tail(res.Stderr, 20))
	}
	return res
}

// RunClient is Run without a testing.TB; opts.Home must be set.
func RunClient(ctx context.Context, opts Options) (Result, error) {
	if opts.Claude == "" || opts.API == nil || opts.Dir == "" || opts.Home == "" {
		return Result{}, errors.New("run options need Claude, API, Dir and Home")
	}
	if opts.Prompt == "" {
		opts.Prompt = "go"
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	cfg := filepath.Join(opts.Home, ".claude")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		return Result{}, fmt.Errorf("failed to create config folder: %w", err)
	}
	args := append([]string{"-p", opts.Prompt, "--output-format", "stream-json", "--verbose"}, opts.Args...)
	cmd := exec.Command(opts.Claude, args...)
	cmd.Dir = opts.Dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + opts.Home,
		"CLAUDE_CONFIG_DIR=" + cfg,
		"TMPDIR=" + os.TempDir(),
		"TERM=dumb",
		"ANTHROPIC_BASE_URL=" + opts.API.URL(),
		"ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}, opts.Env...)
	return RunCmd(ctx, cmd, opts.Timeout)
}

// RunCmd runs cmd (a client) until it exits or timeout passes, when its
// whole process group is killed (Result.TimedOut), and returns what it
// produced; a non-zero exit is reported in Result.
func RunCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	startGroup(cmd)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("failed to run %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		err = <-done
	}
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		res.CPU = ps.UserTime() + ps.SystemTime()
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.TimedOut = true
		res.ExitCode = -1
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return res, fmt.Errorf("failed to run %s: %w", cmd.Path, err)
	}
	return res, nil
}

// WriteSettings writes dir/.claude/settings.json registering hooksJSON, the
// JSON object that goes under the "hooks" key.
func WriteSettings(dir string, hooksJSON string) error {
	if !json.Valid([]byte(hooksJSON)) {
		return errors.New("hooks JSON is not valid JSON")
	}
	settings := map[string]json.RawMessage{"hooks": json.RawMessage(hooksJSON)}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to encode settings: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		return fmt.Errorf("failed to create .claude folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("failed to write settings: %w", err)
	}
	return nil
}
