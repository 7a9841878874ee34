package policy

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/fsx"
)

// Tier is how strongly a path is protected.
type Tier uint8

const (
	// Ordinary paths are judged by grants like any other.
	Ordinary Tier = iota
	// ExecConfig is executable configuration: what makes an agent, the
	// shell, git or another tool run code later (execconfig.go lists it). No scoped grant covers it; only an exact
	// approval, shown with a loud warning.
	ExecConfig
	// GuardCritical is what the guard stands on. Denied whatever grants
	// exist; the human changes it from their own terminal.
	GuardCritical
)

func (t Tier) String() string {
	switch t {
	case ExecConfig:
		return "executable configuration"
	case GuardCritical:
		return "guard-critical"
	}
	return "ordinary"
}

// Protection says why a path is protected.
type Protection struct {
	Tier Tier
	// Secret is true when reading it is denied too (the guard's state and
	// config, the keyrings, the home's secrets: HomeSecrets).
	Secret bool
	// What names the protected thing for a person ("Claude Code's settings
	// (hooks and permissions)").
	What string
	// Path is the protected path the judged path is, or is inside.
	Path string
	// Holds: the path is protected only as the repository's own
	// directory that would hold a protected entry of two names or more
	// (.github, for .github/hooks and .github/agents; ownHolder): a name
	// that must not be made or moved into place whole, while what is
	// below it is judged by its own names (.github/workflows is
	// ordinary). A tool's configuration directory that holds such an
	// entry (.gemini, .qwen) is protected whole. A protection of the path
	// itself wins over it (max).
	Holds bool
}

// Protected reports whether the path is protected at all.
func (p Protection) Protected() bool { return p.Tier != Ordinary }

// max keeps the stronger protection (a secret wins a tie).
func (p Protection) max(q Protection) Protection {
	if q.Tier > p.Tier || (q.Tier == p.Tier && (q.Secret && !p.Secret || p.Holds && !q.Holds)) {
		return q
	}
	return p
}

// Places are the machine's anchors of the protected set. Empty fields are
// left out; Home is needed for every per-user entry.
type Places struct {
	Home            string
	StateDir        string // loopguard's state directory
	ConfigDir       string // loopguard's config directory
	Self            string // the loopguard binary
	ClaudeConfigDir string // $CLAUDE_CONFIG_DIR
	CodexHome       string // $CODEX_HOME ("" means Home/.codex)
	// Path is $PATH as the agent's host has it: a loopguard binary
	// wherever PATH would find one is guard-critical, since the plugin's
	// hooks run the loopguard-hook PATH finds (and a user types
	// loopguard). Exact names only: the directories stay ordinary.
	Path string
	// Secrets are further files no agent call may read or write: the
	// Vault token this machine's hook uses (the team backend's
	// token_file), wherever the config puts it.
	Secrets []string
	// XDGConfigHome is $XDG_CONFIG_HOME as the agent's host has it (""
	// when unset: Home/.config): the secrets its tools keep there (gh's
	// hosts.yml, git's credentials) are secret there too (HomeSecrets).
	XDGConfigHome string
	// HooksPaths are the paths git runs as hooks because core.hooksPath
	// names them (HooksPaths fills it): executable configuration.
	HooksPaths []string
	// Imports are the files the project's instruction files import
	// (InstructionImports), its .envrc loads (EnvrcLoads) and its
	// executable configuration names as programs (ConfigPrograms):
	// instruction files and executable configuration too (ProjectLoads
	// gives all three).
	Imports []string

	prepared []entry // set by Prepare
	// otherHomes are the other paths of the user's home (OtherHomes): set
	// by Prepare, else looked up in entries.
	otherHomes []string
}

// Prepare returns pl with its protected set computed once, for many
// questions in a row (a Bash command's every word).
func (pl Places) Prepare() Places {
	if pl.Home != "" {
		pl.Home = filepath.Clean(pl.Home)
	}
	pl.otherHomes = OtherHomes(pl.Home)
	pl.prepared = nil
	pl.prepared = pl.entries()
	return pl
}

