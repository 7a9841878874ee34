package confine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Env is what a plan is computed from besides the spec: the launcher's
// environment, which is the agent's shell's (the analysis refuses every
// assignment that could change these), checked all the same: no root may
// hold a path the guard keeps secret.
type Env struct {
	Home       string
	TempDir    string // $TMPDIR or /tmp
	GoModCache string // $GOMODCACHE, or the first $GOPATH entry's pkg/mod, or ~/go/pkg/mod
	// Places are the guard's own paths (state, config, binaries, keyring).
	Places policy.Places
	// UID owns the read-only capability's scratch directory.
	UID int
	// Getenv reads the launcher's environment (nil: nothing), for what
	// depends on more of it than the fields above (the git configuration
	// files core.hooksPath is read from).
	Getenv func(string) string `json:"-"`
}

// EnvFrom reads Env from getenv.
func EnvFrom(getenv func(string) string, places policy.Places, uid int) Env {
	e := Env{Home: places.Home, TempDir: getenv("TMPDIR"), Places: places, UID: uid, Getenv: getenv}
	if e.TempDir == "" || !filepath.IsAbs(e.TempDir) {
		e.TempDir = "/tmp"
	}
	e.GoModCache = getenv("GOMODCACHE")
	if e.GoModCache != "" && !toolDir(e.GoModCache, "cache/download") {
		// A directory the variable names is read whole only when it is
		// a module cache: GOMODCACHE=~/Documents in an approved prefix
		// read ~/Documents (the forty-second attack run).
		e.GoModCache = ""
	} else if e.GoModCache == "" || !filepath.IsAbs(e.GoModCache) {
		e.GoModCache = ""
		if gp, _, _ := strings.Cut(getenv("GOPATH"), string(filepath.ListSeparator)); gp != "" && filepath.IsAbs(gp) {
			e.GoModCache = filepath.Join(gp, "pkg", "mod")
		} else if e.Home != "" {
			e.GoModCache = filepath.Join(e.Home, "go", "pkg", "mod")
		}
	}
	return e
}

// Plan is the ruleset of one launch.
type Plan struct {
	ReadDirs, ReadFiles []string // read (and execute)
	// ListDirs are listed, names only, their files' contents unread: the
	// top of the repository the project is a directory of (findEnclosing).
	ListDirs              []string `json:",omitempty"`
	WriteDirs, WriteFiles []string // read and write (dirs: create and remove too)
	// Private are the launcher's own directories in its scratch directory
	// (a GOCACHE, a TMPDIR), read and written like WriteDirs. The scratch
	// directory lies in the temp directory, which project-write writes, so
	// a confined program can replace one with a link (to ~/.ssh) before a
	// later launch: each is granted by a descriptor opened without
	// following a link and checked to be a directory of this user's
	// (apply), never by its path.
	Private []string
	// Owner is the user the private directories must belong to.
	Owner int
	// NoFollow are rule paths that confined code could replace by a link
	// between the plan and the launch: the git directories a worktree's
	// .git file names (+git writes them and their parent), and the
	// enclosing repository's (findEnclosing). Their rule is opened without
	// following a link in the last name, and a link there fails the
	// launch (a file's, the enclosing repository's .gitignore, gets no
	// rule instead): a plan prepared by the hook must not open, when the
	// call starts, a link a concurrent call put where it had checked a git
	// directory (to ~/.ssh).
	NoFollow []string
	Network  bool
	// OwnNet: the launch is in a network namespace of its own, whose only
	// interface is its own loopback (set by the second stage once it
	// brought it up). Nothing outside is reachable from there, so the
	// program may open IPv4 and IPv6 sockets, bind and connect any port:
	// a test's own server (httptest, a database on 127.0.0.1) works, and
	// neither the machine's services nor the internet is reached.
	OwnNet bool `json:"-"`
	// Env are the variables the program gets set: TMPDIR (a private
	// directory under read-only), GOCACHE, npm_config_cache,
	// PYTHONPYCACHEPREFIX and PIP_CACHE_DIR (a private cache per
	// capability, never the user's own: a build cache is code the user's
	// next build runs, npm's what their next npx runs).
	Env map[string]string
	// KeepEnvOnly: the program keeps of the launcher's environment only
	// the variables readOnlyEnv names (read-only); otherwise all of it.
	KeepEnvOnly bool
	// NoLinks: the program makes no symbolic link in the project (the
	// jail's capability: writeDirAccess), where the first stage makes
	// names too (makeServed).
	NoLinks bool
	// Scratch is the launcher's scratch directory (scratchDir): the
	// caches, and the launches' own directories.
	Scratch string
	// RunDir is this launch's own directory in the scratch directory
	// (its TMPDIR is in it), removed when the launch's last process has
	// exited.
	RunDir string
	// Project is the project a writing capability writes ("" under
	// read-only): after the call, what it created there is swept.
	Project string
	// Root is the project, whatever the capability: a rule below it is
	// opened from it without following a link (restrict).
	Root string
	// RootID is Root's device and inode when the plan was made: the rules
	// (addRules), the sweep and a later launch's recovery act on Root only
	// while it is still that directory. A call of an enclosing project
	// that put a link to the home where the project was made the sweep
	// walk the home and hold back .bashrc (the fifteenth attack run).
	RootID [2]uint64
	// RuleIDs are the device and inode of the project's directories and
	// files a write rule names (WriteDirs, WriteFiles), as the walk read
	// them: a rule is added only while its path still leads to that one
	// (addRules). A concurrent call that swapped, between the walk and the
	// rules, a directory the walk found clean for one that holds
	// executable configuration (a nested repository) would otherwise have
	// that one written whole.
	RuleIDs map[string][2]uint64 `json:",omitempty"`
	// Held are the paths in the project the capability may not change
	// (executable configuration beside what it writes): a launch in its
	// own mount namespace mounts each read-only, so that not even its
	// mode, owner, times or extended attributes change.
	Held []string
	// heldDirs are the held entries that are directories, by device and
	// inode as the plan saw them: the sweep leaves one as it is only while
	// it is still the same directory (another call's sweep may have moved
	// it out, and this call made one under its name: an attack run's
	// git directory src/x, held by a plan taken while a call beside it
	// ran, was made again and left).
	heldDirs map[string][2]uint64
	// Dirs are the project's directories as the plan saw them, with
	// their change times: after the call, a directory whose change time
	// moved is read again for what was created in it (sweep).
	Dirs map[string]int64 `json:"-"`
	// Unclean are the project's directories that hold executable
	// configuration somewhere below, and the top: no rule reaches them
	// whole (their files and clean subdirectories have their own), so with
	// the filter alone, or with namespaces where the mounts cannot hold
	// the project whole, the broker makes their new names
	// (broker_linux.go; the second stage reads them in its hand-over).
	Unclean []string
	// RemoveDirs are the outermost of Unclean that are, or are in, a
	// directory of installed packages or build products (bulkDir:
	// node_modules, .venv, vendor, ...): a rule with the two remove
	// rights alone reaches each whole, so that what is in it may be
	// removed, protected entries too (a package's own AGENTS.md or
	// .vscode/: rm -rf node_modules, git clean -fdx), and nothing in
	// them written that was not (removableDirs). With namespaces the
	// protected entries in them are not mounted (a mount point is not
	// removed), and the project is not written whole.
	RemoveDirs []string `json:",omitempty"`
	// SharedTemp is the temp directory the launch was given ($TMPDIR or
	// /tmp), which it does not write.
	SharedTemp string
	// TopWritable: where isolate mounts every Held entry read-only, the
	// project may be written as a whole, its top included.
	TopWritable bool
	// Kept are the project's entries a writing capability left alone
	// although they are protected (+git's .git): not swept, and names
	// made in them are judged by GitPins alone (either stage's broker).
	Kept []string
	// GitPins are the configuration and hooks of the git directories +git
	// writes (gitpin.go): held read-only with namespaces (they are in
	// Held too), never made by either stage's broker (one that does not
	// exist cannot be mounted: commondir), put back after the call either
	// way.
	GitPins []string
	// GitDirs are the git directories in the project +git writes, granted
	// whole only by the second stage, where each pin is mounted read-only
	// (stage2); with the filter alone the write set holds their entries
	// but the pins, and the broker serves the directories that hold a pin
	// (gitWriteSet), so that no pin is written at all.
	GitDirs []string
	// hooksPaths are the hook directories core.hooksPath names (the
	// sweep judges by them too).
	hooksPaths []string
	// imports are the files the project's instruction files import
	// (policy.InstructionImports) and its .envrc loads
	// (policy.EnvrcLoads).
	imports []string
	// pkgScripts are, by package.json, the entries the project's git
	// hooks and configuration run by name (policy.PackageScripts): put
	// back after a writing call that changed one (pkgscripts_linux.go).
	pkgScripts map[string][]string
	// pkgWorkspaces are, by a workspace root's manifest, the entries
	// those hooks run in each of its workspaces
	// (policy.PackageWorkspaceScripts): a workspace the call made is
	// judged by them after it (newWorkspacePins).
	pkgWorkspaces map[string][]string
	// GoStatDir is the module cache's directory where go writes what it
	// found of the project's own module's version in git (gostat.go):
	// the program may write stats there, whatever the capability;
	// goStatBefore are its entries before the call (sweepGoStat).
	GoStatDir    string
	goStatBefore map[string]bool
	// PrivateHome are the files and directories of the home a tool's
	// rule names that the launch does not read, their mode (or a
	// directory's on the way) keeping other users out (homeVet): a tool
	// that needs one stops there (doctor says which).
	PrivateHome []string `json:"-"`
	// Unread are the directories a tool would look in that the launch
	// leaves unread, and why (doctor says each): a directory of the search
	// path that is the home or a hidden directory of it (pathRules); the
	// repository the project is a directory of, where the launch may not
	// read it (findEnclosing).
	Unread []Unread `json:"-"`
	// goStatMade are the directories the plan made for GoStatDir, the
	// deepest last: removed after the call while empty.
	goStatMade []string
	// started is when the plan was made: a link changed since is the
	// call's (the sweep judges it, linkJudge).
	started time.Time
	// links are the links in the project the walk saw: the sweep judges
	// each again (a later call can change what an old link leads to).
	links []string
	// venvs are the directories in the project the walk saw a pyvenv.cfg
	// in, Python environments: the sweep looks in each one's bin, and
	// holds what the call made or changed there, even where the call
	// moved the pyvenv.cfg out (venvBin).
	venvs []string
	// versionFiles are the version files (policy.IsVersionFile: .nvmrc,
	// .python-version) the walk saw: the sweep judges each the call
	// rewrote in place, which changes no directory (lookVersionFiles).
	versionFiles []string
	// pyDirs are the device and inode of the directories of the project
	// whose files a Python environment's python runs by where they are
	// (site-packages and dist-packages, each environment's bin), as the
	// walk saw them: one that is another directory after the call (moved
	// there, or below a directory moved there) holds nothing the plan saw,
	// and every file in it counts as the call's (sweeper.movedIn).
	pyDirs map[string][2]uint64
	// runLock holds RunDir's lock while the launcher lives (launchDir);
	// recovered is what the sweep of a killed launch found, said on the
	// launch's stderr (recoverKilled).
	runLock   int
	recovered string
}

