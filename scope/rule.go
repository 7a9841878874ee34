package scope

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/token"
)

// MaxRuleLen bounds the length of a rule in bytes.
const MaxRuleLen = 4096

// kind is the tool family a rule belongs to.
type kind uint8

const (
	kindInvalid  kind = iota
	kindBare          // a tool name without a specifier
	kindBash          // Bash(command)
	kindFile          // Edit(...), Write(...), Read(...)
	kindWebFetch      // WebFetch(domain:host)
	kindMCP           // mcp__server__tool, mcp__server__prefix*
	kindJail          // Bash(*): the jail grant
)

// JailRule is the jail grant's rule: every Bash call, whatever its shape,
// run whole in the jail (policy.JailCapability) by the launcher. It
// matches nothing by itself (Match refuses it): the engine decides what
// the jail may hold, and asks the human for the rest (issue 36).
const JailRule = `Bash(*)`

// Rule is one parsed scope. The zero Rule covers nothing. Rules are
// comparable with ==: two rules are equal exactly when their canonical
// forms (String) are equal.
type Rule struct {
	kind kind
	tool string // "Bash", "Edit", ...; for MCP the whole name as written canonically
	// spec is the canonical specifier between the parentheses (Bash, file
	// and WebFetch rules).
	spec string
	// exe is the executable a Bash rule is pinned to ("" if not pinned).
	exe string
	// digest is the SHA-256 (hex) of exe's content when exe lies where the
	// user can write (PinContent); "" when the rule pins the path only.
	digest string
	// widen is what the grant adds to the rule's default capability
	// (" +write", " +git", " +network" after the rule); MACed with it.
	widen policy.Capability

	// file rules
	anchor  anchor
	pattern string // doublestar pattern relative to the anchor

	// WebFetch rules
	domain string

	// MCP rules
	mcpServer string
	mcpTool   string // literal tool name, or the prefix before a trailing *
	mcpWild   bool
}

// ParseError reports why a rule does not parse and where.
type ParseError struct {
	Rule   string
	Offset int // byte offset in Rule
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid scope %q at offset %d: %s", e.Rule, e.Offset, e.Msg)
}

