package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loopguard/loopguard/config"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/install"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/state"
)

// sandboxPaths are the paths the sandbox settings name, resolved for this
// user: what sandboxed commands may not write or read, and the sandbox-only
// Go build cache they may write.
type sandboxPaths struct {
	home      string
	state     string   // loopguard's state directory
	config    string   // loopguard's config directory
	binary    string   // this binary
	hook      string   // loopguard-hook beside it, when installed ("": not)
	launchers []string // loopguard-exec beside it, and a stale loopguard-launch (policy.Retired), those installed
	keyrings  string   // the Secret Service's keyring files
	goCache   string   // the Go build cache of sandboxed commands
	undo      string   // the launcher's undo records (policy.UndoDir), which it writes from inside the sandbox
	// vaultToken is the Vault backend's token file (the config's
	// token_file, or ~/.vault-token when that is the one in use); "" with
	// the keyring.
	vaultToken string
	// exclude are the sandbox.excludedCommands entries of the
	// escalations (confine.Exclusions: the network form, the unconfined
	// form), written only with two-phase enforcement; none without it.
	exclude []string
}

func resolveSandboxPaths(bin string) (sandboxPaths, error) {
	var p sandboxPaths
	var err error
	if p.home, err = os.UserHomeDir(); err != nil {
		return p, fmt.Errorf("failed to find the home directory: %w", err)
	}
	if p.state, err = state.DefaultDir(); err != nil {
		return p, err
	}
	cfg, err := config.DefaultPath()
	if err != nil {
		return p, err
	}
	p.config = filepath.Dir(cfg)
	if c, err := loadConfig(); err == nil && c.Backend == config.BackendVault && c.Vault != nil {
		p.vaultToken = c.Vault.WithDefaults(p.home).TokenFile
	}
	p.binary = bin
	// loopguard-hook beside it is denied too whenever it is there, registered
	// or not: a stale one is still a binary init or a user may register.
	if _, hook := policy.Binaries(bin); hook != bin {
		if fi, err := os.Stat(hook); err == nil && !fi.IsDir() {
			p.hook = hook
		}
	}
	for _, l := range append([]string{policy.Launcher(bin)}, policy.Retired(bin)...) {
		if fi, err := os.Stat(l); err == nil && !fi.IsDir() && l != bin {
			p.launchers = append(p.launchers, l)
		}
	}
	data := filepath.Join(p.home, ".local", "share")
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		data = x
	}
	p.keyrings = filepath.Join(data, "keyrings")
	cache := filepath.Join(p.home, ".cache")
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		cache = x
	}
	// Never the user's own cache: the agent could plant build results there
	// that the user's unsandboxed builds would trust.
	p.goCache = filepath.Join(cache, "loopguard-sandbox", "go-build")
	p.undo = policy.UndoDir(p.state)
	return p, nil
}

// denyWrite is what sandboxed commands may not write, as settings entries.
func (p sandboxPaths) denyWrite() []string {
	sp := install.SandboxPath
	out := []string{sp(p.state), sp(p.config), sp(p.binary)}
	if p.hook != "" {
		out = append(out, sp(p.hook))
	}
	for _, l := range p.launchers {
		out = append(out, sp(l))
	}
	out = append(out, sp(p.keyrings))
	if p.vaultToken != "" {
		out = append(out, sp(p.vaultToken))
	}
	return out
}

// denyRead is what sandboxed commands may not read: loopguard's state, the
// keyring files, and under the Vault backend this machine's Vault token
// (read, it would leave with the next commit of the project).
func (p sandboxPaths) denyRead() []string {
	sp := install.SandboxPath
	out := []string{sp(p.state), sp(p.keyrings)}
	if p.vaultToken != "" {
		out = append(out, sp(p.vaultToken))
	}
	return out
}

// secrets names what denyRead hides, for a message.
func (p sandboxPaths) secrets() string {
	if p.vaultToken != "" {
		return p.state + ", " + p.keyrings + " or the Vault token " + p.vaultToken
	}
	return p.state + " or " + p.keyrings
}

// binaries names the loopguard binaries for a message.
func (p sandboxPaths) binaries() string {
	s := p.binary
	for _, b := range append([]string{p.hook}, p.launchers...) {
		if b != "" {
			s += ", " + b
		}
	}
	return s
}