// readOnlyEnv are the variables a read-only program keeps from the agent's
// shell: what the read-only tools read to run (locale, terminal, colours,
// paths, Go's own settings, a proxy and its certificates), and nothing
// else. The environment is where tokens live (GITHUB_TOKEN, NPM_TOKEN,
// cloud keys, an API key the agent itself was started with): the analysis
// refuses printenv, env and $VAR over them, and a read-only launch drops
// every variable this list does not name, so code that slipped past the
// analysis cannot print one either. An unknown name is dropped: a wrong
// guess here costs a setting, never a secret.
var readOnlyEnv = map[string]bool{
	"HOME": true, "PATH": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true, "SHLVL": true,
	"TERM": true, "COLORTERM": true, "TERMINFO": true, "TERMINFO_DIRS": true, "COLUMNS": true, "LINES": true,
	"LANG": true, "LANGUAGE": true, "TZ": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"LS_COLORS": true, "GREP_COLOR": true, "GREP_COLORS": true, "TIME_STYLE": true, "QUOTING_STYLE": true,
	"BLOCK_SIZE": true, "DF_BLOCK_SIZE": true, "DU_BLOCK_SIZE": true, "POSIXLY_CORRECT": true, "MAGIC": true,
	"RIPGREP_CONFIG_PATH": true,
	"XDG_CONFIG_HOME":     true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true,
	"XDG_CONFIG_DIRS": true, "XDG_DATA_DIRS": true,
	// Where the tools keep their configuration and toolchains: paths,
	// not secrets, and what the home's read list is found by.
	"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true,
	"CARGO_HOME": true, "RUSTUP_HOME": true, "NVM_DIR": true, "PYENV_ROOT": true, "VOLTA_HOME": true, "GH_CONFIG_DIR": true,
	"GOROOT": true, "GOPATH": true, "GOFLAGS": true, "GOTOOLCHAIN": true, "GOMODCACHE": true, "GOWORK": true,
	"GOOS": true, "GOARCH": true, "GOAMD64": true, "GOARM64": true, "GOEXPERIMENT": true, "GODEBUG": true,
	"GOENV": true, "GO111MODULE": true, "GOPRIVATE": true, "GONOSUMDB": true, "GOINSECURE": true, "GORACE": true,
	"CC": true, "CXX": true, "AR": true, "PKG_CONFIG": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	// Settings that change a program's output and build targets, never a
	// secret (the prefixes shellparse takes as inert): a project's tests
	// read them, and dropped, `NODE_ENV=test` in the agent's environment
	// made the jailed test suite run as another (the usability run of
	// 2026-12-07); and the Python environment the shell activated.
	"CI": true, "NODE_ENV": true, "RAILS_ENV": true, "RACK_ENV": true, "APP_ENV": true, "VERBOSE": true,
	"GOARM": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true, "GOTRACEBACK": true,
	"RUST_BACKTRACE": true, "RUST_LOG": true, "DEBIAN_FRONTEND": true, "VIRTUAL_ENV": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true, "PYTHONIOENCODING": true, "PYTHONUTF8": true,
}

// proxyEnv are kept with the network capability too: the connection's
// way out (a proxy's URL may hold its password, and without the network
// there is nothing to reach).
var proxyEnv = map[string]bool{
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
}

// KeepsEnv reports whether the program keeps the launcher's variable name:
// all of them but under read-only, where readOnlyEnv, the locale's LC_
// and cgo's CGO_ families, and with +network the proxy's.
func (p Plan) KeepsEnv(name string) bool {
	if !p.KeepEnvOnly || readOnlyEnv[name] || p.Network && proxyEnv[name] {
		return true
	}
	for _, pre := range keptPrefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

// keptPrefixes are the families a read-only program keeps: the locale's
// and cgo's.
var keptPrefixes = []string{"LC_", "CGO_"}

// systemDirs hold what programs need to run: read and execute.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap",
	"/sys/devices/system/cpu", "/sys/fs/cgroup"}

// systemFiles are single files programs read.
var systemFiles = []string{"/dev/urandom", "/dev/random", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
	"/proc/filesystems", "/proc/loadavg", "/proc/sys/kernel/osrelease"}

// devices every capability may read and write. Not /dev/tty: the
// program's output goes where its standard streams go (the agent reads
// them); /dev/tty is the controlling terminal of the agent's session,
// often the user's own, where a program could read what the user types
// or write what the terminal acts on (an OSC 52 escape sets the
// clipboard the user pastes from).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// maxWalk bounds the project entries a project-write plan reads.
const maxWalk = 100_000

// listingSettle: the listing of a directory that changed less long
// before its walk began is not kept for the next (listings_linux.go).
const listingSettle = 2 * time.Second

// errSecretRoot: a root would open a path the guard keeps secret.
var errSecretRoot = errors.New("would make readable a path the guard keeps secret")

