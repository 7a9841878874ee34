package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// Network: TCP connections to Ports (Landlock's per-port rules) and
	// UDP, which Landlock cannot filter (DNS needs it). No TCP listener.
	// Landlock tells no address from another: a port granted is that port
	// of the internet, of this machine's services and of the local
	// network alike. Unix sockets stay closed whatever the capability
	// (the keyring's D-Bus is one).
	Network bool
	// Ports are the TCP ports Network connects to, in canonical form
	// (ascending, no repeats, comma-separated: "22,80"); "" is the
	// default, 443 alone (DefaultPort). Set it through NetworkPorts or
	// ParsePorts, which keep it canonical, so that == stays the equality
	// of what two capabilities allow.
	Ports string
	// AnyPort: a +network grant minted before ports were named (a rule
	// or capability spelled with a bare +network): any TCP port, connect
	// and listen, what the human granted then. Only with Network; never
	// minted anew (grant spells +network:443). doctor and grants show it.
	AnyPort bool
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

// DefaultPort is the one TCP port +network connects to unless it names
// others: HTTPS, what registries, git over HTTPS and APIs use.
const DefaultPort = 443

// maxPorts bounds the ports one capability names.
const maxPorts = 16

// ParsePorts reads a list of TCP ports as +network:LIST spells it
// ("443", "22,443"): decimal, 1 to 65535, ascending, no repeats, at most
// 16. It returns the canonical form Capability.Ports keeps: "" for 443
// alone.
func ParsePorts(list string) (string, error) {
	if list == "" {
		return "", fmt.Errorf("network: names no port")
	}
	words := strings.Split(list, ",")
	if len(words) > maxPorts {
		return "", fmt.Errorf("ports %q: at most %d", list, maxPorts)
	}
	prev := 0
	for _, w := range words {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != w {
			return "", fmt.Errorf("ports %q: %q is not a TCP port (1 to 65535, in decimal)", list, w)
		}
		if n <= prev {
			return "", fmt.Errorf("ports %q: write them in ascending order, each once", list)
		}
		prev = n
	}
	if list == strconv.Itoa(DefaultPort) {
		return "", nil
	}
	return list, nil
}

// NetworkPorts is the network capability to the ports given (any order,
// repeats allowed; none is 443 alone).
func NetworkPorts(ports ...int) (Capability, error) {
	s := slices.Clone(ports)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 {
		return Capability{Network: true}, nil
	}
	words := make([]string, len(s))
	for i, p := range s {
		words[i] = strconv.Itoa(p)
	}
	list, err := ParsePorts(strings.Join(words, ","))
	return Capability{Network: true, Ports: list}, err
}

// TCPPorts are the TCP ports c connects to: nil without the network or
// with AnyPort (every port), 443 alone by default.
func (c Capability) TCPPorts() []uint16 {
	if !c.Network || c.AnyPort {
		return nil
	}
	if c.Ports == "" {
		return []uint16{DefaultPort}
	}
	var out []uint16
	for _, w := range strings.Split(c.Ports, ",") {
		n, _ := strconv.Atoi(w) // canonical: ParsePorts checked it
		out = append(out, uint16(n))
	}
	return out
}

// NetworkWord spells c's network right as a widening does, without the
// +: "network:443", "network:22,443", "network" for a grant minted
// before ports were named (AnyPort); "" without the network.
func (c Capability) NetworkWord() string {
	switch {
	case !c.Network:
		return ""
	case c.AnyPort:
		return capNetwork
	case c.Ports == "":
		return capNetwork + ":" + strconv.Itoa(DefaultPort)
	}
	return capNetwork + ":" + c.Ports
}

// ParseNetworkWord reads what NetworkWord writes (w without the +).
func ParseNetworkWord(w string) (Capability, bool, error) {
	if w == capNetwork {
		return Capability{Network: true, AnyPort: true}, true, nil
	}
	list, ok := strings.CutPrefix(w, capNetwork+":")
	if !ok {
		return Capability{}, false, nil
	}
	ports, err := ParsePorts(list)
	return Capability{Network: true, Ports: ports}, true, err
}

