package confine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// envGetenv is getenv as far as Env's fields record it, for an Env
// without Getenv: HOME, and XDG_CONFIG_HOME (loopguard's configuration
// directory is $XDG_CONFIG_HOME/loopguard when it is set).
func envGetenv(e Env) func(string) string {
	xdg := ""
	if e.Places.ConfigDir != "" && e.Home != "" {
		if d := filepath.Dir(e.Places.ConfigDir); d != filepath.Join(e.Home, ".config") {
			xdg = d
		}
	}
	return func(k string) string {
		switch k {
		case "HOME":
			return e.Home
		case "XDG_CONFIG_HOME":
			return xdg
		}
		return ""
	}
}

// homeReadsFor finds, by each tool's own rules, what the tools a launch
// of s may run read from the home to run at all: git's configuration as
// git resolves it (gitRules), the Go, Rust, Node and Python toolchains'
// configuration and installed versions (toolRules), the directories of
// the search path in the home and what their tools need (pathRules),
// and, under +network, the package registries' configuration
// (registryConfig). The variables are the launch's (e.Getenv); under
// read-only only those the program keeps (readOnlyEnv) count, since the
// others never reach it.
//
// A candidate is granted only if it passes homeVet: its mode and the
// modes of the directories above it in the home let any other user read
// it, and it is not on the secret list. Nothing is walked: each rule names
// its paths (the listings: ~/.local/lib, for python's user site, and each
// directory of the search path in the home).
func homeReadsFor(e Env, s Spec) []string {
	pl := e.Places.Prepare()
	encl, _ := findEnclosing(s.Project, e, pl)
	reads, _, _ := homeReadsWith(e, s, pl, encl)
	return reads
}

// homeReadsWith is homeReadsFor with e.Places prepared and the
// repository the project is a directory of found (the plan's), and what
// it leaves unread: the candidates their mode keeps private
// (Plan.PrivateHome), the search path's directories it refuses
// (Plan.Unread).
func homeReadsWith(e Env, s Spec, pl policy.Places, encl enclosing) (reads, private []string, unread []Unread) {
	getenv := e.Getenv
	if getenv == nil {
		getenv = envGetenv(e)
	}
	home := filepath.Clean(e.Home)
	if e.Home == "" || !filepath.IsAbs(home) || home == "/" {
		return nil, nil, nil
	}
	readOnly := !s.Cap.Write && !s.Cap.Git
	env := func(k string) string {
		if readOnly && !readOnlyEnv[k] {
			return ""
		}
		return getenv(k)
	}
	v := newHomeVet(e, s, pl, env)
	v.enclosing = encl
	v.gitRules(s, env)
	v.toolRules(s, env)
	v.pathRules(env)
	if s.Cap.Network {
		for _, f := range registryConfig {
			v.grant(filepath.Join(home, f), anyKind, trustRegistry)
		}
	}
	return v.out, v.private, v.unread
}

// registryConfig is npm's user configuration, where `npm login` writes
// the registry's token (mode 0600): readable only under the network
// capability, whose connection is the token's one use, and then whatever
// its mode. Without it npm passes over the unreadable file and runs on its
// defaults, and nothing a confined program prints can carry the token.
var registryConfig = []string{".npmrc", ".config/npm"}

// trust is how much a candidate's source is believed.
type trust uint8

const (
	// trustProject: named by a file confined code may write (the
	// project's .git/config, a file in the project or the temp
	// directory): files only, never a directory.
	trustProject trust = iota
	// trustUser: named by the tools' rules or the user's own
	// configuration: files and directories.
	trustUser
	// trustRegistry: registryConfig under +network: granted whatever its
	// mode (npm login writes it 0600) and though the home's secret list
	// names it (policy.HomeSecrets), as the network's one use of it; not
	// what a link there leads to when that is a secret.
	trustRegistry
)

// kind is what a candidate is expected to be.
type kind uint8

const (
	fileKind kind = iota
	dirKind
	anyKind
)

// toolDir reports whether the directory p holds one of markers (paths
// below it): what a variable naming a tool's root directory is granted
// whole only where it is that tool's (PYENV_ROOT=~/other in an approved
// prefix read another project's .env: the forty-second attack run).
func toolDir(p string, markers ...string) bool {
	for _, m := range markers {
		if _, err := os.Lstat(filepath.Join(p, m)); err == nil {
			return true
		}
	}
	return false
}