// homes are the paths the home is reached by: Home, then OtherHomes.
func (pl Places) homes() []string {
	if pl.Home == "" {
		return nil
	}
	return append([]string{filepath.Clean(pl.Home)}, pl.otherHomesOf()...)
}

func (pl Places) otherHomesOf() []string {
	if pl.prepared != nil {
		return pl.otherHomes
	}
	return OtherHomes(pl.Home)
}

// OtherHomes are the paths other than home (an absolute $HOME) at which
// the user's home, and what the protected set names in it, also are: its
// real path where it is reached through a link (RealHome), and the home
// the user's account names (the password database) where $HOME names
// another, with its real path: an agent started with HOME=/tmp/h still
// runs as the user whose ~/.ssh ssh reads (the ninety-third attack run).
// Every place under home is protected at each of them too
// (Places.entries).
func OtherHomes(home string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	var out []string
	add := func(p string) {
		if p != "" && p != home && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(RealHome(home))
	if acct := accountHome(); acct != "" {
		add(acct)
		add(RealHome(acct))
	}
	return out
}

// accountHome is the home directory the password database gives the
// process's user ("" where it gives none), read once.
var (
	accountHomeOnce sync.Once
	accountHomeDir  string
)

func accountHome() string {
	accountHomeOnce.Do(func() {
		u, err := user.LookupId(strconv.Itoa(os.Getuid()))
		if err == nil && filepath.IsAbs(u.HomeDir) {
			accountHomeDir = filepath.Clean(u.HomeDir)
		}
	})
	return accountHomeDir
}

// RealHome is the real path of the home directory home where it is reached
// through a link (/home/u -> /var/home/u, a home on another disk), ""
// where home is its own real path, is not absolute, or cannot be resolved.
// Every place under the home is protected at both paths: a file tool's
// Read of /var/home/u/.ssh/id_rsa reads ~/.ssh/id_rsa (the ninety-first
// attack run's home through a link; Places.entries).
func RealHome(home string) string {
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	home = filepath.Clean(home)
	r, err := filepath.EvalSymlinks(home)
	if err != nil || !filepath.IsAbs(r) || r == home {
		return ""
	}
	return r
}

// entry is one protected path under a fixed absolute location.
type entry struct {
	path   string
	what   string
	tier   Tier
	secret bool
	// claudeDir: the directory is a Claude Code configuration directory
	// (~/.claude, $CLAUDE_CONFIG_DIR): inside it the .claude rules apply.
	claudeDir bool
	// exact: only the path itself, not the directories above it (a PATH
	// directory such as ~/.local/bin stays usable).
	exact bool
	// why is, for a home secret, why it is secret: its description is
	// what and why together (desc), made only when a path matches it.
	why string
}

// entryCount is how many entries pl has at most: entries makes its list
// once, at its size.
func (pl Places) entryCount(paths []string) int {
	n := 25 + len(pl.Secrets) + 5*len(paths) + len(agentFiles) + len(pl.HooksPaths) + len(pl.Imports)
	if pl.Home == "" {
		return n
	}
	for _, e := range execConfigRows {
		if e.Anchor == InHome {
			n++
		}
	}
	for _, s := range homeSecrets {
		n++
		if s.Moves != "" {
			n++
		}
	}
	return n
}

// desc is what e is, for a person.
func (e entry) desc() string {
	if e.why == "" {
		return e.what
	}
	return e.what + ", a secret: " + e.why
}

// The binaries of loopguard, installed side by side: loopguard (the CLI,
// the Vault client, and the hook too), loopguard-hook (the hook alone,
// which starts faster; under the Vault backend it runs loopguard) and the
// two launchers below. Each is what the others stand on: replacing any
// replaces the guard.
const (
	BinaryName     = "loopguard"
	HookBinaryName = "loopguard-hook"
	// ExecBinaryName is the wrapper of two-phase enforcement (the host's
	// shell prefix, shell tool or shell: package ticket), which answers
	// the hook in its process, and the launcher of the forms that leave
	// Claude Code's sandbox (its excludedCommands name it). It grants
	// nothing, but replacing it would replace the wrapper and the
	// confinement: it is guard-critical like the others.
	ExecBinaryName = "loopguard-exec"
	// ConfineBinaryName is the launcher and nothing else: package confine
	// alone linked, so that it starts as fast as a Go program of its
	// size can (loopguard-exec links the hook's packages too, to answer
	// the hook in the wrapper's process). The hook runs the launches
	// that stay where the call runs through it (Confiner); the forms that
	// leave Claude Code's sandbox keep loopguard-exec, which the
	// sandbox's excludedCommands name. Guard-critical like the others.
	ConfineBinaryName = "loopguard-confine"
	// RetiredLaunchBinaryName is the small C launcher read-only calls
	// started through before it was retired (issue #39: every launch is
	// loopguard-exec's now). Nothing of this build runs it, but an earlier
	// install left it beside the binaries, and a hook of that release
	// (another install, a registration not yet redone) still names it in
	// the commands it rewrites: replacing it would still replace what such
	// a call runs under. It stays guard-critical for one release (Retired);
	// remove it with the release after.
	RetiredLaunchBinaryName = "loopguard-launch"
)

// Launcher returns the path of loopguard-exec (ExecBinaryName) beside
// either binary, whether or not it is there.
func Launcher(self string) string { return beside(self, ExecBinaryName) }

// Confiner returns the path of the launcher alone (ConfineBinaryName)
// beside either binary, whether or not it is there.
func Confiner(self string) string { return beside(self, ConfineBinaryName) }

// beside is the binary name in self's directory, with self's .exe.
func beside(self, name string) string {
	dir, base := filepath.Split(self)
	if strings.HasSuffix(base, ".exe") {
		name += ".exe"
	}
	return filepath.Join(dir, name)
}

// Launchers returns the paths of the two launchers beside either binary
// (Launcher, Confiner), whether or not they are there.
func Launchers(self string) []string {
	return []string{Launcher(self), Confiner(self)}
}

// Retired returns the paths, beside either binary, of the binaries an
// earlier release installed and this one no longer runs
// (RetiredLaunchBinaryName), whether or not they are there: still
// guard-critical, so that a stale one cannot be replaced.
func Retired(self string) []string {
	return []string{filepath.Join(filepath.Dir(self), RetiredLaunchBinaryName)}
}

const guardRetired = "a binary an earlier loopguard release installed (the retired small launcher, which that release's hook still runs)"

// Binaries returns the paths of loopguard's two binaries given the path of
// either: the one beside it in the same directory is its twin, whether or not
// it is there.
func Binaries(self string) (full, hook string) {
	dir, base := filepath.Split(self)
	ext := ""
	if strings.HasSuffix(base, ".exe") {
		ext = ".exe"
	}
	return filepath.Join(dir, BinaryName+ext), filepath.Join(dir, HookBinaryName+ext)
}

// IsLoopguardBinary reports whether exe is one of the binaries of the
// loopguard at self.
func IsLoopguardBinary(self, exe string) bool {
	if self == "" || exe == "" {
		return false
	}
	full, hook := Binaries(self)
	exe = filepath.Clean(exe)
	return exe == filepath.Clean(self) || exe == full || exe == hook || slices.Contains(Launchers(self), exe) || slices.Contains(Retired(self), exe)
}

// ConsoleDir is loopguard serve's directory inside the state directory:
// its passkeys (whose holders approve calls) and one-time registration
// links.
const ConsoleDir = "console"

const guardConsole = "loopguard serve's passkeys and registration links"

// ManagedSettingsDirs hold Claude Code's managed settings (Linux, macOS).
var ManagedSettingsDirs = []string{"/etc/claude-code", "/Library/Application Support/ClaudeCode"}

// entries lists the fixed protected paths of pl, cleaned.
//
// The hook makes them on every call, in a fresh process: the paths under
// the home and in PATH are joined into one buffer (entryBuilder), not one
// allocation each, and a home secret's description is made only when a
// path matches it (entry.desc).
func (pl Places) entries() []entry {
	if pl.prepared != nil {
		return pl.prepared
	}
	paths := filepath.SplitList(pl.Path)
	b := entryBuilder{
		out: make([]entry, 0, pl.entryCount(paths)),
		buf: make([]byte, 0, 4096),
	}
	const guardState = "loopguard's state (grants, pending calls, audit log)"
	// loopguard serve's files, named first so a refusal says what they
	// are: a passkey added there would approve calls.
	if pl.StateDir != "" {
		b.add(entry{path: filepath.Join(pl.StateDir, ConsoleDir), tier: GuardCritical, secret: true, what: guardConsole})
	}
	b.add(entry{path: pl.StateDir, tier: GuardCritical, secret: true, what: guardState})
	b.add(entry{path: UndoDir(pl.StateDir), tier: GuardCritical, secret: true, what: "loopguard's undo records (copies of project files that loopguard undo puts back)"})
	b.add(entry{path: pl.ConfigDir, tier: GuardCritical, secret: true, what: "loopguard's configuration"})
	b.add(entry{path: pl.Self, tier: GuardCritical, what: "the loopguard binary"})
	for _, f := range pl.Secrets {
		b.add(entry{path: f, tier: GuardCritical, secret: true, what: "the Vault token of this machine (the team backend's token_file)"})
	}
	if pl.Self != "" {
		full, hook := Binaries(pl.Self)
		for _, p := range append([]string{full, hook}, Launchers(pl.Self)...) {
			if p != filepath.Clean(pl.Self) {
				b.add(entry{path: p, tier: GuardCritical, what: "the loopguard binary"})
			}
		}
		for _, p := range Retired(pl.Self) {
			b.add(entry{path: p, tier: GuardCritical, what: guardRetired})
		}
	}
	for _, d := range paths {
		if filepath.IsAbs(d) {
			// Binaries, Launchers and Retired of d/loopguard: the names
			// beside it in d.
			b.join(entry{tier: GuardCritical, what: "a loopguard binary in PATH", exact: true}, d, BinaryName)
			b.join(entry{tier: GuardCritical, what: "a loopguard binary in PATH (the plugin's hooks run it)", exact: true}, d, HookBinaryName)
			b.join(entry{tier: GuardCritical, what: "a loopguard binary in PATH", exact: true}, d, ExecBinaryName)
			b.join(entry{tier: GuardCritical, what: "a loopguard binary in PATH", exact: true}, d, ConfineBinaryName)
			b.join(entry{tier: GuardCritical, what: guardRetired, exact: true}, d, RetiredLaunchBinaryName)
		}
	}
	for _, d := range ManagedSettingsDirs {
		b.add(entry{path: d, tier: GuardCritical, what: "Claude Code's managed settings"})
	}
	if pl.ClaudeConfigDir != "" {
		b.add(entry{path: pl.ClaudeConfigDir, tier: GuardCritical, what: "Claude Code's configuration directory ($CLAUDE_CONFIG_DIR)", claudeDir: true})
	}
	if h := pl.Home; h != "" {
		b.join(entry{tier: GuardCritical, secret: true, what: guardConsole}, h, ".local/state/loopguard/"+ConsoleDir)
		b.join(entry{tier: GuardCritical, secret: true, what: guardState}, h, ".local/state/loopguard")
		b.join(entry{tier: GuardCritical, secret: true, what: "loopguard's configuration"}, h, ".config/loopguard")
		// The keyrings are in HomeSecrets too; here not exact: moving a
		// directory that holds them takes the guard's key with it.
		b.join(entry{tier: GuardCritical, secret: true, what: "the keyring files (the guard's key)"}, h, ".local/share/keyrings")
		b.join(entry{tier: GuardCritical, secret: true, what: "the keychains (the guard's key)"}, h, "Library/Keychains")
		b.join(entry{tier: GuardCritical, what: "Claude Code's user configuration directory", claudeDir: true}, h, ".claude")
		// execConfigRows, not execConfig(): lefthook's entries are all
		// AnyDepth.
		for _, e := range execConfigRows {
			if e.Anchor == InHome {
				b.join(entry{tier: ExecConfig, what: e.What}, h, e.Path)
			}
		}
		pl.secretEntries(&b)
	}
	for _, p := range pl.HooksPaths {
		b.add(entry{path: p, tier: ExecConfig, what: hooksPathWhat})
	}
	for _, p := range pl.Imports {
		b.add(entry{path: p, tier: ExecConfig, what: importWhat})
	}
	// Other agents' hook registrations and settings (agents.go); their
	// project files are judged at any depth in Classify.
	// (AgentPaths(pl.Home, "", pl.CodexHome), each agent's directory
	// joined once.)
	var homes [8]struct{ agent, dir string }
	n := 0
	for _, f := range agentFiles {
		base := f.base
		switch base {
		case atProject:
			continue
		case atAgent:
			base = ""
			for _, h := range homes[:n] {
				if h.agent == f.agent {
					base = h.dir
				}
			}
			if base == "" {
				base = AgentHome(f.agent, pl.Home, pl.CodexHome)
				if n < len(homes) {
					homes[n].agent, homes[n].dir = f.agent, base
					n++
				}
			}
		}
		b.join(entry{tier: GuardCritical, what: f.why}, base, f.parts...)
	}
	out := b.done()
	for _, other := range pl.otherHomesOf() {
		out = atRealHome(out, pl.Home, other)
	}
	return out
}

// atRealHome adds to out, for each entry at or below home, the same entry
// at real, another path of the home (OtherHomes; nothing where it is "").
func atRealHome(out []entry, home, real string) []entry {
	if real == "" {
		return out
	}
	home = filepath.Clean(home)
	n := len(out)
	for _, e := range out[:n] {
		if e.path == home || inside(e.path, home) || home == string(filepath.Separator) {
			e.path = filepath.Join(real, e.path[len(home):])
			out = append(out, e)
		}
	}
	return out
}

// entryBuilder lists entries in order, the paths joined under a directory
// written into one buffer and cut from one string at the end.
type entryBuilder struct {
	out  []entry
	buf  []byte
	refs []entryRef
	// dir and clean: the last directory join cleaned (joins come in runs
	// under one directory).
	dir, clean string
}

// entryRef is where out[i]'s path is in buf.
type entryRef struct{ i, start, end int }

// add appends e, its path cleaned, when that path is absolute.
func (b *entryBuilder) add(e entry) {
	if e.path != "" && filepath.IsAbs(e.path) {
		e.path = filepath.Clean(e.path)
		b.out = append(b.out, e)
	}
}

// join appends e with the path filepath.Join(dir, rel...) makes, when dir
// is absolute (the join is not otherwise). Each rel is "/"-separated and
// clean, as the tables' paths are (TestEntryTablesAreClean): dir is cleaned
// and the names follow it as they are.
func (b *entryBuilder) join(e entry, dir string, rel ...string) {
	if !filepath.IsAbs(dir) {
		return
	}
	if dir != b.dir {
		b.dir, b.clean = dir, filepath.Clean(dir)
	}
	start := len(b.buf)
	b.buf = append(b.buf, b.clean...)
	for _, r := range rel {
		if r == "" {
			continue
		}
		if b.buf[len(b.buf)-1] != filepath.Separator {
			b.buf = append(b.buf, filepath.Separator)
		}
		b.buf = append(b.buf, filepath.FromSlash(r)...)
	}
	b.refs = append(b.refs, entryRef{i: len(b.out), start: start, end: len(b.buf)})
	b.out = append(b.out, e)
}

// done returns the entries with the joined paths set.
func (b *entryBuilder) done() []entry {
	s := string(b.buf)
	for _, r := range b.refs {
		b.out[r.i].path = s[r.start:r.end]
	}
	return b.out
}

type named struct{ name, what string }

// Names of the directories whose contents are protected at any depth.
const (
	claudeDirName = ".claude"
	gitDirName    = ".git"
)

// claudeStateName is Claude Code's state file in a configuration directory
// (and the backups it writes beside it).
const claudeStateName = ".claude.json*"

// claudeCritical are entries of a Claude Code configuration directory (a
// project's .claude/ at any depth, ~/.claude, $CLAUDE_CONFIG_DIR) that the
// guard stands on. "settings*.json" is a pattern; the others are names.
var claudeCritical = []named{
	{"settings*.json", "Claude Code's settings (they register, change or disable hooks and permissions)"},
	{claudeStateName, "Claude Code's state (.claude.json: mcpServers run commands at start, with their tokens)"},
	{"shell-snapshots", "Claude Code's shell snapshots (sourced before every Bash command)"},
	{"session-env", "Claude Code's session environment"},
	{"plugins", "Claude Code's plugins (hooks and commands of their own)"},
}

// claudeExecConfig are entries of a Claude Code configuration directory
// that run code or steer the agent later. Anything else inside one is
// executable configuration too (new kinds appear with new versions).
var claudeExecConfig = []named{
	{"skills", "Claude Code skills"}, {"commands", "Claude Code commands"},
	{"agents", "Claude Code agents"}, {"hooks", "Claude Code hook scripts"},
	{"workflows", "Claude Code workflows"}, {"routines", "Claude Code routines"},
	{"output-styles", "Claude Code output styles"}, {"rules", "Claude Code rules"},
	{"scheduled_tasks.json", "Claude Code scheduled tasks"},
	{"launch.json", "Claude Code launch configuration"}, {"loop.md", "Claude Code loop prompt"},
}

// Classify says how the absolute path p is protected. p is judged as
// written: callers pass both the literal (cleaned) and the resolved path
// (fsx.Resolve) and keep the stronger answer.
func (pl Places) Classify(p string) Protection {
	if !filepath.IsAbs(p) {
		return Protection{}
	}
	p = filepath.Clean(p)
	// Whether p lies below home is the same for every entry: asked once
	// (it was asked per entry, and a command's every word is classified).
	homes := pl.homes()
	belowHome := false
	for _, h := range homes {
		belowHome = belowHome || insideFold(p, h)
	}
	var best Protection
	for _, e := range pl.entries() {
		switch {
		case len(p) == len(e.path) && foldEqual(p, e.path) || insideFold(p, e.path):
			if e.claudeDir {
				best = best.max(claudeRules(e.path, relSegs(e.path, p), e.desc()))
				continue
			}
			best = best.max(Protection{Tier: e.tier, Secret: e.secret, What: e.desc(), Path: e.path})
		case belowHome && e.tier == GuardCritical && !e.exact && insideFold(e.path, p):
			// An ancestor below home: moving or removing it takes the
			// guard's files with it.
			best = best.max(Protection{Tier: GuardCritical, What: "a directory holding " + e.desc(), Path: e.path})
		}
	}
	if slices.ContainsFunc(homes, func(h string) bool { return foldEqual(h, filepath.Dir(p)) }) && strings.HasPrefix(strings.ToLower(filepath.Base(p)), ".claude.json") {
		best = best.max(Protection{Tier: GuardCritical, Secret: true, What: "Claude Code's state (~/.claude.json: mcpServers run commands at start, with their tokens; hooks and permissions too)", Path: p})
	}
	segs := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	return best.max(anyDepthRules(segs, true))
}

// claudeRules classifies rest, the path below the Claude Code configuration
// directory dir.
func claudeRules(dir string, rest []string, what string) Protection {
	if len(rest) == 0 {
		return Protection{Tier: GuardCritical, What: what + ", which holds the settings", Path: dir}
	}
	first := strings.ToLower(rest[0])
	at := filepath.Join(dir, rest[0])
	for _, n := range claudeCritical {
		if ok, _ := filepath.Match(n.name, first); ok {
			// Claude Code's state holds MCP servers' tokens: secret too.
			return Protection{Tier: GuardCritical, Secret: n.name == claudeStateName, What: n.what, Path: at}
		}
	}
	for _, n := range claudeExecConfig {
		if first == n.name {
			return Protection{Tier: ExecConfig, What: n.what, Path: at}
		}
	}
	return Protection{Tier: ExecConfig, What: "a file in " + what, Path: at}
}

// gitRules classifies rest, the path below a .git directory dir (or the
// .git file of a worktree).
func gitRules(dir string, rest []string) Protection {
	if len(rest) == 0 {
		return Protection{Tier: ExecConfig, What: "git's directory (its config and hooks run commands)", Path: dir}
	}
	switch strings.ToLower(rest[0]) {
	case "config", "config.worktree":
		return Protection{Tier: ExecConfig, What: "git's configuration (aliases, hooks path, filters run commands)", Path: filepath.Join(dir, rest[0])}
	case "hooks":
		return Protection{Tier: ExecConfig, What: "git hooks (run by the human's own git)", Path: filepath.Join(dir, rest[0])}
	}
	return Protection{Tier: ExecConfig, What: "a file in git's directory (.git)", Path: dir}
}

// ContainsSecret reports whether the directory p is, or holds, a path whose
// reading is denied: a recursive search from p would read it.
func (pl Places) ContainsSecret(p string) (Protection, bool) {
	if !filepath.IsAbs(p) {
		return Protection{}, false
	}
	p = filepath.Clean(p)
	for _, e := range pl.entries() {
		if e.secret && (foldEqual(p, e.path) || p == string(filepath.Separator) || insideFold(e.path, p) || insideFold(p, e.path)) {
			return Protection{Tier: e.tier, Secret: true, What: e.desc(), Path: e.path}, true
		}
	}
	return Protection{}, false
}

// relSegs is the segments of p below base, which p is at or inside
// (insideFold: the letters' case may differ).
func relSegs(base, p string) []string {
	if len(p) <= len(base)+1 {
		return nil
	}
	return strings.Split(p[len(base)+1:], string(filepath.Separator))
}

// foldEqual reports whether a and b are the same but for the case of
// ASCII letters. A fixed protected place is judged so: a home on a file
// system that ignores case (macOS's by default, Windows', a vfat or
// casefolded directory on Linux) opens ~/.SSH/id_rsa as ~/.ssh/id_rsa
// (the ninety-third attack run). Wider than the file system on Linux's
// usual ones: a ~/.SSH there is protected too, which costs nothing real.
func foldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// insideFold is inside with foldEqual's comparison.
func insideFold(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == filepath.Separator && foldEqual(p[:len(dir)], dir)
}

// inside reports whether the clean path p lies below the clean directory
// dir, without building dir+"/": Classify asks it of every entry for every
// word of a command.
func inside(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == filepath.Separator && strings.HasPrefix(p, dir)
}

// strictlyBelow reports whether p is inside dir and not dir itself.
func strictlyBelow(p, dir string) bool {
	return dir != "" && filepath.Clean(p) != filepath.Clean(dir) && fsx.Within(p, dir)
}

// Root is one fixed protected path of a machine.
type Root struct {
	Path   string
	Tier   Tier
	Secret bool
	What   string
}

// Roots lists the fixed protected paths of pl (the ones at any depth are
// named by SegmentCouldName), for checks that work on patterns rather
// than paths, such as refusing a file rule that could reach one.
func (pl Places) Roots() []Root {
	var out []Root
	for _, e := range pl.entries() {
		out = append(out, Root{Path: e.path, Tier: e.tier, Secret: e.secret, What: e.desc()})
	}
	for _, h := range pl.homes() {
		out = append(out, Root{Path: filepath.Join(h, ".claude.json"), Tier: GuardCritical, Secret: true, What: "Claude Code's state (~/.claude.json)"})
	}
	return out
}