// NewPlan computes the ruleset for s, in steps: what every program reads
// (the system), what this one reads (its directory and toolchain, the
// home's configuration, the module cache), the private directories it
// writes (caches, its own temp), the project it reads, and under
// project-write what of the project it may write.
func NewPlan(s Spec, e Env) (Plan, error) {
	var p Plan
	// First: a refused launch must not act on the records its scratch
	// directory holds either (privateDirs recovers killed launches).
	if err := holdsScratch(s, e); err != nil {
		return p, err
	}
	p.started = time.Now()
	p.Network = s.Cap.Network
	// The directory core.hooksPath names is executable configuration
	// (husky's .husky/, .githooks/): never written, swept if created.
	e.Places.HooksPaths = policy.HooksPaths(s.Project, e.Home, e.Getenv)
	p.hooksPaths = e.Places.HooksPaths
	// And what the project's instruction files import (CLAUDE.md's
	// @docs/notes.md): instructions, never written; and what its .envrc
	// loads (source_env, dotenv): the user's shell runs it; and what its
	// executable configuration names as a program (.yarnrc.yml's
	// yarnPath, an MCP server's script): its tools run it.
	e.Places.Imports = policy.ProjectLoads(s.Project, e.Home, e.Places.HooksPaths)
	p.imports = e.Places.Imports
	b := &planner{p: &p, pl: e.Places.Prepare()}
	b.encl, p.Unread = findEnclosing(s.Project, e, b.pl)
	if err := b.readSystem(); err != nil {
		return p, err
	}
	if err := b.readProgram(s, e); err != nil {
		return p, err
	}
	if err := b.privateDirs(s, e); err != nil {
		return p, err
	}
	gitDirs, err := b.readProject(s, e.Home)
	if err != nil {
		return p, err
	}
	// The jail keeps read-only's environment: a bare env under it must
	// not show the model a token (issue 36).
	p.KeepEnvOnly = s.Cap.Jail
	p.NoLinks = s.Cap.Jail
	if !s.Cap.Write && !s.Cap.Git {
		p.KeepEnvOnly = true
		return p.sorted(), nil
	}
	if err := b.writeProject(s, gitDirs); err != nil {
		return p, err
	}
	return p.sorted(), nil
}

// planner is NewPlan at work: the plan it fills, and the prepared
// protected places it keeps out of it.
type planner struct {
	p  *Plan
	pl policy.Places
	// encl is the repository the project is a directory of, where the
	// launch reads it (findEnclosing).
	encl enclosing
}

// covered: a read rule above path already grants it (rules only add
// rights, so leaving this one out narrows nothing). Each rule costs
// both launchers three system calls: /bin, /lib, /sbin (links into
// /usr on merged-/usr systems) and a program's own /usr/bin need none.
func (b *planner) covered(path string) bool {
	for _, d := range b.p.ReadDirs {
		if isAncestorOrSelf(d, path) {
			return true
		}
	}
	return false
}

// addRead lets the program read path, a directory or a file, unless a
// rule covers it already or it is not there; a directory that holds a
// secret is an error (errSecretRoot).
func (b *planner) addRead(path string) error {
	if b.covered(path) {
		return nil
	}
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if t, err := os.Readlink(path); err == nil {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(path), t)
			}
			if b.covered(filepath.Clean(t)) {
				return nil
			}
		}
		fi, err = os.Stat(path)
	}
	if err != nil {
		return nil // what is not there needs no rule
	}
	if fi.IsDir() {
		if pr, ok := b.pl.ContainsSecret(path); ok {
			return fmt.Errorf("%s %w (%s)", path, errSecretRoot, pr.What)
		}
		b.p.ReadDirs = append(b.p.ReadDirs, path)
	} else {
		b.p.ReadFiles = append(b.p.ReadFiles, path)
	}
	return nil
}

// readSystem: what every program reads (systemDirs, systemFiles, its own
// /proc entries) and the devices it reads and writes.
func (b *planner) readSystem() error {
	p := b.p
	for _, d := range systemDirs {
		if err := b.addRead(d); err != nil {
			return err
		}
	}
	for _, f := range systemFiles {
		if _, err := os.Stat(f); err == nil {
			p.ReadFiles = append(p.ReadFiles, f)
		}
	}
	// This process's own /proc entries (df reads mountinfo); a child's
	// are its own pid's and stay closed. By the name /proc/self, which the
	// launcher opens when it builds the ruleset: the process it becomes
	// by execve keeps its pid.
	p.ReadDirs = append(p.ReadDirs, "/proc/self")
	for _, f := range devices {
		if _, err := os.Stat(f); err == nil {
			p.WriteFiles = append(p.WriteFiles, f)
		}
	}
	return nil
}

// readProgram: what this program reads beside the system.
func (b *planner) readProgram(s Spec, e Env) error {
	// The program's own directory, and a toolchain's root above bin/
	// (/usr/local/go, ~/sdk/go1.26): never the home itself, nor a hidden
	// directory of the home that holds bin/ among the user's other files
	// (~/.cargo beside credentials.toml, cargo login's token; ~/.local
	// beside share/ and state/).
	exeDir := filepath.Dir(s.Exe)
	if err := b.addRead(exeDir); err != nil {
		return err
	}
	if filepath.Base(exeDir) == "bin" {
		if root := filepath.Dir(exeDir); !isAncestorOrSelf(root, e.Home) && !hiddenInHome(root, e.Home) {
			if err := b.addRead(root); err != nil {
				return err
			}
		}
	}
	reads, private, unread := homeReadsWith(e, s, b.pl, b.encl)
	b.p.PrivateHome = private
	b.p.Unread = append(b.p.Unread, unread...)
	for _, c := range reads {
		if err := b.addRead(c); err != nil {
			return err
		}
	}
	// The module cache is read, never written, whatever the capability:
	// Go does not verify an extracted module again, so a write there is
	// code in the user's next build. A download needs an exact approval.
	if e.GoModCache != "" {
		if err := b.addRead(e.GoModCache); err != nil {
			return err
		}
		// But for the stat go writes of the module the call is in.
		b.p.GoStatDir, b.p.goStatBefore, b.p.goStatMade = goStatDir(e.GoModCache, s.Project, s.Cwd)
		if b.p.GoStatDir != "" {
			b.p.NoFollow = append(b.p.NoFollow, b.p.GoStatDir)
		}
	}
	return nil
}

// privateDirs: the directories of the program's own it writes, and the
// variables that send it there.
func (b *planner) privateDirs(s Spec, e Env) error {
	p := b.p
	scratch, err := scratchDir(e)
	if err != nil {
		return err
	}
	// A private directory is made here and checked where it is granted
	// (apply: by a descriptor, not followed if it is a link).
	p.Owner = e.UID
	private := func(name string) (string, error) {
		d := filepath.Join(scratch, name)
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("failed to create %s: %w", d, err)
		}
		p.Private = append(p.Private, d)
		return d, nil
	}
	p.Env = map[string]string{}
	// The caches, one per capability kind and project (CacheDir).
	// npm's too (npm_config_cache): the user's ~/.npm is what their next
	// npm install and npx trust (npx runs what its _npx directory holds,
	// unchecked; a cached package document names the tarball and its
	// hash), so a confined program never writes it. pip's too
	// (PIP_CACHE_DIR): the wheels it built are what its next install
	// takes unchecked.
	write := s.Cap.Write || s.Cap.Git
	now := time.Now()
	var caches []string
	for _, c := range privateCaches {
		if p.Env[c.env], err = private(CacheDir(c.name, write, s.Project)); err != nil {
			return err
		}
		caches = append(caches, p.Env[c.env])
	}
	markUsed(scratch, caches, now)
	pruneCaches(scratch, now)
	// A temp directory of this launch's own, removed when its last
	// process has exited: never the shared one (TMPDIR, /tmp, /var/tmp,
	// /dev/shm), where an unconfined process opens files by name (Claude
	// Code's Bash wrapper writes $TMPDIR/claude-XXXX-cwd after every
	// call: a link planted there would make it write where it points).
	var recovered strings.Builder
	run, lock, err := launchDir(scratch, e, &recovered)
	p.recovered = recovered.String()
	if err != nil {
		return err
	}
	p.Scratch, p.RunDir, p.runLock = scratch, run, lock
	p.SharedTemp = e.TempDir
	if p.Env["TMPDIR"], err = private(filepath.Join(launchesDir, filepath.Base(run), "tmp")); err != nil {
		return err
	}
	return nil
}

