// Package claudetest drives the real Claude Code client in tests: it installs
// a pinned client with npm, serves a scripted fake Messages API on loopback,
// and runs the client in non-interactive mode against it.
//
// The package is test support. Functions that take a testing.TB fail the test
// on error; the error-returning forms exist for programs such as e2e/record.
package claudetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the pinned Claude Code client version.
const Version = "2.1.328"

// Package is the npm package spec that Install installs.
const Package = "@anthropic-ai/claude-code@" + Version

// CacheEnv names the environment variable that overrides the cache folder.
const CacheEnv = "LOOPGUARD_CACHE"

// ErrNoNPM is returned when npm (or node) is not on PATH.
var ErrNoNPM = errors.New("npm not found on PATH: the real-client tests need node and npm (Debian: apt-get install nodejs npm)")

var installMu sync.Mutex

// Install ensures the pinned client is installed in the cache folder and
// returns the path of its claude executable. It fails the test, with the tail
// of npm's output, when the client cannot be installed; it never skips.
func Install(t testing.TB) string {
	t.Helper()
	dir, err := CacheDir()
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	bin, err := InstallIn(dir)
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	v, err := ClientVersion(bin)
	if err != nil {
		t.Fatalf("claudetest: %v", err)
	}
	t.Logf("claude client %s (%s)", v, bin)
	return bin
}

// CacheDir returns $LOOPGUARD_CACHE, or <repo>/.cache/claude-code where
// <repo> is the nearest parent folder of the working directory holding
// go.mod.
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Abs(d)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "claude-code"), nil
}

// RepoRoot returns the nearest parent of the working directory holding go.mod.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("failed to get working directory: %w", err)
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
		d = parent
	}
}

// InstallIn installs the pinned client into dir with npm unless the installed
// executable already reports the pinned version, and returns its path. It
// holds a file lock on dir so that parallel test processes install once.
func InstallIn(dir string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("failed to create cache folder: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return "", fmt.Errorf("failed to lock cache folder: %w", err)
	}
	defer unlock()

	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	if v, err := ClientVersion(bin); err == nil && strings.HasPrefix(v, Version+" ") {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", ErrNoNPM
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", ErrNoNPM
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund",
		"--no-save", "--prefix", dir, Package)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("failed to install %s with npm into %s: %w\nnpm output (tail):\n%s",
			Package, dir, err, Tail(out.String(), 40))
	}
	v, err := ClientVersion(bin)
	if err != nil {
		return "", fmt.Errorf("installed %s but the client does not run: %w\nnpm output (tail):\n%s",
			Package, err, Tail(out.String(), 40))
	}
	if !strings.HasPrefix(v, Version+" ") {
		return "", fmt.Errorf("installed %s but the client reports version %q", Package, v)
	}
	return bin, nil
}

// ClientVersion runs `claude --version` and returns its trimmed output.
func ClientVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(),
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("failed to run %s --version: %w: %s", bin, err, Tail(string(out), 5))
	}
	return strings.TrimSpace(string(out)), nil
}

// Tail is the last n lines of s (a command's output, for an error).
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