func perr(rule string, off int, format string, args ...any) *ParseError {
	return &ParseError{Rule: rule, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Tool names, as Claude Code spells them.
const (
	toolBash         = "Bash"
	toolEdit         = "Edit"
	toolWrite        = "Write"
	toolRead         = "Read"
	toolMultiEdit    = "MultiEdit"
	toolNotebookEdit = "NotebookEdit"
	toolWebFetch     = "WebFetch"
	toolPowerShell   = "PowerShell"
)

// argumentFree lists the tools whose calls carry nothing worth scoping, the
// only tools a bare rule (no parentheses) may name and cover.
var argumentFree = map[string]bool{
	"TodoWrite":    true,
	"ExitPlanMode": true,
	"WebSearch":    true,
	"Task":         true,
	"Agent":        true,
	"BashOutput":   true,
}

// scopedTools are the tools whose rules take a specifier. A bare rule naming
// one of them parses (so that Dangerous can explain why it is refused) but
// covers nothing.
var scopedTools = map[string]kind{
	toolBash:     kindBash,
	toolEdit:     kindFile,
	toolWrite:    kindFile,
	toolRead:     kindFile,
	toolWebFetch: kindWebFetch,
}

// Parse parses one rule in Claude Code's permission rule syntax, with the
// restrictions documented in the package comment. Errors are *ParseError.
func Parse(rule string) (Rule, error) {
	if len(rule) > MaxRuleLen {
		return Rule{}, perr(rule, MaxRuleLen, "rule longer than %d bytes", MaxRuleLen)
	}
	if off, msg := checkText(rule); msg != "" {
		return Rule{}, perr(rule, off, "%s", msg)
	}
	if rule == "" {
		return Rule{}, perr(rule, 0, "empty rule")
	}
	if strings.HasPrefix(rule, "mcp__") {
		return parseMCP(rule)
	}
	// Tool name.
	i := 0
	for i < len(rule) && isNameByte(rule[i], i == 0) {
		i++
	}
	name := rule[:i]
	if name == "" {
		return Rule{}, perr(rule, 0, "a rule starts with a tool name such as Bash, Edit or WebFetch")
	}
	if i == len(rule) {
		return parseBare(rule, name)
	}
	if rule[i] != '(' {
		return Rule{}, perr(rule, i, "unexpected %q after tool name %q; want '('", rule[i], name)
	}
	k, ok := scopedTools[name]
	if !ok {
		switch {
		case name == toolMultiEdit || name == toolNotebookEdit:
			return Rule{}, perr(rule, 0, "write Edit(...): Edit rules cover %s", name)
		case argumentFree[name]:
			return Rule{}, perr(rule, i, "%s takes no specifier; write the bare name", name)
		case name == toolPowerShell:
			return Rule{}, perr(rule, 0, "PowerShell rules are not supported")
		}
		return Rule{}, perr(rule, 0, "unknown tool %q", name)
	}
	if rule == JailRule {
		return Rule{kind: kindJail, tool: toolBash, spec: "*"}, nil
	}
	if strings.HasPrefix(rule, JailRule) {
		return Rule{}, perr(rule, len(JailRule), "the jail rule %s is written alone: what needs more than the jail (the network, git, a program pinned) is a rule of its own", JailRule)
	}
	var widen policy.Capability
	if k == kindBash {
		var err error
		if rule, widen, err = cutWidenings(rule); err != nil {
			return Rule{}, perr(rule, len(rule), "%v", err)
		}
	}
	closeIdx := strings.LastIndexByte(rule, ')')
	if k == kindBash && strings.HasSuffix(rule, "\"") {
		// A pinned path that needs quoting: Bash(...)@"/opt/my tools/x".
		// Inside a valid Go string literal every " is escaped, so the
		// last )@" starts the path.
		closeIdx = max(strings.LastIndex(rule, ")@\""), lastContentTail(rule))
	}
	if closeIdx < i {
		return Rule{}, perr(rule, len(rule), "missing ')'")
	}
	spec := rule[i+1 : closeIdx]
	tail := rule[closeIdx+1:]
	specOff := i + 1
	var exe, digest string
	if tail != "" {
		if k != kindBash {
			return Rule{}, perr(rule, closeIdx+1, "unexpected text after ')'")
		}
		if tail[0] != '@' {
			return Rule{}, perr(rule, closeIdx+1, "unexpected text after ')'; only a pinned executable (@/abs/path) may follow")
		}
		exe = tail[1:]
		if strings.HasPrefix(exe, contentPrefix) {
			// A content pin: @sha256:HEX:/path (or :"/quoted path").
			d, rest, ok := strings.Cut(exe[len(contentPrefix):], ":")
			if !ok || !token.IsDigest(d) || rest == "" {
				return Rule{}, perr(rule, closeIdx+2, "pinned executable: want @sha256:<64 lower-case hex digits>:/absolute/path")
			}
			digest, exe = d, rest
		}
		if strings.HasPrefix(exe, "\"") {
			uq, err := strconv.Unquote(exe)
			if err != nil {
				return Rule{}, perr(rule, closeIdx+2, "pinned executable: invalid quoted path")
			}
			exe = uq
		} else if !plainExePath(exe) {
			return Rule{}, perr(rule, closeIdx+2, "pinned executable: quote a path with characters other than letters, digits and /._+-@")
		}
		if msg := checkExePath(exe); msg != "" {
			return Rule{}, perr(rule, closeIdx+2, "pinned executable: %s", msg)
		}
	}
	if spec == "" {
		return Rule{}, perr(rule, specOff, "empty specifier; %s() is not a rule", name)
	}
	switch k {
	case kindBash:
		bs, err := parseBashSpec(spec)
		if err != nil {
			if se, ok := err.(*specError); ok {
				return Rule{}, perr(rule, specOff+se.Off, "%s", se.Msg)
			}
			return Rule{}, perr(rule, specOff, "%v", err)
		}
		return Rule{kind: kindBash, tool: toolBash, spec: bs.String(), exe: exe, digest: digest, widen: widen}, nil
	case kindFile:
		a, pat, se := parseFileSpec(spec)
		if se != nil {
			return Rule{}, perr(rule, specOff+se.Off, "%s", se.Msg)
		}
		r := Rule{kind: kindFile, tool: name, anchor: a, pattern: pat}
		r.spec = a.prefix() + pat
		if a == anchorProject && strings.HasPrefix(pat, "~") {
			r.spec = "./" + pat // a bare ~x would read as ~user
		}
		return r, nil
	case kindWebFetch:
		d, se := parseWebFetchSpec(spec)
		if se != nil {
			return Rule{}, perr(rule, specOff+se.Off, "%s", se.Msg)
		}
		return Rule{kind: kindWebFetch, tool: toolWebFetch, domain: d, spec: "domain:" + d}, nil
	}
	return Rule{}, perr(rule, 0, "unknown tool %q", name)
}

func parseBare(rule, name string) (Rule, error) {
	if argumentFree[name] {
		return Rule{kind: kindBare, tool: name}, nil
	}
	if _, ok := scopedTools[name]; ok {
		return Rule{kind: kindBare, tool: name}, nil
	}
	if name == toolMultiEdit || name == toolNotebookEdit {
		return Rule{kind: kindBare, tool: name}, nil
	}
	return Rule{}, perr(rule, 0, "unknown tool %q (bare names are accepted only for tools without arguments worth scoping)", name)
}

// checkText rejects invalid UTF-8 and characters a person cannot see or
// that change how text displays (controls, format characters such as bidi
// overrides and zero-width spaces). It returns the offset and a message.
func checkText(s string) (int, string) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i, "invalid UTF-8"
			}
		}
		if r == ' ' {
			continue
		}
		if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
			return i, fmt.Sprintf("character %U is not allowed in a rule", r)
		}
	}
	return 0, ""
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	case first:
		return false
	case c >= '0' && c <= '9', c == '_', c == '-':
		return true
	}
	return false
}

