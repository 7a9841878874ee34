package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/bench/corpus"
	"github.com/loopguard/loopguard/confine"
	"github.com/loopguard/loopguard/hooks"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/scope"
	"github.com/loopguard/loopguard/shellparse"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// realDirs are where the fixture's PATH finds the programs agents use,
// before its directory of stubs; each is in policy.DefaultTrusted.
var realDirs = []string{"/usr/local/go/bin", "/usr/local/bin", "/usr/bin", "/bin"}

// fixture is a throwaway user: a home, a project (a real git repository),
// loopguard's state and config dirs, a key that never leaves memory, and a
// trusted directory of stub programs for the names the corpus uses that
// this machine does not have.
type fixture struct {
	base, home, project, stubs, stateDir, configDir, self string
	path                                                  string
	trusted                                               []string
	master                                                []byte
	// Programs: each name the corpus runs and where it resolved (real
	// program, stub, or a bash builtin).
	real, stubbed, builtins []string
	// npxInstalled: the packages' programs installed in the project's
	// node_modules/.bin (npxBins).
	npxInstalled []string
}

var (
	nameOK      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	ruleProgram = regexp.MustCompile(`^Bash\(([A-Za-z0-9][A-Za-z0-9._+-]*)[ )]`)
)

// ruleTexts is the read-only preset's rules and more: every program they
// name gets a stub when this machine lacks it, so each rule can be granted.
func ruleTexts(more []string) []string {
	var out []string
	if rules, err := scope.Preset(scope.PresetReadOnly, ""); err == nil {
		for _, r := range rules {
			out = append(out, r.String())
		}
	}
	return append(out, more...)
}

// newFixture lays the fixture out under dir. stubsOnly puts only the stub
// directory in PATH (the same programs on every machine).
func newFixture(dir string, entries []corpus.Entry, rules []string, stubsOnly, npxAbsent bool) (*fixture, error) {
	f := &fixture{base: dir}
	f.home = filepath.Join(dir, "home")
	f.project = filepath.Join(dir, "home", "project")
	f.stubs = filepath.Join(dir, "stubs")
	f.stateDir = filepath.Join(dir, "state")
	f.configDir = filepath.Join(dir, "config", "loopguard")
	f.self = filepath.Join(dir, "lg", "loopguard")
	for _, d := range []string{f.project, f.stubs, f.stateDir, f.configDir, filepath.Dir(f.self)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(f.self, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		return nil, err
	}
	// The project is a git repository of its own, as an agent's project
	// is: the preset's git rules cover only the project's own repository.
	if out, err := exec.Command("git", "init", "-q", f.project).CombinedOutput(); err != nil {
		if err := os.MkdirAll(filepath.Join(f.project, ".git"), 0o755); err != nil {
			return nil, fmt.Errorf("git init: %v: %s", err, out)
		}
	}
	// The directories the agents cd into, relative to their project, are
	// in the fixture's project too, as they were in theirs: a cd the
	// analysis follows must name a directory that exists.
	for _, d := range cdTargets(entries) {
		if err := os.MkdirAll(filepath.Join(f.project, d), 0o755); err != nil {
			return nil, err
		}
	}
	// The packages the corpus runs through npx (bunx, npm exec ...) are
	// installed in the project's node_modules/.bin, as the programs it
	// runs are on PATH: an agent ran each in its project. Where one was
	// not installed there, npx downloaded it; -npx-absent measures that
	// case (every such call then needs the network).
	if !npxAbsent {
		for _, bin := range npxBins(entries, f.project, f.home) {
			f.npxInstalled = append(f.npxInstalled, filepath.Base(bin))
			if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				return nil, err
			}
		}
	}
	f.master = make([]byte, 32)
	if _, err := rand.Read(f.master); err != nil {
		return nil, err
	}
	dirs := realDirs
	if stubsOnly {
		dirs = nil
	}
	f.path = strings.Join(append(append([]string{}, dirs...), f.stubs), ":")
	f.trusted = append(append([]string{}, policy.DefaultTrusted...), f.stubs)
	for _, name := range programNames(entries, ruleTexts(rules)) {
		if builtin[name] {
			f.builtins = append(f.builtins, name)
			continue
		}
		if found(dirs, name) {
			f.real = append(f.real, name)
			continue
		}
		if err := os.WriteFile(filepath.Join(f.stubs, name), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			return nil, err
		}
		f.stubbed = append(f.stubbed, name)
	}
	return f, nil
}

func found(dirs []string, name string) bool {
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, name)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// builtin lists bash's builtins and keywords: bash runs them without PATH.
var builtin = map[string]bool{}

func init() {
	for _, b := range strings.Fields(`. : [ alias bg bind break builtin caller cd command compgen complete compopt
		continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs
		kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source
		suspend test times trap true type typeset ulimit umask unalias unset wait`) {
		builtin[b] = true
	}
}