// NetworkReach says in words where c's network right reaches, for the
// screens that show a grant: the ports, and that Landlock cannot tell the
// internet from this machine's services and the local network.
func (c Capability) NetworkReach() string {
	switch {
	case !c.Network:
		return "no network"
	case c.AnyPort:
		return "network: any TCP port, connect and listen (a +network granted before ports were named; grant it again as +network:443 to narrow it), and UDP; it also reaches services on this machine and the local network"
	}
	ports := c.TCPPorts()
	words := make([]string, len(ports))
	for i, p := range ports {
		words[i] = strconv.Itoa(int(p))
	}
	port := "port "
	if len(ports) > 1 {
		port = "ports "
	}
	return "network: TCP connect to " + port + strings.Join(words, ", ") + " (no listener) and UDP; it also reaches services on this machine and the local network on those ports, which Landlock cannot tell from the internet"
}

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
		s += "+" + c.NetworkWord()
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
		case strings.HasPrefix(w, capNetwork) && !c.Network:
			n, ok, err := ParseNetworkWord(w)
			if err != nil {
				return c, fmt.Errorf("capability %q: %w", s, err)
			}
			if !ok {
				return c, fmt.Errorf("capability %q: unexpected +%s", s, w)
			}
			c.Network, c.Ports, c.AnyPort = true, n.Ports, n.AnyPort
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
	switch {
	case c.AnyPort || w.AnyPort:
		c.Network, c.AnyPort, c.Ports = true, true, ""
	case c.Network && w.Network:
		c.Ports = unionPorts(c.TCPPorts(), w.TCPPorts())
	case w.Network:
		c.Network, c.Ports = true, w.Ports
	}
	c.Jail = c.Jail && w.Jail
	return c
}

// unionPorts is the canonical list of the ports of a and b. (More than
// maxPorts would not parse back: a rule holding it fails closed.)
func unionPorts(a, b []uint16) string {
	ports := append(slices.Clone(a), b...)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	if len(ports) == 1 && ports[0] == DefaultPort {
		return ""
	}
	words := make([]string, len(ports))
	for i, p := range ports {
		words[i] = strconv.Itoa(int(p))
	}
	return strings.Join(words, ",")
}

// Covers reports whether c allows everything w allows.
func (c Capability) Covers(w Capability) bool { return c.Widen(w) == c }

// readOnlyCommands are the programs, and for some the subcommands, whose
// job is only to read: a scoped rule for them runs read-only unless the
// grant widens it. The read-only preset (scope/preset.go) is made of these
// (TestPresetIsReadOnly).
var readOnlyCommands = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
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
})

// gitWrites are git's subcommands that write the repository (and, for
// some, the work tree): their rules get project-write+git.
var gitWrites = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"add": true, "commit": true, "checkout": true, "switch": true, "restore": true, "reset": true,
		"stash": true, "merge": true, "rebase": true, "cherry-pick": true, "revert": true, "tag": true,
		"mv": true, "rm": true, "am": true, "apply": true, "fetch": true, "pull": true, "init": true,
		"worktree": true, "notes": true, "gc": true,
	}
})

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
	subs, ok := readOnlyCommands()[prog]
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
	if prog == "git" && len(words) > 1 && gitWrites()[words[1]] {
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
	return strings.HasPrefix(name, ".") || anyDepthIndex().byName[l] != 0 || plainProtected(l) || miseConfigName(l)
}

// ProtectedNamesDigest is a digest of what NameCouldBeProtected answers:
// a cache of what a tree holds under such names is good while it is the
// same (confine's record of each git tip's configuration).
var ProtectedNamesDigest = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte("names starting with .\x00" + miseConfigPattern + "\x00"))
	for _, m := range []map[string]bool{anyDepthNames(), plainProtectedNames()} {
		for _, n := range slices.Sorted(maps.Keys(m)) {
			h.Write([]byte(n + "\x00"))
		}
		h.Write([]byte("\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// CandidateNames are the names, other than those starting with ".",
// that NameCouldBeProtected takes (in lower case; it compares so): with
// "a name starting with .", every name it takes, sorted; and the
// pattern of mise's configuration files (miseConfigPattern), which git's
// glob pathspecs take as written.
func CandidateNames() []string {
	var out []string
	for _, m := range []map[string]bool{anyDepthNames(), plainProtectedNames()} {
		for n := range m {
			if !strings.HasPrefix(n, ".") && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	out = append(out, miseConfigPattern) // a pattern: git's glob pathspec takes it as one
	slices.Sort(out)
	return out
}

// anyDepthNames are the names anyDepthIndex knows.
func anyDepthNames() map[string]bool {
	m := map[string]bool{}
	for n := range anyDepthIndex().byName {
		m[n] = true
	}
	return m
}

// readsNoFiles are the read-only commands that open no file their words
// name: their words are text (echo's, printf's), numbers or names, never
// paths, so a preset's project bound has nothing to judge in them.
var readsNoFiles = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"echo": true, "printf": true, "true": true, "false": true, "sleep": true, "date": true, "seq": true,
		"basename": true, "dirname": true, "pwd": true, "uname": true, "whoami": true, "nproc": true, "id": true,
	}
})

// ReadsNoFiles reports whether the program opens no file its words name.
func ReadsNoFiles(prog string) bool { return readsNoFiles()[Base(prog)] }

// DefaultTrusted are the executable directories a command name may resolve
// into for a scope to cover it, when the configuration names none: trusted
// because the user says so, whatever their permissions.
var DefaultTrusted = []string{
	"/usr/bin", "/bin", "/usr/sbin", "/sbin",
	"/usr/local/bin", "/usr/local/sbin",
	"/opt/homebrew/bin", "/usr/local/go/bin",
}