// toolRules are each tool's own configuration and installed toolchains.
// Each rule says why; only what a tool reads to run, never its
// credentials (~/.cargo/credentials.toml, ~/.config/gh/hosts.yml) nor the
// caches the launcher replaces with its own (~/.npm, GOCACHE).
func (v *homeVet) toolRules(s Spec, env func(string) string) {
	home := v.home
	h := func(rel ...string) string { return filepath.Join(append([]string{home}, rel...)...) }
	abs := func(k string) string {
		if p := env(k); filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return ""
	}
	or := func(p, def string) string {
		if p != "" {
			return p
		}
		return def
	}
	// Go: os.UserConfigDir, which is $XDG_CONFIG_HOME when absolute, else
	// ~/.config (a relative $XDG_CONFIG_HOME is an error to Go).
	goConfig := or(abs("XDG_CONFIG_HOME"), h(".config"))
	switch g := env("GOENV"); {
	case g == "off":
	case filepath.IsAbs(g):
		v.grant(g, fileKind, trustUser) // go reads the settings `go env -w` wrote at every start
	case g == "":
		v.grant(filepath.Join(goConfig, "go", "env"), fileKind, trustUser)
	}
	v.grant(filepath.Join(goConfig, "go", "telemetry", "mode"), fileKind, trustUser) // go reads whether telemetry is on at every start
	if g := abs("GOROOT"); g != "" && fsx.Within(g, home) && toolDir(g, "src/runtime") {
		v.grant(g, dirKind, trustUser) // the toolchain GOROOT names, when it is in the home
	}
	v.grant(h("sdk"), dirKind, trustUser) // golang.org/dl's toolchains: ~/go/bin/go1.26 runs ~/sdk/go1.26/bin/go
	if g := abs("GOWORK"); g != "" {
		v.grant(g, fileKind, trustUser) // the workspace file GOWORK names
	}
	// Rust: cargo's and rustup's homes. The toolchains are what
	// ~/.cargo/bin/cargo, a rustup proxy, runs; the registry and git
	// checkouts are the crates' sources, cargo's module cache.
	cargo := or(abs("CARGO_HOME"), h(".cargo"))
	v.grant(filepath.Join(cargo, "config.toml"), fileKind, trustUser)
	v.grant(filepath.Join(cargo, "config"), fileKind, trustUser)
	v.grant(filepath.Join(cargo, "registry"), dirKind, trustUser)
	v.grant(filepath.Join(cargo, "git"), dirKind, trustUser)
	rustup := or(abs("RUSTUP_HOME"), h(".rustup"))
	v.grant(filepath.Join(rustup, "settings.toml"), fileKind, trustUser) // the default toolchain and overrides
	v.grant(filepath.Join(rustup, "toolchains"), dirKind, trustUser)
	// Node: nvm's and volta's installed versions (a script npm installed
	// runs `env node`, which is nvm's; volta's shims run its images).
	// Not ~/.npm: the launcher gives npm a private cache.
	v.grant(filepath.Join(or(abs("NVM_DIR"), h(".nvm")), "versions"), dirKind, trustUser)
	volta := or(abs("VOLTA_HOME"), h(".volta"))
	v.grant(filepath.Join(volta, "tools"), dirKind, trustUser)
	// Python: pyenv's shims run its libexec and the versions it
	// installed; python adds the user site (pip install --user) at every
	// start; uv's environments link to the Pythons it manages.
	if p := abs("PYENV_ROOT"); p == "" || toolDir(p, "libexec/pyenv", "versions") {
		v.grant(or(p, h(".pyenv")), dirKind, trustUser)
	}
	if v.lstat(h(".local", "lib")).err != nil {
		// most homes: no listing
	} else if ents, err := os.ReadDir(h(".local", "lib")); err == nil {
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), "python") {
				v.grant(h(".local", "lib", ent.Name()), dirKind, trustUser)
			}
		}
	}
	v.grant(filepath.Join(or(abs("XDG_DATA_HOME"), h(".local", "share")), "uv", "python"), dirKind, trustUser)
	// ripgrep's flags, GitHub CLI's settings (its aliases; never
	// hosts.yml, its tokens), ncurses' own terminal descriptions, jq's.
	if r := abs("RIPGREP_CONFIG_PATH"); r != "" {
		v.grant(r, fileKind, trustUser)
	}
	v.grant(filepath.Join(or(abs("GH_CONFIG_DIR"), filepath.Join(goConfig, "gh")), "config.yml"), fileKind, trustUser)
	v.grant(h(".terminfo"), dirKind, trustUser)
	v.grant(h(".jq"), anyKind, trustUser) // jq's definitions (a file) or modules (a directory), read at every start
	// The project's ancestors in the home: go uses the first go.work
	// above it, cargo merges every .cargo/config.toml above it.
	if s.Project != "" && fsx.Within(s.Project, home) {
		for d := filepath.Dir(s.Project); d != home && fsx.Within(d, home); d = filepath.Dir(d) {
			v.grant(filepath.Join(d, "go.work"), fileKind, trustUser)
			v.grant(filepath.Join(d, ".cargo", "config.toml"), fileKind, trustUser)
			v.grant(filepath.Join(d, ".cargo", "config"), fileKind, trustUser)
		}
	}
	// Playwright's browsers (npx playwright install), which a test run
	// launches: the capabilities that run tests. PLAYWRIGHT_BROWSERS_PATH
	// only where it is playwright's (its .links), as PYENV_ROOT above.
	if s.Cap.Write {
		switch pw := abs("PLAYWRIGHT_BROWSERS_PATH"); {
		case pw == "":
			v.grant(filepath.Join(or(abs("XDG_CACHE_HOME"), h(".cache")), "ms-playwright"), dirKind, trustUser)
		case toolDir(pw, ".links"):
			v.grant(pw, dirKind, trustUser)
		}
	}
	if s.Cap.Network {
		// pip's configuration may hold an index URL with its password:
		// with the network only, like npm's.
		v.grant(filepath.Join(goConfig, "pip", "pip.conf"), fileKind, trustUser)
		v.grant(h(".pip", "pip.conf"), fileKind, trustUser)
	}
}