// spec is the sandbox block init merges.
func (p sandboxPaths) spec() *install.Sandbox {
	sp := install.SandboxPath
	allow := []string{sp(p.goCache)}
	if p.undo != "" {
		allow = append(allow, sp(p.undo))
	}
	return &install.Sandbox{
		DenyWrite:  p.denyWrite(),
		DenyRead:   p.denyRead(),
		AllowWrite: allow,
		Env:        []install.EnvVar{{Name: "GOCACHE", Value: p.goCache}},
	}
}

// sandboxTools are the programs Claude Code's sandbox needs on Linux, and
// the Debian package of each.
var sandboxTools = []struct{ cmd, pkg string }{{"bwrap", "bubblewrap"}, {"socat", "socat"}}

// missingSandboxTools lists the packages to install for the sandbox.
func missingSandboxTools() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var missing []string
	for _, t := range sandboxTools {
		if _, err := exec.LookPath(t.cmd); err != nil {
			missing = append(missing, t.pkg)
		}
	}
	return missing
}

// sandboxNotes tells the user what init did for the sandbox, and what it
// needs. Nothing is installed here.
func sandboxNotes(out, errOut io.Writer, p *sandboxPaths, scope install.Scope) {
	if p == nil {
		fmt.Fprintln(errOut, "loopguard: warning: --no-sandbox: Claude Code's OS sandbox is NOT turned on. Any code an approved or granted call runs")
		fmt.Fprintln(errOut, "loopguard: warning: (a test, a build, a script) runs as you: it can read the key from the keyring, forge grants, rewrite the hook settings and reach the network")
		fmt.Fprintln(errOut, "loopguard: hint: run `loopguard init` without --no-sandbox to confine it (see README, Sandbox); `loopguard doctor` reports the sandbox as failing until then")
		return
	}
	fmt.Fprintf(out, "Sandbox: Bash commands run in Claude Code's OS sandbox (enabled, failIfUnavailable, allowUnsandboxedCommands false); they cannot write %s, %s or %s, nor read %s.\n",
		p.state, p.config, p.binaries(), p.secrets())
	fmt.Fprintf(out, "         Go builds in the sandbox use their own cache %s (GOCACHE); no network host is allowed.\n", p.goCache)
	fmt.Fprintf(out, "         The jail's launcher keeps its undo records in %s, which the sandbox lets it write (the jail itself cannot reach it).\n", p.undo)
	if len(p.exclude) == 2 {
		fmt.Fprintf(out, "         Two command forms leave it, each only on the hook's ticket for exactly it: a call you approve exactly that needs the network runs in the launcher's own jail with the network to the ports its URLs name (%q); one that needs more (git push, a write to your home) runs unconfined, as you (%q).\n", p.exclude[0], p.exclude[1])
	}
	if scope != install.User {
		fmt.Fprintln(out, "         In project or local settings, allowUnsandboxedCommands false can be undone by a settings.local.json:")
		fmt.Fprintln(out, "         set it in ~/.claude/settings.json too (`loopguard init --user` does); `loopguard doctor` checks it.")
	}
	if missing := missingSandboxTools(); len(missing) > 0 {
		fmt.Fprintf(errOut, "loopguard: warning: the sandbox needs %s, which %s not installed: Claude Code will refuse to start until %s\n",
			strings.Join(missing, " and "), map[bool]string{true: "is", false: "are"}[len(missing) == 1], map[bool]string{true: "it is", false: "they are"}[len(missing) == 1])
		fmt.Fprintf(errOut, "loopguard: hint: install %s yourself, e.g. sudo apt-get install %s\n", map[bool]string{true: "it", false: "them"}[len(missing) == 1], strings.Join(missing, " "))
	}
}

// sandboxExclusions are the sandbox.excludedCommands entries for the hook
// binary hookBin: the launcher the hook names in its escalation forms
// (beside hookBin, symlinks resolved, as the hook finds itself).
func sandboxExclusions(hookBin string) []string {
	self := hookBin
	if r, err := filepath.EvalSymlinks(hookBin); err == nil {
		self = r
	}
	return confine.Exclusions(policy.Launcher(self))
}

// ensureGoCache creates the sandbox-only Go cache directory and the undo
// directory, so that the sandbox has directories to bind writable.
func ensureGoCache(p *sandboxPaths) error {
	if p == nil {
		return nil
	}
	if err := os.MkdirAll(p.goCache, 0o700); err != nil {
		return fmt.Errorf("failed to create the sandbox's Go cache: %w", err)
	}
	if err := os.MkdirAll(p.undo, 0o700); p.undo != "" && err != nil {
		return fmt.Errorf("failed to create the undo directory: %w", err)
	}
	return nil
}