// String returns the canonical form of r: stable, parseable, and what a
// grant MACs. Parse(r.String()) == r for every parsed r.
func (r Rule) String() string {
	switch r.kind {
	case kindBare:
		return r.tool
	case kindMCP:
		s := "mcp__" + r.mcpServer + "__" + r.mcpTool
		if r.mcpWild {
			s += "*"
		}
		return s
	case kindJail:
		return JailRule
	case kindBash:
		s := r.tool + "(" + r.spec + ")"
		switch {
		case r.exe == "":
		default:
			s += "@"
			if r.digest != "" {
				s += contentPrefix + r.digest + ":"
			}
			if plainExePath(r.exe) {
				s += r.exe
			} else {
				s += strconv.Quote(r.exe)
			}
		}
		return s + widenings(r.widen)
	case kindFile, kindWebFetch:
		return r.tool + "(" + r.spec + ")"
	}
	return ""
}

// Tool returns the tool the rule names: "Bash", "Edit", "Write", "Read",
// "WebFetch", a bare tool name, or for MCP the name as written canonically
// ("mcp__github__get_issue", "mcp__github__*", "mcp__github__get_*").
func (r Rule) Tool() string {
	if r.kind == kindMCP {
		return r.String()
	}
	return r.tool
}

// Executable returns the absolute executable a Bash rule is pinned to, or
// "" when it is not pinned (an unpinned Bash rule matches nothing).
func (r Rule) Executable() string { return r.exe }

// CoversTool reports whether r can cover calls of the named tool.
//
// Following Claude Code, an Edit rule applies to every built-in tool that
// edits files: Edit, MultiEdit, Write and NotebookEdit. Stricter than Claude
// Code, a Write rule covers only Write, and a Read rule covers only Read
// (Claude Code applies Read rules "best effort" to Grep, Glob and LS, whose
// inputs are directories and patterns, not one file; those need their own
// approval). A bare rule covers its tool only if that tool has no arguments
// worth scoping. PowerShell is never covered.
func (r Rule) CoversTool(tool string) bool {
	switch r.kind {
	case kindBare:
		return argumentFree[r.tool] && tool == r.tool
	case kindBash, kindJail:
		return tool == toolBash
	case kindWebFetch:
		return tool == toolWebFetch
	case kindFile:
		switch r.tool {
		case toolEdit:
			return tool == toolEdit || tool == toolMultiEdit || tool == toolWrite || tool == toolNotebookEdit
		case toolWrite:
			return tool == toolWrite
		case toolRead:
			return tool == toolRead
		}
	case kindMCP:
		return r.matchMCPName(tool)
	}
	return false
}

// The widenings a Bash rule may carry after its specifier and pin, in this
// order: what its grant lets the program do beyond the rule's default
// capability (policy.DefaultCapability).
const (
	widenWrite   = " +write"
	widenGit     = " +git"
	widenNetwork = " +network"
)

