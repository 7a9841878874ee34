// Package cli is what loopguard's verb families (the root command's
// verbs and the packages beside this one, as gh keeps one folder per
// command) share: exit codes and errors with a hint, the configuration,
// the key and the audit log as a command opens them, this binary's path
// and build, where loopguard is registered for each agent, and the paths
// the sandbox settings name.
package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loopguard/loopguard/agents/gemini"
	"github.com/loopguard/loopguard/agents/qwen"
	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/keyring"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// LoadConfig reads the user's configuration (defaults when there is none).
func LoadConfig() (config.Config, error) {
	_, c, err := LoadConfigPath()
	return c, err
}

// LoadConfigPath is LoadConfig, with where the file is (to save it back).
func LoadConfigPath() (string, config.Config, error) {
	path, err := config.DefaultPath()
	if err != nil {
		return "", config.Config{}, err
	}
	c, _, err := config.Load(path)
	return path, c, err
}

// BackupDir is where init keeps, in the state directory stateDir, what it
// needs to undo a registration (install.Apply's backup records), and where
// uninstall and doctor look for them.
func BackupDir(stateDir string) string { return filepath.Join(stateDir, "install") }

// AuditLog is the audit log, with the entries the hook wrote without its
// lock (its deadline) moved into the chain first.
func AuditLog(st *state.Store) *audit.Log {
	l := audit.Open(filepath.Join(st.Dir, "audit"))
	_ = l.Drain()
	return l
}

// KeyringCtx bounds one keyring call of a command a human runs
// (keyring.CommandTimeout; the hook keeps keyring.DefaultTimeout).
func KeyringCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, keyring.CommandTimeout)
}

// LoadMaster reads the master key from the OS keyring, bounded in time.
func LoadMaster(ctx context.Context) ([]byte, error) {
	ctx, cancel := KeyringCtx(ctx)
	defer cancel()
	return keyring.Load(ctx)
}

// HintError is an error with advice for a person.
type HintError struct {
	err  error
	hint string
}

func (e *HintError) Error() string { return e.err.Error() }

func (e *HintError) Unwrap() error { return e.err }

func (e *HintError) Hint() string { return e.hint }

func WithHint(err error, hint string) error { return &HintError{err: err, hint: hint} }

// SettingsEnv is where the Claude Code settings files are looked for.
func SettingsEnv() (install.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return install.Env{}, fmt.Errorf("failed to find the home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return install.Env{}, fmt.Errorf("failed to find the working directory: %w", err)
	}
	return install.Env{Home: home, ConfigDir: os.Getenv("CLAUDE_CONFIG_DIR"), Cwd: cwd, CodexHome: os.Getenv("CODEX_HOME")}, nil
}

// SelfPath is the absolute, symlink-resolved path of this binary.
func SelfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("failed to find this binary's path: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Abs(p)
}

func ProjectDir() string {
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

// RuleDanger reads one command's DANGER lines as the engine does, in the
// project the grant is made in.
func RuleDanger(project string) func(argv []string) []string {
	return func(argv []string) []string { return present.ArgvDanger(argv, project, project) }
}

// CodexTrustStep is how the user makes Codex run loopguard's hooks: Codex
// runs a user or project hook only once it is trusted, and asks at start.
func CodexTrustStep(project bool) string {
	where := "start `codex` (anywhere)"
	if project {
		where = "start `codex` in this project"
	}
	return "Codex runs loopguard's hooks only once you trust them: " + where +
		"; at \"Hooks need review\" choose \"Trust all and continue\" (or type /hooks, select loopguard's hooks and trust them). Codex records the trust in its config.toml; trust again after every loopguard init, which changes the hooks."
}

// ShellToolAgents are the agents whose settings can put loopguard's own
// shell tool in front of every shell command.
var ShellToolAgents = map[string]bool{gemini.Name: true, qwen.Name: true}

// OpenCodeConfig is the user's opencode.json beside the plugin directory
// that holds pluginPath (~/.config/opencode/plugin/loopguard.js).
func OpenCodeConfig(pluginPath string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(pluginPath)), "opencode.json")
}
