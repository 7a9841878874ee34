package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Capability is what a program that a scoped Bash grant covers may do once
// it runs. Where the kernel has Landlock it is enforced there (package
// confine): a word the analysis read wrongly, an option whose value it
// misjudged, or code a program runs on the agent's behalf can then do only
// what the capability allows. The zero value is read-only: read the
// project and what programs need to run, write nothing, no network.
type Capability struct {
	// Write: write the project, temp and the toolchains' caches, never
	// the project's executable configuration (.git, .claude, .mcp.json,
	// .envrc, ... at any depth: Classify).
	Write bool
	// Git: also write the project's own git directory (git add, commit,
	// checkout need it). Implies Write. git's config and hooks are then
	// kept by the analysis, not the kernel.
	Git bool
	// Network: TCP and UDP connections and listeners. Unix sockets stay
	// closed whatever the capability (the keyring's D-Bus is one).
	Network bool
	// Jail: the jail grant's capability (Bash(*), issue 36): project-write
	// with read-only's narrow environment, so that a bare env shows the
	// model no token. It narrows, where the others widen: Widen keeps it
	// only when both sides have it. Never with Git or Network.
	Jail bool
}

// JailCapability is what a call the jail grant covers runs with.
var JailCapability = Capability{Write: true, Jail: true}

// Capability names as rules, grants and the launcher spell them.
const (
	CapReadOnly     = "read-only"
	CapProjectWrite = "project-write"
	CapJail         = "jail"
	capGit          = "git"
	capNetwork      = "network"
)

// String is the capability's name: read-only, project-write or
// project-write+git, each with +network when it has it.
func (c Capability) String() string {
	if c == JailCapability {
		return CapJail
	}
	s := CapReadOnly
	if c.Write || c.Git {
		s = CapProjectWrite
	}
	if c.Git {
		s += "+" + capGit
	}
	if c.Network {
		s += "+" + capNetwork
	}
	return s
}

// ParseCapability reads what String writes.
func ParseCapability(s string) (Capability, error) {
	if s == CapJail {
		return JailCapability, nil
	}
	base, rest, plus := strings.Cut(s, "+")
	var c Capability
	if plus && rest == "" {
		return c, fmt.Errorf("capability %q: nothing after +", s)
	}
	switch base {
	case CapReadOnly:
	case CapProjectWrite:
		c.Write = true
	default:
		return c, fmt.Errorf("unknown capability %q (want %s, %s or %s, the first two with +git or +network)", s, CapReadOnly, CapProjectWrite, CapJail)
	}
	for rest != "" {
		var w string
		w, rest, _ = strings.Cut(rest, "+")
		switch {
		case w == capGit && c.Write && !c.Git && !c.Network:
			c.Git = true
		case w == capNetwork && !c.Network:
			c.Network = true
		default:
			return c, fmt.Errorf("capability %q: unexpected +%s", s, w)
		}
	}
	return c, nil
}

// Widen returns c with every right of w added.
func (c Capability) Widen(w Capability) Capability {
	c.Write = c.Write || w.Write || w.Git
	c.Git = c.Git || w.Git
	c.Network = c.Network || w.Network
	c.Jail = c.Jail && w.Jail
	return c
}

// Covers reports whether c allows everything w allows.
func (c Capability) Covers(w Capability) bool { return c.Widen(w) == c }

// readOnlyCommands are the programs, and for some the subcommands, whose
// job is only to read: a scoped rule for them runs read-only unless the
// grant widens it. The read-only preset (scope/preset.go) is made of these
// (TestPresetIsReadOnly).
var readOnlyCommands = map[string][]string{
	"ls": nil, "cat": nil, "head": nil, "tail": nil, "wc": nil, "pwd": nil, "file": nil,
	"stat": nil, "du": nil, "df": nil, "which": nil, "grep": nil, "egrep": nil, "fgrep": nil,
	"rg": nil, "diff": nil, "cmp": nil, "basename": nil, "dirname": nil, "realpath": nil,
	"readlink": nil, "uname": nil, "whoami": nil, "id": nil, "date": nil, "sleep": nil,
	"true": nil, "false": nil, "echo": nil, "printf": nil, "nproc": nil, "tree": nil, "cd": nil, "test": nil, "find": nil, "nl": nil, "sort": nil, "uniq": nil, "cut": nil, "tr": nil,
	"sed": nil, "tac": nil, "rev": nil, "comm": nil, "column": nil, "fold": nil, "seq": nil,
	"sha256sum": nil, "sha1sum": nil, "md5sum": nil, "cksum": nil, "od": nil, "hexdump": nil,
	"git": {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "branch", "shortlog",
		"describe", "rev-list", "ls-tree", "cat-file", "grep", "reflog", "show-ref", "merge-base"},
	"go": {"vet", "list", "version", "env", "doc"},
}

