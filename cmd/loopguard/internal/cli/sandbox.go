package cli

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

// SandboxPaths are the paths the sandbox settings name, resolved for this
// user: what sandboxed commands may not write or read, and the sandbox-only
// Go build cache they may write.
type SandboxPaths struct {
	Home      string
	State     string   // loopguard's state directory
	Config    string   // loopguard's config directory
	Binary    string   // this binary
	Hook      string   // loopguard-hook beside it, when installed ("": not)
	Launchers []string // loopguard-exec and loopguard-confine beside it, and a stale loopguard-launch (policy.Retired), those installed
	Keyrings  string   // the Secret Service's keyring files
	GoCache   string   // the Go build cache of sandboxed commands
	Undo      string   // the launcher's undo records (policy.UndoDir), which it writes from inside the sandbox
	// VaultToken is the Vault backend's token file (the config's
	// token_file, or ~/.vault-token when that is the one in use); "" with
	// the keyring.
	VaultToken string
	// Exclude are the sandbox.excludedCommands entries of the
	// escalations (confine.Exclusions: the network form, the unconfined
	// form), written only with two-phase enforcement; none without it.
	Exclude []string
}

func ResolveSandboxPaths(bin string) (SandboxPaths, error) {
	var p SandboxPaths
	var err error
	if p.Home, err = os.UserHomeDir(); err != nil {
		return p, fmt.Errorf("failed to find the home directory: %w", err)
	}
	if p.State, err = state.DefaultDir(); err != nil {
		return p, err
	}
	cfg, err := config.DefaultPath()
	if err != nil {
		return p, err
	}
	p.Config = filepath.Dir(cfg)
	if c, err := LoadConfig(); err == nil && c.Backend == config.BackendVault && c.Vault != nil {
		p.VaultToken = c.Vault.WithDefaults(p.Home).TokenFile
	}
	p.Binary = bin
	// loopguard-hook beside it is denied too whenever it is there, registered
	// or not: a stale one is still a binary init or a user may register.
	if _, hook := policy.Binaries(bin); hook != bin {
		if fi, err := os.Stat(hook); err == nil && !fi.IsDir() {
			p.Hook = hook
		}
	}
	for _, l := range append(policy.Launchers(bin), policy.Retired(bin)...) {
		if fi, err := os.Stat(l); err == nil && !fi.IsDir() && l != bin {
			p.Launchers = append(p.Launchers, l)
		}
	}
	data := filepath.Join(p.Home, ".local", "share")
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		data = x
	}
	p.Keyrings = filepath.Join(data, "keyrings")
	cache := filepath.Join(p.Home, ".cache")
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		cache = x
	}
	// Never the user's own cache: the agent could plant build results there
	// that the user's unsandboxed builds would trust.
	p.GoCache = filepath.Join(cache, "loopguard-sandbox", "go-build")
	p.Undo = policy.UndoDir(p.State)
	return p, nil
}

// DenyWrite is what sandboxed commands may not write, as settings entries.
func (p SandboxPaths) DenyWrite() []string {
	sp := install.SandboxPath
	out := []string{sp(p.State), sp(p.Config), sp(p.Binary)}
	if p.Hook != "" {
		out = append(out, sp(p.Hook))
	}
	for _, l := range p.Launchers {
		out = append(out, sp(l))
	}
	out = append(out, sp(p.Keyrings))
	if p.VaultToken != "" {
		out = append(out, sp(p.VaultToken))
	}
	return out
}

// DenyRead is what sandboxed commands may not read: loopguard's state, the
// keyring files, and under the Vault backend this machine's Vault token
// (read, it would leave with the next commit of the project).
func (p SandboxPaths) DenyRead() []string {
	sp := install.SandboxPath
	out := []string{sp(p.State), sp(p.Keyrings)}
	if p.VaultToken != "" {
		out = append(out, sp(p.VaultToken))
	}
	return out
}

// Secrets names what denyRead hides, for a message.
func (p SandboxPaths) Secrets() string {
	if p.VaultToken != "" {
		return p.State + ", " + p.Keyrings + " or the Vault token " + p.VaultToken
	}
	return p.State + " or " + p.Keyrings
}

// Binaries names the loopguard Binaries for a message.
func (p SandboxPaths) Binaries() string {
	s := p.Binary
	for _, b := range append([]string{p.Hook}, p.Launchers...) {
		if b != "" {
			s += ", " + b
		}
	}
	return s
}