// CacheDir names, in the launcher's scratch directory, the private cache
// name ("go-build", "npm", "pycache") of a launch that may write (or
// not) in project: one per capability kind, so that read-only code cannot
// plant what project-write runs, and one per project, so that one
// project's code cannot plant what another's runs. A shared go-build-rw
// let an attack run rewrite the cache's entry for fmt from project A, and
// project B's next go run ran it with B's write rights. Each cache starts
// cold in a new project.
func CacheDir(name string, write bool, project string) string {
	kind := "ro"
	if write {
		kind = "rw"
	}
	sum := sha256.Sum256([]byte(project))
	return name + "-" + kind + "-" + hex.EncodeToString(sum[:8])
}

// ProjectCaches names, in the launcher's scratch directory, every private
// cache the launches in project may have made (CacheDir's, both kinds):
// what to remove when the project is gone.
func ProjectCaches(project string) []string {
	var names []string
	for _, c := range privateCaches {
		names = append(names, CacheDir(c.name, false, project), CacheDir(c.name, true, project))
	}
	return names
}

// ScratchDirIn is the launcher's scratch directory of the user uid in the
// temp directory tmp.
func ScratchDirIn(tmp string, uid int) string {
	return filepath.Join(tmp, fmt.Sprintf("loopguard-scratch-%d", uid))
}

// privateCaches are the private caches: each one's name (CacheDir's) and
// the variable that points its tool at it.
var privateCaches = []struct{ name, env string }{
	{"go-build", "GOCACHE"}, {"npm", "npm_config_cache"}, {"pycache", "PYTHONPYCACHEPREFIX"}, {"pip", "PIP_CACHE_DIR"},
}

// staleCache is how long a private cache is kept that no launch has used;
// pruneEvery, how often a launch looks for such caches.
const (
	staleCache = 7 * 24 * time.Hour
	pruneEvery = time.Hour
)

// usedDir holds, in scratch, a file per private cache whose time is when a
// launch last used it: not the cache's own, which the program using it
// may set (the thirty-eighth attack run's touch -d 2020-01-01 $GOCACHE).
const usedDir = "used"

// gitexecDir holds, in scratch, the records of what git's refs hold where
// executable configuration could be (gitrename_linux.go).
const gitexecDir = "gitexec"

// markUsed sets the time of each cache's file in scratch/used to now.
func markUsed(scratch string, caches []string, now time.Time) {
	used := filepath.Join(scratch, usedDir)
	if os.Mkdir(used, 0o700) != nil {
		if fi, err := os.Lstat(used); err != nil || !fi.IsDir() {
			return
		}
	}
	for _, c := range caches {
		f := filepath.Join(used, filepath.Base(c))
		if os.Chtimes(f, now, now) != nil {
			_ = os.WriteFile(f, nil, 0o600)
		}
	}
}

// maxPrune bounds the time one launch spends removing stale caches; what
// is left is the next prune's.
const maxPrune = 2 * time.Second

