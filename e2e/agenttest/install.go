//go:build unix

// Package agenttest drives other coding agents' real clients (Codex CLI,
// Gemini CLI, Copilot CLI, Qwen Code, OpenCode) in tests, in the style of e2e/claudetest: it installs a pinned
// client with npm into a cache folder, serves a scripted fake model API on
// loopback (OpenAI's Responses API for Codex, the Gemini API for Gemini
// CLI), and runs the client non-interactively against it.
//
// The package is test support; nothing here prints or exits.
package agenttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
	"github.com/loopguard/loopguard/fsx"
)

// Client is one pinned npm client.
type Client struct {
	Name    string // cache sub-folder
	Package string // npm package
	Version string // exact version
	Bin     string // executable in node_modules/.bin
}

// The pinned clients.
var (
	Codex  = Client{Name: "codex", Package: "@openai/codex", Version: "0.171.0", Bin: "codex"}
	Gemini = Client{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini"}
	// Copilot CLI runs offline against a custom model provider (BYOK).
	Copilot = Client{Name: "copilot", Package: "@github/copilot", Version: "1.0.102", Bin: "copilot"}
	// Qwen Code and OpenCode run against a fake Chat Completions API.
	Qwen     = Client{Name: "qwen", Package: "@qwen-code/qwen-code", Version: "0.24.4", Bin: "qwen"}
	OpenCode = Client{Name: "opencode", Package: "opencode-ai", Version: "1.18.33", Bin: "opencode"}
)

// CacheEnv names the environment variable that overrides the cache folder
// (one sub-folder per client).
const CacheEnv = "LOOPGUARD_AGENTS_CACHE"

// CacheDir returns $LOOPGUARD_AGENTS_CACHE, or <repo>/.cache/agents.
func CacheDir() (string, error) { return claudetest.Cache(CacheEnv, "agents") }

var (
	installMu sync.Mutex
	installed = map[string]string{} // dir: executable checked in this process
)

// Install ensures c is installed in the cache and returns its executable. It
// fails the test when it cannot be installed; it never skips.
func Install(t testing.TB, c Client) string {
	t.Helper()
	dir, err := CacheDir()
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	bin, err := c.InstallIn(filepath.Join(dir, c.Name))
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	t.Logf("%s client %s (%s)", c.Name, c.Version, bin)
	return bin
}

// InstallIn installs c into dir with npm (claudetest.NPMInstall) unless
// the installed executable already reports the pinned version.
func (c Client) InstallIn(dir string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	if bin, ok := installed[dir]; ok {
		return bin, nil
	}
	bin := filepath.Join(dir, "node_modules", ".bin", c.Bin)
	pinned := func() error {
		v, err := c.version(bin)
		if err == nil && !strings.Contains(v, c.Version) {
			err = fmt.Errorf("%s reports version %q, not %s", bin, v, c.Version)
		}
		return err
	}
	if err := claudetest.NPMInstall(dir, pinned, "--no-save", c.Package+"@"+c.Version); err != nil {
		return "", err
	}
	installed[dir] = bin
	return bin, nil
}

func (c Client) version(bin string) (string, error) {
	// Node clients start slowly on a loaded machine (make test runs every
	// package at once).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", bin, err, claudetest.Tail(string(out), 5))
	}
	return strings.TrimSpace(string(out)), nil
}

// Result is what one client run produced.
type Result = claudetest.Result

// SeedOpenCode installs, once, the package OpenCode installs into its config
// directory before it loads plugins (@opencode-ai/plugin at the client's
// version, exactly as OpenCode pins it) into the cache, and returns the
// folder to copy into a config directory (WriteOpenCodeConfig).
func SeedOpenCode(t testing.TB) string {
	t.Helper()
	dir, err := CacheDir()
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	seed := filepath.Join(dir, OpenCode.Name, "config-seed-"+OpenCode.Version)
	installMu.Lock()
	defer installMu.Unlock()
	plugin := filepath.Join(seed, "node_modules", "@opencode-ai", "plugin", "package.json")
	if _, err := os.Stat(plugin); err == nil {
		return seed
	}
	pkg := fmt.Sprintf(`{"dependencies":{"@opencode-ai/plugin":%q}}`, OpenCode.Version)
	if err := os.MkdirAll(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	// Atomic: another test process may be installing from it.
	if err := fsx.WriteFile(filepath.Join(seed, "package.json"), []byte(pkg+"\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if err := claudetest.NPMInstall(seed, func() error { _, err := os.Stat(plugin); return err }); err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	_ = os.Remove(filepath.Join(seed, ".install.lock"))
	return seed
}