// Spec is the sandbox block init merges.
func (p SandboxPaths) Spec() *install.Sandbox {
	sp := install.SandboxPath
	allow := []string{sp(p.GoCache)}
	if p.Undo != "" {
		allow = append(allow, sp(p.Undo))
	}
	return &install.Sandbox{
		DenyWrite:  p.DenyWrite(),
		DenyRead:   p.DenyRead(),
		AllowWrite: allow,
		Env:        []install.EnvVar{{Name: "GOCACHE", Value: p.GoCache}},
	}
}

// SandboxTools are the programs Claude Code's sandbox needs on Linux, and
// the Debian package of each.
var SandboxTools = []struct{ Cmd, Pkg string }{{"bwrap", "bubblewrap"}, {"socat", "socat"}}

// MissingSandboxTools lists the packages to install for the sandbox.
func MissingSandboxTools() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var missing []string
	for _, t := range SandboxTools {
		if _, err := exec.LookPath(t.Cmd); err != nil {
			missing = append(missing, t.Pkg)
		}
	}
	return missing
}

// SandboxNotes tells the user what init did for the sandbox, and what it
// needs. Nothing is installed here.
func SandboxNotes(out, errOut io.Writer, p *SandboxPaths, scope install.Scope) {
	if p == nil {
		fmt.Fprintln(errOut, "loopguard: warning: --no-sandbox: Claude Code's OS sandbox is NOT turned on. Any code an approved or granted call runs")
		fmt.Fprintln(errOut, "loopguard: warning: (a test, a build, a script) runs as you: it can read the key from the keyring, forge grants, rewrite the hook settings and reach the network")
		fmt.Fprintln(errOut, "loopguard: hint: run `loopguard init` without --no-sandbox to confine it (see README, Sandbox); `loopguard doctor` reports the sandbox as failing until then")
		return
	}
	fmt.Fprintf(out, "Sandbox: Bash commands run in Claude Code's OS sandbox (enabled, failIfUnavailable, allowUnsandboxedCommands false); they cannot write %s, %s or %s, nor read %s.\n",
		p.State, p.Config, p.Binaries(), p.Secrets())
	fmt.Fprintf(out, "         Go builds in the sandbox use their own cache %s (GOCACHE); no network host is allowed.\n", p.GoCache)
	fmt.Fprintf(out, "         The jail's launcher keeps its undo records in %s, which the sandbox lets it write (the jail itself cannot reach it).\n", p.Undo)
	if len(p.Exclude) == 2 {
		fmt.Fprintf(out, "         Two command forms leave it, each only on the hook's ticket for exactly it: a call you approve exactly that needs the network runs in the launcher's own jail with the network to the ports its URLs name (%q); one that needs more (git push, a write to your home) runs unconfined, as you (%q).\n", p.Exclude[0], p.Exclude[1])
	}
	if scope != install.User {
		fmt.Fprintln(out, "         In project or local settings, allowUnsandboxedCommands false can be undone by a settings.local.json:")
		fmt.Fprintln(out, "         set it in ~/.claude/settings.json too (`loopguard init --user` does); `loopguard doctor` checks it.")
	}
	if missing := MissingSandboxTools(); len(missing) > 0 {
		fmt.Fprintf(errOut, "loopguard: warning: the sandbox needs %s, which %s not installed: Claude Code will refuse to start until %s\n",
			strings.Join(missing, " and "), map[bool]string{true: "is", false: "are"}[len(missing) == 1], map[bool]string{true: "it is", false: "they are"}[len(missing) == 1])
		fmt.Fprintf(errOut, "loopguard: hint: install %s yourself, e.g. sudo apt-get install %s\n", map[bool]string{true: "it", false: "them"}[len(missing) == 1], strings.Join(missing, " "))
	}
}

// SandboxExclusions are the sandbox.excludedCommands entries for the hook
// binary hookBin: the launcher the hook names in its escalation forms
// (beside hookBin, symlinks resolved, as the hook finds itself).
func SandboxExclusions(hookBin string) []string {
	self := hookBin
	if r, err := filepath.EvalSymlinks(hookBin); err == nil {
		self = r
	}
	return confine.Exclusions(policy.Launcher(self))
}

// EnsureGoCache creates the sandbox-only Go cache directory and the undo
// directory, so that the sandbox has directories to bind writable.
func EnsureGoCache(p *SandboxPaths) error {
	if p == nil {
		return nil
	}
	if err := os.MkdirAll(p.GoCache, 0o700); err != nil {
		return fmt.Errorf("failed to create the sandbox's Go cache: %w", err)
	}
	if err := os.MkdirAll(p.Undo, 0o700); p.Undo != "" && err != nil {
		return fmt.Errorf("failed to create the undo directory: %w", err)
	}
	return nil
}