// pruneCaches removes the private caches in scratch (CacheDir's) that no
// launch has used for staleCache (their files' times in scratch/used), at
// most once every pruneEvery (the time of scratch/pruned), for at most
// maxPrune: one per project and capability kind, they outlast their
// project (a checkout removed, a test's), and TMPDIR is often in memory
// (tmpfs). Go trims the entries of a cache in use by itself; npm's and
// Python's grow. A cache with no such file (made before there were any)
// gets one now, and its week begins.
func pruneCaches(scratch string, now time.Time) {
	stamp := filepath.Join(scratch, "pruned")
	if fi, err := os.Lstat(stamp); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < pruneEvery && fi.ModTime().Before(now.Add(time.Minute)) {
		return
	}
	// The stamp first: a launch beside this one does not prune too.
	// scratch is the user's alone (scratchDir), and no confined program
	// writes it: the stamp is a file or nothing, unless the user made it
	// otherwise.
	if fi, err := os.Lstat(stamp); err == nil && !fi.Mode().IsRegular() {
		return
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil || os.Chtimes(stamp, now, now) != nil {
		return
	}
	ents, err := os.ReadDir(scratch)
	if err != nil {
		return
	}
	start := time.Now()
	// The records of what git's refs hold (gitrename_linux.go): each is
	// made again when it is needed and not there.
	if recs, err := os.ReadDir(filepath.Join(scratch, gitexecDir)); err == nil {
		for _, r := range recs {
			if time.Since(start) > maxPrune {
				return
			}
			if fi, err := r.Info(); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleCache {
				_ = os.Remove(filepath.Join(scratch, gitexecDir, r.Name()))
			}
		}
	}
	for _, ent := range ents {
		if !ent.IsDir() || !isCacheName(ent.Name()) {
			continue
		}
		if time.Since(start) > maxPrune {
			return
		}
		used := filepath.Join(scratch, usedDir, ent.Name())
		fi, err := os.Lstat(used)
		if err != nil {
			markUsed(scratch, []string{ent.Name()}, now)
			continue
		}
		if now.Sub(fi.ModTime()) > staleCache && removeRun(filepath.Join(scratch, ent.Name())) == nil {
			_ = os.Remove(used)
		}
	}
}

// isCacheName reports whether name is one CacheDir gives.
func isCacheName(name string) bool {
	for _, c := range privateCaches {
		rest, ok := strings.CutPrefix(name, c.name+"-")
		if !ok {
			continue
		}
		if rest, ok = strings.CutPrefix(rest, "ro-"); !ok {
			rest, ok = strings.CutPrefix(rest, "rw-")
		}
		if _, err := hex.DecodeString(rest); ok && len(rest) == 16 && err == nil {
			return true
		}
	}
	return false
}

// holdsScratch refuses a launch that may write a project holding a temp
// directory where a launcher of the user's keeps its scratch directory
// (ScratchRoots): the program could write the records of other launches
// there, which a later launch's recovery, and the hook's after a call,
// act on (the sixty-sixth attack run's project /p with TMPDIR=/p/tmp
// removed its own record before its launcher was killed, and forged one
// whose sweep moved a file of another repository, outside the project,
// and killed another call's cgroup).
func holdsScratch(s Spec, e Env) error {
	if !s.Cap.Write {
		return nil
	}
	if root := HeldTempDir(s.Project, e.TempDir, e.UID); root != "" {
		return fmt.Errorf("the project %s holds the temp directory %s, where launches keep their records: set TMPDIR to a directory outside the project", s.Project, root)
	}
	return nil
}

// HeldTempDir is the first of the temp directories where launches of the
// user uid keep their records (ScratchRoots of tmpDir) that project holds,
// "" when it holds none: the launcher refuses a launch that may write such
// a project (holdsScratch), and the hook's jail does not take it. The
// project's path has no link on it (openProject); a temp directory's may,
// and the scratch directory is made through it (the sixty-seventh attack
// run's TMPDIR, a link into the project): where it leads counts too.
func HeldTempDir(project, tmpDir string, uid int) string {
	for _, root := range ScratchRoots(tmpDir, uid) {
		if isAncestorOrSelf(project, root) {
			return root
		}
		if r, err := filepath.EvalSymlinks(root); err == nil && isAncestorOrSelf(project, r) {
			return root
		}
	}
	return ""
}

// readProject: the project, and the git directories a worktree's .git
// file names, which it returns. A project that holds the home directory
// or a secret is an error: it could not be read without it.
func (b *planner) readProject(s Spec, home string) ([]string, error) {
	p := b.p
	// Through no link (dirIdentity): where the path leads is where it
	// says, so the home and the secrets are judged by the path itself.
	id, err := dirIdentity(s.Project)
	if err != nil {
		return nil, fmt.Errorf("the project %s: %w", s.Project, err)
	}
	if isAncestorOrSelf(s.Project, home) || s.Project == "/" {
		return nil, fmt.Errorf("the project %s holds the home directory: nothing in it could be kept unreadable", s.Project)
	}
	// And by the home's real path, where the home is reached through a
	// link (/home -> /var/home): the project is a real path (the
	// ninety-first attack run's project at the home's real path read
	// every secret in it). The secrets' places are at both paths
	// (policy.RealHome).
	if real := policy.RealHome(home); real != "" && isAncestorOrSelf(s.Project, real) {
		return nil, fmt.Errorf("the project %s holds the home directory (%s, through a link): nothing in it could be kept unreadable", s.Project, home)
	}
	if pr, ok := b.pl.ContainsSecret(s.Project); ok {
		return nil, fmt.Errorf("the project %s holds %s, which must stay unreadable", s.Project, pr.What)
	}
	p.RootID = id
	gitDirs := linkedGitDirs(s.Project)
	for _, g := range gitDirs {
		if err := b.addRead(g); err != nil {
			return nil, err
		}
	}
	p.NoFollow = append(p.NoFollow, gitDirs...)
	p.Root = s.Project
	p.ReadDirs = append(p.ReadDirs, s.Project)
	// The repository the project is a directory of: its git directories
	// (HEAD, the index, objects, refs, its configuration) and the few
	// files of its tree git reads from here, never written whatever the
	// capability (+git writes only the project's own), never its tree.
	// Each git directory by no link, as a worktree's (findEnclosing
	// judged each where it is).
	p.ReadDirs = append(p.ReadDirs, b.encl.gitDirs...)
	p.NoFollow = append(p.NoFollow, b.encl.gitDirs...)
	p.ReadFiles = append(p.ReadFiles, b.encl.files...)
	p.NoFollow = append(p.NoFollow, b.encl.files...)
	if b.encl.top != "" {
		// Its tree listed, names only, so that git status from here
		// finds the untracked files (git opens the top first, and
		// reported none, the project's own neither, without it).
		p.ListDirs = append(p.ListDirs, b.encl.top)
		p.NoFollow = append(p.NoFollow, b.encl.top)
	}
	return gitDirs, nil
}

// writeProject: under project-write, the project but its executable
// configuration (and with git, the git directories).
func (b *planner) writeProject(s Spec, gitDirs []string) error {
	p := b.p
	p.Project = s.Project
	p.pkgScripts, p.pkgWorkspaces = policy.PackageWorkspaceScripts(s.Project, p.hooksPaths)
	w := newWalker(b.pl, s.Project, s.Cap.Git)
	// Walked from the project's descriptor, through no link: a
	// concurrent call that swaps a directory for a link to another tree
	// while the walk reads makes that directory unlistable (unclean), never
	// the other tree's listing its own. The project is the one readProject
	// saw, or nothing is writable.
	root, err := openProject(s.Project, p.RootID)
	if err != nil {
		return fmt.Errorf("the project %s: %w", s.Project, err)
	}
	defer closeFd(root)
	w.root = root
	// The listings the project's last walk read, for the directories
	// that have not changed since (listings_linux.go).
	if w.listings = openListings(b.pl.StateDir, s.Project, root, p.started); w.listings != nil {
		w.seen = make(map[string]int64, w.listings.dirs())
	}
	var gitUnclean []string
	if s.Cap.Git {
		for _, g := range append(gitDirs, filepath.Join(s.Project, ".git")) {
			if fi, err := os.Lstat(g); err == nil && fi.IsDir() {
				w.skip = append(w.skip, g)
				p.Kept = append(p.Kept, g)
				// Its configuration and hooks stay as they are (gitpin.go).
				pins := gitPins(g)
				p.GitPins = append(p.GitPins, pins...)
				if g == filepath.Clean(s.Project) || !isAncestorOrSelf(s.Project, g) {
					// A linked worktree's, outside the project, where
					// the broker serves nothing: whole, its pins put
					// back after the call.
					p.WriteDirs = append(p.WriteDirs, g)
					continue
				}
				dirs, files, unclean, ok := gitWriteSet(g, pins)
				if !ok {
					p.WriteDirs = append(p.WriteDirs, g)
					continue
				}
				p.GitDirs = append(p.GitDirs, g)
				p.WriteDirs = append(p.WriteDirs, dirs...)
				p.WriteFiles = append(p.WriteFiles, files...)
				gitUnclean = append(gitUnclean, unclean...)
			}
		}
	}
	// The project's top is never writable as a whole: a new .mcp.json,
	// .envrc or .claude/ there is what the next session loads.
	w.walk(s.Project, true)
	// A nested .envrc (held by the walk: executable configuration at any
	// depth) loads files of its own, which direnv runs in the user's shell
	// when it enters that directory: protected as the top's loads are,
	// and walked again with them (the listings just read make it cheap).
	// What a nested instruction file imports, and what a held link leads
	// to in the project, likewise.
	linked, err := heldLinkTargets(w.held, w.heldLinks, s.Project)
	if err != nil {
		return err
	}
	if more := notIn(p.imports, slices.Concat(nestedEnvrcLoads(w.held, s.Project), nestedImports(w.held, s.Project, b.pl.Home), linked)); len(more) > 0 {
		p.imports = append(slices.Clone(p.imports), more...)
		pl := b.pl
		pl.Imports = p.imports
		b.pl = pl.Prepare()
		w = w.again(b.pl)
		w.walk(s.Project, true)
	}
	if w.listings != nil {
		w.listings.save()
	}
	p.WriteDirs = append(p.WriteDirs, w.dirs...)
	p.WriteFiles = append(p.WriteFiles, w.files...)
	p.Held = append(w.held, p.GitPins...)
	p.heldDirs = map[string][2]uint64{}
	for _, h := range append(slices.Clone(p.Held), p.Kept...) {
		if id, ok := dirID(h); ok {
			p.heldDirs[h] = id
		}
	}
	p.Dirs = w.seen
	p.links = w.links
	p.venvs = w.venvs
	p.versionFiles = w.versionFiles
	p.pyDirs = pyDirsOf(w.seen, w.venvs)
	p.Unclean = append(w.unclean, gitUnclean...)
	p.RemoveDirs = removableDirs(w.bulk, w, p)
	// The top may be written as a whole (a new file there: go build -o
	// app .) only where each protected entry of the project is mounted
	// read-only (a launch with its own mount namespace: isolate) and the
	// sweep sees every new name: the walk saw the whole project, no
	// protected entry is a link (a mount cannot hold a link in place),
	// and none is left unmounted to be removed (RemoveDirs).
	p.TopWritable = w.entries <= w.budget && !w.heldLink && !w.unlisted && len(p.RemoveDirs) == 0
	p.RuleIDs = w.ids
	return nil
}

// bulkRoot is the one of removeDirs (a plan's RemoveDirs) that p, a path
// in the project, is strictly in; "" none. A held entry there is removed,
// and not mounted (isolate); a move within one is the broker's
// (bulkMove).
func bulkRoot(removeDirs []string, p string) string {
	for _, d := range removeDirs {
		if p != d && isAncestorOrSelf(d, p) {
			return d
		}
	}
	return ""
}

func (p Plan) sorted() Plan {
	for _, l := range []*[]string{&p.ReadDirs, &p.ReadFiles, &p.ListDirs, &p.WriteDirs, &p.WriteFiles, &p.Private, &p.NoFollow, &p.Held, &p.RemoveDirs} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return p
}

// walker finds, below a project, what project-write may write: every
// directory with no executable configuration below it (one rule each), and
// in a directory that has some, each ordinary file (written in place,
// never created or removed there: Landlock's rights on a directory reach
// everything below it, .git/hooks too). Only names that could be
// protected at any depth (policy.NameCouldBeProtected) are judged by
// Classify; the guard's fixed paths inside the project (its binaries, a
// state directory) are looked up apart.
type walker struct {
	entryGuard
	// root is the project open (O_PATH), project its path: each
	// directory is read from root through no link (readDirAt); root -1
	// reads by path (tests).
	root     int
	project  string
	listings *listings // nil: every directory read (listings_linux.go)
	git      bool
	skip     []string // directories handled by the caller (the git dir)
	budget   int      // the entries it reads (maxWalk)
	entries  int
	dirs     []string
	files    []string
	held     []string // protected entries, kept read-only
	// holder: the directory walk is called for next is a holder (judge),
	// which is never clean.
	holder       bool
	heldLink     bool             // one of them is a link
	heldLinks    []string         // those that are links
	unlisted     bool             // a directory could not be read
	links        []string         // every link walked
	venvs        []string         // every directory walked that holds a pyvenv.cfg
	versionFiles []string         // every version file walked (policy.IsVersionFile)
	seen         map[string]int64 // every directory walked: its change time
	// ids are the device and inode of each directory and file a rule of
	// dirs and files names, as the walk read it (Plan.RuleIDs).
	ids     map[string][2]uint64
	unclean []string // directories walked whole that are not clean (the top too)
	bulk    []string // those of them that are, or are in, a bulk directory (bulkDir)

	gitDir bool // the directory just walked is a git directory (isGitDir)

	// The directories being walked, each one's entries and kids after
	// its parent's: a walk appends its own and cuts them off when it
	// returns, so that a tree of any size reuses a few slices.
	ents []dirEnt
	kids []kid
}

// kid is an entry a directory's rules may name: a file (by its name), or
// a directory (by its path) and whether it is clean.
type kid struct {
	name, path string
	dir, clean bool
	id         [2]uint64
}

// nestedEnvrcLoads are what the .envrc files among held (below the
// project's top) load.
func nestedEnvrcLoads(held []string, project string) []string {
	var envrcs []string
	for _, h := range held {
		if filepath.Base(h) == ".envrc" && filepath.Dir(h) != project {
			envrcs = append(envrcs, h)
		}
	}
	if len(envrcs) == 0 {
		return nil
	}
	return policy.EnvrcLoadsOf(project, envrcs)
}

// nestedImports are what the instruction files among held below the
// project's top import (CLAUDE.md's @notes.md in src/), but for those in a
// bulk directory: a package's own, which no agent reads unless it reads
// the package's files, and which would keep the package from removal.
func nestedImports(held []string, project, home string) []string {
	var files []string
	for _, h := range held {
		if dir := filepath.Dir(h); dir != project && policy.NestedInstructionFile(filepath.Base(h)) && !inBulk(project, dir) {
			files = append(files, h)
		}
	}
	if len(files) == 0 {
		return nil
	}
	return policy.InstructionImportsOf(files, home)
}

// notIn are the paths of more that had does not hold, looked up in a set
// (had holds up to 4,096 imports: not a scan for each).
func notIn(had, more []string) []string {
	if len(more) == 0 {
		return nil
	}
	set := make(map[string]bool, len(had))
	for _, h := range had {
		set[h] = true
	}
	return slices.DeleteFunc(more, func(m string) bool { return set[m] })
}

// heldLinkTargets are what the held entries that are links (links, in
// project), and the links inside the held directories (held), lead
// through and to in the project, spelled from project
// (policy.LinkTargets): a tool loads its configuration through the
// link (.claude -> cc, CLAUDE.md -> docs/ai.md, .claude/settings.json ->
// ../conf/settings.json), and a rule that writes the target, or
// retargets a link on the way, writes it (the fifty-second and
// fifty-third attack runs). A link that leads to the project's top is an
// error: everything there would be its tool's file.
func heldLinkTargets(held, links []string, project string) ([]string, error) {
	more, top := policy.LinkTargets(project, slices.Concat(links, policy.LinksIn(held, maxLinkedEntries)))
	if top != "" {
		return nil, fmt.Errorf("%s leads to the project's top: every file there is what its tool loads, so the project cannot be written confined", top)
	}
	return more, nil
}

// maxLinkedEntries bounds the entries of held directories a plan reads
// for links (policy.LinksIn).
const maxLinkedEntries = 4096

// again is a walker as new as w was, guarding by pl, that reads through
// w's project descriptor and listings.
func (w *walker) again(pl policy.Places) *walker {
	n := newWalker(pl, w.project, w.git)
	n.root, n.listings, n.skip = w.root, w.listings, w.skip
	if n.listings != nil {
		n.seen = make(map[string]int64, len(w.seen))
	}
	return n
}

func newWalker(pl policy.Places, project string, git bool) *walker {
	return &walker{entryGuard: newEntryGuard(pl, project), root: -1, project: project, git: git, budget: maxWalk, seen: map[string]int64{}, ids: map[string][2]uint64{}}
}

// bulkDir: a directory of installed packages or build products (a
// switch: the launcher's start allocates no table).
func bulkDir(name string) bool {
	switch name {
	case "node_modules", "bower_components", ".venv", "venv", "vendor", "target", "dist", "build", ".tox", ".nox",
		"__pycache__", ".mypy_cache", ".pytest_cache", ".gradle", ".next", ".nuxt", "Pods", ".terraform":
		return true
	}
	return false
}

// inBulk reports whether dir, a directory below project, is a bulk
// directory (bulkDir) or in one.
func inBulk(project, dir string) bool {
	rel, ok := strings.CutPrefix(dir, project+"/")
	if !ok {
		return false
	}
	for name := range strings.SplitSeq(rel, "/") {
		if bulkDir(name) {
			return true
		}
	}
	return false
}

// removableDirs are the outermost of bulk, the walk's unclean
// directories in a bulk directory (Plan.RemoveDirs), that hold none of
// what a removal must not touch: a fixed path (the hooks directory
// core.hooksPath names: its hooks removed are checks the user's next
// commit no longer runs; the guard's own paths; what the project's
// .envrc loads, its instruction files import, a held link leads to:
// protected by their paths, not their names, so that a directory made
// anew and moved into place there, which the broker judges by names,
// would bring the next shell or session another file, the sixtieth
// attack run's), a git directory +git writes or one of its pins, a
// guard-critical entry. What else they hold is a package's or a
// build's, which its tools remove and make again: no process runs a
// package's own AGENTS.md, .github/ or .vscode/ (an agent or an editor
// reads the project's), and nothing is written or made there but by
// the rules and the broker as before.
func removableDirs(bulk []string, w *walker, p *Plan) []string {
	slices.Sort(bulk)
	keep := slices.Concat(p.Kept, p.GitPins, w.skip)
	for f := range w.fixed {
		keep = append(keep, f)
	}
	for _, h := range w.held {
		if w.pl.Classify(h).Tier == policy.GuardCritical {
			keep = append(keep, h)
		}
	}
	var out []string
	for _, d := range bulk {
		if len(out) > 0 && isAncestorOrSelf(out[len(out)-1], d) {
			continue // in one already
		}
		if slices.ContainsFunc(keep, func(k string) bool { return isAncestorOrSelf(d, k) || isAncestorOrSelf(k, d) }) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// lastBulk moves the bulk directories among ents (bulkDir) after the
// others, each group in its order: past the walk's budget what is left
// is not written, and the project's own code, and a nested .envrc, come
// first (the forty-eighth attack run's node_modules of 101,000 files,
// listed first, hid svc/api/.envrc from the walk).
func lastBulk(ents []dirEnt) {
	var bulk []dirEnt
	n := 0
	for _, e := range ents {
		if e.typ.IsDir() && bulkDir(e.name) {
			bulk = append(bulk, e)
			continue
		}
		ents[n] = e
		n++
	}
	copy(ents[n:], bulk)
}

// entryGuard tells, of an entry of a project, whether it is executable
// configuration or an instruction file: the walk before a launch and the
// sweep after it ask the same question.
type entryGuard struct {
	pl    policy.Places
	fixed map[string]bool // fixedInProject
	above map[string]bool
}

func newEntryGuard(pl policy.Places, project string) entryGuard {
	fixed, above := fixedInProject(pl, project)
	return entryGuard{pl: pl, fixed: fixed, above: above}
}

// judge reports whether the entry at path p, named name, of type typ
// is held: a fixed path; anything but a directory where one of their
// ancestors is (a link ci -> elsewhere, where ci/hooks is the hooks
// directory, whose hooks git then runs); a name policy protects there.
// And whether it is a holder: a directory that holds a protected entry
// of two names or more, by its own name (.github, for
// .github/hooks; policy.Protection.Holds) or as a fixed path's ancestor
// (ci, for ci/hooks). A holder is not held: it is walked into, its
// protected entries held and the rest written (.github/workflows, the
// routine work the fifty-first run found refused with all of .github held),
// but never written whole (no rule makes a name in it: the broker judges
// each; with namespaces its held entries are mount points, which no
// rename moves). What is made in it is swept after the call by its own
// names, and one put in its place, a directory the plan did not see
// there, is looked at whole. In a holder (inHolder) every name is judged:
// .github/hooks is protected by its two names, and hooks alone is not a
// name policy.NameCouldBeProtected takes.
func (g entryGuard) judge(p []byte, name string, typ os.FileMode, inHolder bool) (held, holder bool) {
	if g.fixed[string(p)] {
		return true, false
	}
	if g.above[string(p)] {
		return !typ.IsDir(), typ.IsDir()
	}
	if !inHolder && !policy.NameCouldBeProtected(name) {
		return false, false
	}
	pr := g.pl.Classify(string(p))
	if pr.Holds && typ.IsDir() {
		return false, true
	}
	return pr.Protected(), false
}

// holder reports whether rel, a directory of project ("" its top), is a
// holder (judge): its every name is judged.
func (g entryGuard) holder(project, rel string) bool {
	if rel == "" {
		return false
	}
	p := project + "/" + rel
	return g.above[p] || g.pl.Classify(p).Holds
}

// fixedInProject are pl's fixed protected paths below project (the
// directory core.hooksPath names, the guard's own paths), whose last
// names are no protected names by themselves (policy.NameCouldBeProtected
// does not know them), and their ancestors below project.
func fixedInProject(pl policy.Places, project string) (fixed, above map[string]bool) {
	fixed, above = map[string]bool{}, map[string]bool{}
	for _, r := range pl.Roots() {
		if r.Path == project || !strings.HasPrefix(r.Path, project+"/") {
			continue
		}
		fixed[r.Path] = true
		for d := filepath.Dir(r.Path); d != project && strings.HasPrefix(d, project+"/"); d = filepath.Dir(d) {
			above[d] = true
		}
	}
	return fixed, above
}

// walk reports whether dir is clean: nothing in it is executable
// configuration, as far as the budget lets it look (a directory it could
// not finish is not clean, so nothing in it is writable), and the device
// and inode it read dir as (zero when it read none, or by path). A directory that
// is not clean, and the top, get rules for their children instead. An
// entry's path is made in a buffer, and kept as a string only where it is
// kept (a directory walked, a protected entry, a file a rule names).
func (w *walker) walk(dir string, top bool) (clean bool, id [2]uint64) {
	inHolder := w.holder
	w.holder = false
	start, kstart := len(w.ents), len(w.kids)
	defer func() { w.ents, w.kids = w.ents[:start], w.kids[:kstart] }()
	var ctime int64
	var ents []dirEnt
	var err error
	if w.root >= 0 {
		ctime, id, ents, err = w.list(strings.TrimPrefix(strings.TrimPrefix(dir, w.project), "/"))
	} else {
		ctime, ents, err = readDir(w.ents, dir, top)
	}
	w.ents = ents
	if err != nil {
		// Looked in by the sweep after the call whatever its change time
		// (a directory another call made unlistable, chmod 0300, got a
		// HEAD written in it past a sweep that read only directories
		// whose change time moved). What it holds is not known: the
		// project is not written whole (unlisted; the nineteenth attack
		// run's chmod 000 vendor/lib, by a call beside this one, hid
		// vendor/lib/.git from the walk, and no mount held it).
		w.seen[dir] = -1
		// Refused, not gone nor past PATH_MAX (a chain of long names,
		// which no program names either) nor a link put in its place
		// (nothing there can hold what was held: a held entry's
		// directories are not moved).
		w.unlisted = w.unlisted || errors.Is(err, os.ErrPermission)
		return false, id
	}
	w.seen[dir] = ctime
	end := len(w.ents)
	w.entries += end - start
	if w.entries > w.budget {
		return false, id
	}
	if !top && isGitDir(w.ents[start:end]) {
		w.gitDir = true // the caller holds it, whole
		return false, id
	}
	lastBulk(w.ents[start:end])
	pb := make([]byte, 0, len(dir)+64)
	pb = append(append(pb, dir...), '/')
	base := len(pb)
	clean = true
	for i := start; i < end; i++ {
		ent := w.ents[i] // a copy: a walk below may move w.ents
		pb = append(pb[:base], ent.name...)
		if ent.name == "pyvenv.cfg" {
			w.venvs = append(w.venvs, dir)
		}
		if ent.name[0] == '.' && policy.IsVersionFile(ent.name) {
			w.versionFiles = append(w.versionFiles, string(pb))
		}
		// Held (and the sweep leaves it be), but what the caller handles.
		held, holder := w.judge(pb, ent.name, ent.typ, inHolder)
		if skip := w.skips(pb); skip || held {
			clean = false
			if !skip {
				w.held = append(w.held, string(pb))
				if ent.typ&os.ModeSymlink != 0 {
					w.heldLink = true
					w.heldLinks = append(w.heldLinks, string(pb))
				}
			}
			continue
		}
		typ := ent.typ
		if typ == os.ModeIrregular { // gone, or its type unreadable
			clean = false
			continue
		}
		switch {
		case typ&os.ModeSymlink != 0:
			// A rule on a link would grant its target: none. Writing
			// through it needs the target's own rule. The sweep judges
			// it again after the call (what it leads to may change).
			w.links = append(w.links, string(pb))
			continue
		case typ.IsDir():
			p := string(pb)
			w.holder = holder
			c, cid := w.walk(p, false)
			if !c {
				clean = false
			}
			if w.gitDir {
				// A git directory under an ordinary name (git init
				// --bare src/e): git finds it as it finds .git, and
				// runs what its config names.
				w.gitDir = false
				w.held = append(w.held, p)
				continue
			}
			w.kids = append(w.kids, kid{path: p, dir: true, clean: c, id: cid})
		case typ.IsRegular():
			w.kids = append(w.kids, kid{name: ent.name, id: [2]uint64{id[0], ent.ino}})
		default:
			clean = false // devices, sockets, FIFOs: no rule
		}
	}
	if inHolder {
		clean = false
	}
	if clean && !top {
		return true, id
	}
	w.unclean = append(w.unclean, dir)
	if !top && inBulk(w.project, dir) {
		w.bulk = append(w.bulk, dir)
		w.noteID(dir, id)
	}
	for _, k := range w.kids[kstart:] {
		switch {
		case k.dir && k.clean:
			w.dirs = append(w.dirs, k.path)
			w.noteID(k.path, k.id)
		case !k.dir:
			f := dir + "/" + k.name
			w.files = append(w.files, f)
			w.noteID(f, k.id)
		}
	}
	return false, id
}

// list appends to w.ents the entries of the directory rel of the project
// (readDirAt), from the listing the last walk kept of it when it has not
// changed since.
func (w *walker) list(rel string) (ctime int64, id [2]uint64, ents []dirEnt, err error) {
	if w.listings == nil {
		return readDirAt(w.ents, w.root, rel)
	}
	if ctime, id, ents, ok := w.listings.lookup(w.ents, w.root, rel); ok {
		return ctime, id, ents, nil
	}
	ctime, id, ents, err = readDirAt(w.ents, w.root, rel)
	if err == nil {
		w.listings.keep(rel, ctime, id, ents[len(w.ents):])
	}
	return ctime, id, ents, err
}

// noteID keeps id for the rule on path, when the walk read one (a walk
// by path, or an inode the directory entry did not give, keeps none).
func (w *walker) noteID(path string, id [2]uint64) {
	if id[1] != 0 && w.root >= 0 {
		w.ids[path] = id
	}
}

// isGitDir reports whether ents, a directory's, make it a git directory
// (policy.IsGitDir): a HEAD and a commondir naming ../c, whose config set
// core.pager, ran the pager in an attack run; an attack run's objects ->
// o and refs -> rf got past a check of directories alone, and src/objects
// and src/refs, two executable files beside HEAD and a config, made src a
// git directory whose fsmonitor the user's git status ran.
func isGitDir(ents []dirEnt) bool {
	return policy.IsGitDir(func(yield func(string, os.FileMode) bool) {
		for _, e := range ents {
			if !yield(e.name, e.typ) {
				return
			}
		}
	})
}

// skips reports whether the path in p is one the caller handles.
func (w *walker) skips(p []byte) bool {
	for _, s := range w.skip {
		if s == string(p) {
			return true
		}
	}
	return false
}

// isAncestorOrSelf reports whether dir is p or holds it.
func isAncestorOrSelf(dir, p string) bool { return fsx.Within(p, dir) }

// hiddenInHome reports whether dir is a hidden directory right under home
// (~/.cargo, ~/.local).
func hiddenInHome(dir, home string) bool {
	return home != "" && filepath.Dir(dir) == filepath.Clean(home) && strings.HasPrefix(filepath.Base(dir), ".")
}

// linkedGitDirs are the git directories outside the project that its .git
// file (a worktree or a submodule) names: the gitdir and its common dir,
// each only if it is one (a HEAD file; an objects directory): the file is
// text in the project, and +git makes these directories writable.
// A .git file or a commondir is read no further than maxGitFile, and
// never from a FIFO (whose open would hang the launch).
func linkedGitDirs(project string) []string {
	data, err := fsx.ReadRegular(filepath.Join(project, ".git"), maxGitFile, 0)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(data), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(project, dir)
	}
	dir = filepath.Clean(dir)
	if !isFile(filepath.Join(dir, "HEAD")) {
		return nil // not a git directory (gitdir: ~/.ssh): no rule
	}
	out := []string{dir}
	if c, err := fsx.ReadRegular(filepath.Join(dir, "commondir"), maxGitFile, 0); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(dir, cd)
		}
		cd = filepath.Clean(cd)
		if fi, err := os.Stat(filepath.Join(cd, "objects")); err == nil && fi.IsDir() {
			out = append(out, cd)
		}
	}
	return out
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// scratchDir holds the launcher's private directories (temp, build
// caches), made on first use: TMPDIR/loopguard-scratch-UID, mode 0700,
// owned by UID, not a link.
func scratchDir(e Env) (string, error) {
	d := ScratchDirIn(e.TempDir, e.UID)
	if err := privateDir(d, e.UID, "the scratch directory"); err != nil {
		return "", err
	}
	return d, nil
}

// privateDir makes d (what it is, said in an error) on first use, mode
// 0700, and checks that it is a directory of uid's alone, not a link.
func privateDir(d string, uid int, what string) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("failed to create %s: %w", what, err)
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("failed to check %s: %w", what, err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedBy(fi, uid) {
		return fmt.Errorf("%s: %s is not a private directory of this user (a link, or another's): remove it", what, d)
	}
	return nil
}

// launchesDir holds, in scratch, the launches' own directories: a
// directory of their own, so that the prune below reads them alone and
// not every project's caches beside them.
const launchesDir = "runs"

// launchDir makes this launch's own directory, scratch/runs/run-RANDOM,
// mode 0700, locked for as long as this launcher lives (the descriptor it
// returns), and removes those of launches that ended long ago without
// removing theirs (a launcher killed before it could), after sweeping
// for one killed before its sweep (recoverKilled, said on w).
func launchDir(scratch string, e Env, w io.Writer) (string, int, error) {
	runs := filepath.Join(scratch, launchesDir)
	if err := privateDir(runs, e.UID, "the launches' directory"); err != nil {
		return "", -1, err
	}
	pruneLaunchDirs(runs, e, w)
	for range 8 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", -1, err
		}
		d := filepath.Join(runs, "run-"+hex.EncodeToString(b[:]))
		err := os.Mkdir(d, 0o700)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", -1, fmt.Errorf("failed to create the launch's directory: %w", err)
		}
		lock, err := lockRun(d, true)
		if err != nil {
			_ = os.Remove(d)
			return "", -1, fmt.Errorf("failed to lock the launch's directory: %w", err)
		}
		return d, lock, nil
	}
	return "", -1, errors.New("failed to create the launch's directory: every name taken")
}