// cutWidenings splits the widenings off the end of a Bash rule.
func cutWidenings(rule string) (string, policy.Capability, error) {
	var c policy.Capability
	for {
		switch {
		case networkWidening(rule) && !c.Network && !c.Write && !c.Git:
			i := strings.LastIndex(rule, widenNetwork)
			n, _, err := policy.ParseNetworkWord(rule[i+2:])
			if err != nil {
				return rule, c, err
			}
			c.Network, c.Ports, c.AnyPort, rule = true, n.Ports, n.AnyPort, rule[:i]
		case strings.HasSuffix(rule, widenGit) && !c.Git && !c.Write:
			c.Git, rule = true, strings.TrimSuffix(rule, widenGit)
		case strings.HasSuffix(rule, widenWrite) && !c.Write:
			c.Write, rule = true, strings.TrimSuffix(rule, widenWrite)
		default:
			if strings.HasSuffix(rule, ")") || strings.HasSuffix(rule, "\"") || !strings.Contains(rule[strings.LastIndexByte(rule, ')')+1:], " +") {
				return rule, c, nil
			}
			return rule, c, fmt.Errorf("unknown widening after the rule (want +write, +git or +network:PORTS, in that order)")
		}
	}
}

// networkWidening reports whether rule ends in a network widening:
// " +network:443", " +network:22,443", or a bare " +network", the
// spelling of a grant minted before ports were named (any port).
func networkWidening(rule string) bool {
	i := strings.LastIndex(rule, widenNetwork)
	if i < 0 {
		return false
	}
	rest := rule[i+len(widenNetwork):]
	return rest == "" || strings.HasPrefix(rest, ":") && !strings.ContainsAny(rest, " +)\"")
}

func widenings(c policy.Capability) string {
	s := ""
	if c.Write {
		s += widenWrite
	}
	if c.Git {
		s += widenGit
	}
	if c.Network {
		s += " +" + c.NetworkWord()
	}
	return s
}

// Widened returns r with w's rights added to what its grant widens.
func (r Rule) Widened(w policy.Capability) Rule {
	if r.kind == kindBash {
		// Write and Git each as the grant said (+git implies the
		// write, and is spelled alone); the network's ports add up.
		n := policy.Capability{Network: r.widen.Network, Ports: r.widen.Ports, AnyPort: r.widen.AnyPort}.
			Widen(policy.Capability{Network: w.Network, Ports: w.Ports, AnyPort: w.AnyPort})
		r.widen = policy.Capability{Write: r.widen.Write || w.Write, Git: r.widen.Git || w.Git, Network: n.Network, Ports: n.Ports, AnyPort: n.AnyPort}
	}
	return r
}

// Capability is what a program a Bash rule covers may do: the default for
// its command (read-only for the read-only commands, project-write+git for
// git's writing subcommands, project-write otherwise) with what its grant
// widens.
func (r Rule) Capability() policy.Capability {
	if r.kind == kindJail {
		return policy.JailCapability
	}
	words, exact := r.literalWords()
	return policy.DefaultCapability(words, exact).Widen(r.widen)
}

// literalWords are a Bash rule's words up to its first wildcard, and
// whether they are the whole rule (it has no wildcard).
func (r Rule) literalWords() ([]string, bool) {
	var words []string
	exact := false
	if bs, err := r.bashSpecOf(); err == nil {
		for _, w := range bs.words {
			if !w.literal() {
				break
			}
			words = append(words, w.lits[0])
		}
		exact = !bs.trailing && len(words) == len(bs.words)
	}
	return words, exact
}

// RunsProjectCode reports whether the program a Bash rule covers runs
// code the project chose, or a package its words name
// (policy.RunsProjectCode): such a rule never holds a standing +network.
// The jail rule runs every call and is judged apart; other tools run no
// program.
func (r Rule) RunsProjectCode() (policy.ProjectCode, bool) {
	if r.kind != kindBash {
		return policy.ProjectCode{}, false
	}
	words, exact := r.literalWords()
	return policy.RunsProjectCode(words, exact)
}

// JailFilesRule is the jail's rule for the file tools: Edit, MultiEdit,
// Write and NotebookEdit of any file of the project. Like every file rule
// it never covers a protected path (executable configuration, .claude,
// .git, .vscode, what the guard stands on: the engine decides those
// before any scope, and matching resolves links), so it lets the file
// tools write what a jailed Bash call may write anyway.
const JailFilesRule = `Edit(**)`

// IsJailFiles reports whether r is the jail's rule for the file tools.
func (r Rule) IsJailFiles() bool {
	return r.kind == kindFile && r.tool == toolEdit && r.anchor == anchorProject && r.pattern == "**"
}

// IsJail reports whether r is the jail grant's rule, Bash(*).
func (r Rule) IsJail() bool { return r.kind == kindJail }

// Program is the command name a Bash rule starts with ("" for others).
func (r Rule) Program() string {
	bs, err := r.bashSpecOf()
	if err != nil || len(bs.words) == 0 || !bs.words[0].literal() {
		return ""
	}
	return bs.words[0].lits[0]
}