// npxBins are the project's node_modules/.bin programs that the corpus's
// npx-like calls would run instead of downloading their package, as the
// jail's own judgment names them (policy.JailNeed.Unless): the one at the
// project's top.
func npxBins(entries []corpus.Entry, project, home string) []string {
	set := map[string]bool{}
	top := filepath.Join(project, "node_modules", ".bin")
	for _, e := range entries {
		sk, ok := shellparse.SketchOf(e.Cmd)
		if !ok {
			continue
		}
		for _, words := range sk.Calls {
			for _, n := range policy.NeedsBeyondJail(words, project, project, home) {
				for _, u := range n.Unless {
					if filepath.Dir(u) == top && nameOK.MatchString(filepath.Base(u)) {
						set[u] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// programNames lists the literal names in command position anywhere in the
// corpus (inside chains too) that PATH would look up: no slash, a plain
// name. An agent ran each on its user's machine, so each is installed there.
func programNames(entries []corpus.Entry, rules []string) []string {
	set := map[string]bool{}
	for _, r := range rules {
		if m := ruleProgram.FindStringSubmatch(r); m != nil {
			set[m[1]] = true
		}
	}
	for _, e := range entries {
		sk, ok := shellparse.SketchOf(e.Cmd)
		if !ok {
			continue
		}
		for _, words := range sk.Calls {
			if name := words[0]; nameOK.MatchString(name) {
				set[name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Rules of a grant set.
var (
	// typical is issue 25's typical grant set, beside the read-only preset.
	typical = []string{"Bash(go test *)", "Bash(go build *)", "Bash(npm test *)", "Bash(npm run *)", "Bash(git add *)", "Bash(git commit *)"}
)

// grantSet is one configuration measured: the preset, and more rules.
type grantSet struct {
	Name   string   `json:"name"`
	Preset string   `json:"preset"`
	Rules  []string `json:"rules"`
}

// minted says what a grant set became in this fixture.
type minted struct {
	Granted []string `json:"granted"`
	// Skipped: rules that could not be granted here, with why (not
	// installed in a trusted dir, or refused by scope.Dangerous).
	Skipped map[string]string `json:"skipped,omitempty"`
}

// engine builds a fresh state dir and engine for gs, and mints its rules as
// `loopguard grant --preset NAME` and `loopguard grant RULE` do: pinned to
// the executable PATH finds, bound to every session of the project (the
// grant command's default), for the main agent.
func (f *fixture) engine(gs grantSet, now time.Time) (*hooks.Engine, minted, error) {
	dir, err := os.MkdirTemp(f.stateDir, gs.Name+"-")
	if err != nil {
		return nil, minted{}, err
	}
	st, err := state.Open(dir)
	if err != nil {
		return nil, minted{}, err
	}
	keys, _, err := token.DeriveKeys(f.master)
	if err != nil {
		return nil, minted{}, err
	}
	env := shellparse.Env{Cwd: f.project, Path: f.path, ProjectDir: f.project, Home: f.home, Trusted: f.trusted}
	var rules []scope.Rule
	m := minted{Skipped: map[string]string{}}
	if gs.Preset != "" {
		preset, err := scope.Preset(gs.Preset, f.home)
		if err != nil {
			return nil, minted{}, err
		}
		rules = append(rules, preset...)
	}
	for _, text := range gs.Rules {
		r, err := scope.Parse(text)
		if err != nil {
			return nil, minted{}, err
		}
		if err := scope.Dangerous(r, f.home); err != nil {
			m.Skipped[text] = err.Error()
			continue
		}
		rules = append(rules, r)
	}
	for _, r := range rules {
		pinned, err := r.Pin(env)
		if errors.Is(err, scope.ErrNotPinnable) {
			m.Skipped[r.String()] = "not pinnable: the program is not in a trusted directory here"
			continue
		}
		if err != nil {
			return nil, minted{}, fmt.Errorf("pin %s: %w", r, err)
		}
		g, err := keys.Mint(token.Grant{Principal: "bench", Agent: token.MainAgent, Session: token.ProjectSession(f.project),
			Tool: pinned.Tool(), ArgHash: token.Any, Scope: pinned.String(), Expiry: now.Add(24 * time.Hour)}, now)
		if err != nil {
			return nil, minted{}, err
		}
		if _, err := st.PutGrant(&g, state.GrantRecord{Created: now.UTC(), Preset: scope.PresetOf(pinned)}); err != nil {
			return nil, minted{}, err
		}
		m.Granted = append(m.Granted, r.String())
	}
	// The launcher, as the hook names it: itself, where the kernel confines.
	launcher := ""
	if confine.ABI() >= confine.MinABI {
		launcher = f.self
	}
	master := bytes.Clone(f.master)
	e := &hooks.Engine{
		Store:   st,
		Audit:   audit.Open(filepath.Join(dir, "audit")),
		LoadKey: func(context.Context) ([]byte, error) { return bytes.Clone(master), nil },
		Now:     func() time.Time { return now },
		Env: hooks.Env{Path: f.path, Home: f.home, ProjectDir: f.project, Trusted: f.trusted, Self: f.self,
			StateDir: dir, ConfigDir: f.configDir, Launcher: launcher},
	}
	return e, m, nil
}

// cdTarget finds the directory operand of a cd at the start of a command or
// after ;, && or ||.
var cdTarget = regexp.MustCompile(`(?:^|&&|\|\||;)\s*cd\s+([A-Za-z0-9_.@+/-]+)\s*(?:&&|;|$)`)

// cdTargets are the relative directories, inside the project and out of
// .git and .claude, that the corpus's commands cd into.
func cdTargets(entries []corpus.Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		for _, m := range cdTarget.FindAllStringSubmatch(e.Cmd, -1) {
			d := filepath.Clean(m[1])
			if filepath.IsAbs(d) || d == "." || strings.HasPrefix(d, "..") || strings.HasPrefix(d, "~") || strings.Contains(d, ".git") || strings.Contains(d, ".claude") || seen[d] {
				continue
			}
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