// removeRun removes a launch's own directory (its TMPDIR) once no
// process of the launch is left: where the call took a directory's
// owner's bits (chmod 000 $TMPDIR/d, or 500), os.RemoveAll cannot empty it, and the
// launch's directory, whatever the call left in it, stayed for good (a
// later launch's prune failed the same way). Each directory that lacks
// one of its owner's bits gets them back, one level more each round (a
// directory read only once it can be), at most maxRemoveRounds rounds. Nothing of the launch runs by then, and
// the directory is in the user's private scratch directory: its paths
// are its own.
func removeRun(dir string) error {
	err := os.RemoveAll(dir)
	for range maxRemoveRounds {
		if err == nil {
			return nil
		}
		fixed := false
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
			if d == nil || !d.IsDir() {
				return nil
			}
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() && fi.Mode().Perm()&0o700 != 0o700 && chmodBeneath(dir, relBelow(dir, p), uint32(fi.Mode().Perm()|0o700)) == nil {
				fixed = true
			}
			return nil
		})
		if !fixed {
			return err
		}
		err = os.RemoveAll(dir)
	}
	return err
}

// relBelow is p relative to dir ("." for dir itself).
func relBelow(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	return rel
}

// maxRemoveRounds bounds removeRun's rounds: a tree of unreadable
// directories nested deeper stays, for a later launch's prune.
const maxRemoveRounds = 64