// gitWrites are git's subcommands that write the repository (and, for
// some, the work tree): their rules get project-write+git.
var gitWrites = map[string]bool{
	"add": true, "commit": true, "checkout": true, "switch": true, "restore": true, "reset": true,
	"stash": true, "merge": true, "rebase": true, "cherry-pick": true, "revert": true, "tag": true,
	"mv": true, "rm": true, "am": true, "apply": true, "fetch": true, "pull": true, "init": true,
	"worktree": true, "notes": true, "gc": true,
}

// readOnlyForms are the forms of git's writing subcommands (and of git
// itself) that only read: a rule whose literal words start with one (are
// exactly one, for an exact form) runs read-only. git tag and git branch
// list with -l (the option table's list mode refuses the options that
// create); git remote -v and git tag alone list, while git remote -v
// update fetches and git tag v1 creates.
var readOnlyForms = []struct {
	words []string
	exact bool
}{
	{[]string{"git", "--version"}, true},
	{[]string{"git", "tag"}, true},
	{[]string{"git", "tag", "-l"}, false},
	{[]string{"git", "tag", "--list"}, false},
	{[]string{"git", "stash", "list"}, false},
	{[]string{"git", "stash", "show"}, false},
	{[]string{"git", "remote"}, true},
	{[]string{"git", "remote", "-v"}, true},
	{[]string{"git", "worktree", "list"}, false},
}

// DefaultCapability is the capability a scoped Bash rule whose literal
// words start with words (are words, when exact: the rule has no
// wildcard) gets unless its grant widens it: read-only for the read-only
// commands and forms, project-write+git for git's writing subcommands,
// project-write for everything else.
func DefaultCapability(words []string, exact bool) Capability {
	if len(words) == 0 {
		return Capability{Write: true}
	}
	prog := Base(words[0])
	for _, f := range readOnlyForms {
		if prog == f.words[0] && len(words) >= len(f.words) && (!f.exact || exact && len(words) == len(f.words)) &&
			slices.Equal(words[1:len(f.words)], f.words[1:]) {
			return Capability{}
		}
	}
	subs, ok := readOnlyCommands[prog]
	if ok && subs == nil {
		return Capability{}
	}
	if ok && len(words) > 1 {
		for _, s := range subs {
			if words[1] == s {
				return Capability{}
			}
		}
	}
	if prog == "git" && len(words) > 1 && gitWrites[words[1]] {
		return Capability{Write: true, Git: true}
	}
	return Capability{Write: true}
}

// NameCouldBeProtected reports whether an entry of this name, at any depth
// of a project, could be protected by its name: every name protected at
// any depth (.git, .claude, .mcp.json, .envrc, .npmrc, the shell start-up
// files, the agents' project files) starts with a dot, but for the few of
// the executable-configuration list that do not (bunfig.toml) and of the
// agents' project files (plainProtected: OpenCode's opencode.json)
// (TestNameCouldBeProtected). A walk of a project judges only those with
// Classify; the fixed protected paths (Roots) it checks apart.
func NameCouldBeProtected(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(name, ".") || len(anyDepthByName[l]) > 0 || plainProtected(l)
}

// readsNoFiles are the read-only commands that open no file their words
// name: their words are text (echo's, printf's), numbers or names, never
// paths, so a preset's project bound has nothing to judge in them.
var readsNoFiles = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, "sleep": true, "date": true, "seq": true,
	"basename": true, "dirname": true, "pwd": true, "uname": true, "whoami": true, "nproc": true, "id": true,
}

// ReadsNoFiles reports whether the program opens no file its words name.
func ReadsNoFiles(prog string) bool { return readsNoFiles[Base(prog)] }

// DefaultTrusted are the executable directories a command name may resolve
// into for a scope to cover it, when the configuration names none: trusted
// because the user says so, whatever their permissions.
var DefaultTrusted = []string{
	"/usr/bin", "/bin", "/usr/sbin", "/sbin",
	"/usr/local/bin", "/usr/local/sbin",
	"/opt/homebrew/bin", "/usr/local/go/bin",
}
