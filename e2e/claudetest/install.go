// Package claudetest drives the real Claude Code client in tests: it installs
// a pinned client with npm, serves a scripted fake Messages API on loopback,
// and runs the client in non-interactive mode against it.
//
// The package is test support. Functions that take a testing.TB fail the test
// on error; the error-returning forms exist for programs such as e2e/record.
package claudetest

import (
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
const Version = "2.1.332"

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
	bin, err := InstallCached()
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

// InstallCached is InstallIn of the cache folder (CacheDir).
func InstallCached() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return InstallIn(dir)
}

// CacheDir returns $LOOPGUARD_CACHE, or <repo>/.cache/claude-code.
func CacheDir() (string, error) { return Cache(CacheEnv, "claude-code") }

// Cache returns the folder the environment variable env names, or
// <repo>/.cache/name where <repo> is the nearest parent folder of the
// working directory holding go.mod.
func Cache(env, name string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return filepath.Abs(d)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", name), nil
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

// InstallIn installs the pinned client into dir with npm (NPMInstall)
// unless it is there already (Installed), and returns its executable.
func InstallIn(dir string) (string, error) {
	var bin string
	err := NPMInstall(dir, func() (err error) { bin, err = Installed(dir); return err }, "--no-save", Package)
	return bin, err
}

// Installed returns the client installed in dir when it reports the
// pinned version.
func Installed(dir string) (string, error) {
	bin := filepath.Join(dir, "node_modules", ".bin", "claude")
	v, err := ClientVersion(bin)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(v, Version+" ") {
		return "", fmt.Errorf("%s reports version %q, not %s", bin, v, Version)
	}
	return bin, nil
}

// NPMInstall makes dir hold an npm install, once across parallel test
// processes: under a file lock on dir, unless installed already holds, it
// runs `npm install` of args (a package spec, or none for dir's
// package.json) into dir, after which installed must hold. installed says
// what is missing.
func NPMInstall(dir string, installed func() error, args ...string) error {
	installMu.Lock()
	defer installMu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create cache folder: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return fmt.Errorf("failed to lock cache folder: %w", err)
	}
	defer unlock()
	if installed() == nil {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return ErrNoNPM
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ErrNoNPM
	}
	what := strings.Join(append([]string{"npm install"}, args...), " ")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s into %s failed: %w\nnpm output (tail):\n%s", what, dir, err, Tail(string(out), 40))
	}
	if err := installed(); err != nil {
		return fmt.Errorf("%s into %s ran, but: %w\nnpm output (tail):\n%s", what, dir, err, Tail(string(out), 40))
	}
	return nil
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