// staleLaunch is how old a launch's directory must be before a later
// launch removes it: no call runs that long.
const staleLaunch = 24 * time.Hour

// pruneLaunchDirs recovers each killed launch in runs whose project's
// undo lock is free (lockTry: a record of a project where a call runs
// stays, for that call's end), and removes the directories of launches
// that ended long ago, but for one whose record stays.
func pruneLaunchDirs(runs string, e Env, w io.Writer) {
	for d, ent := range unlockedRuns(runs) {
		kept := recoverKilled(d, "", e, w, lockTry)
		if fi, err := ent.Info(); err == nil && time.Since(fi.ModTime()) > staleLaunch && !kept {
			_ = removeRun(d)
		}
	}
}

// unlockedRuns yields each launch's directory in runs whose launcher is
// gone (its lock free), with this process holding that lock meanwhile.
func unlockedRuns(runs string) iter.Seq2[string, fs.DirEntry] {
	return func(yield func(string, fs.DirEntry) bool) {
		ents, err := os.ReadDir(runs)
		if err != nil {
			return
		}
		for _, ent := range ents {
			if !ent.IsDir() || !strings.HasPrefix(ent.Name(), "run-") {
				continue
			}
			d := filepath.Join(runs, ent.Name())
			lock, err := lockRun(d, false)
			if err != nil {
				continue // its launcher lives (or it is gone already)
			}
			more := yield(d, ent)
			unlockRun(lock)
			if !more {
				return
			}
		}
	}
}

// maxGitFile bounds a .git file's and a commondir's read.
const maxGitFile = 4096

// pyDirs are the device and inode of the directories of seen (the walk's)
// that are Python's by where they are (Plan.pyDirs): site-packages and
// dist-packages, and the bin of each of venvs.
func pyDirsOf(seen map[string]int64, venvs []string) map[string][2]uint64 {
	ids := map[string][2]uint64{}
	add := func(d string) {
		if ctime, ok := seen[d]; ok && ctime != -1 {
			if id, ok := dirID(d); ok {
				ids[d] = id
			}
		}
	}
	for d := range seen {
		if isSitePackages(filepath.Base(d)) {
			add(d)
		}
	}
	for _, v := range venvs {
		add(v + "/bin")
	}
	return ids
}

// isSitePackages: name is a site-packages directory's.
func isSitePackages(name string) bool { return name == "site-packages" || name == "dist-packages" }
