package scope

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/loopguard/loopguard/shellparse"
)

// Reason codes of MatchError. They are stable: users grep for them.
const (
	ReasonToolMismatch       = "tool_mismatch"
	ReasonNotSimple          = "not_simple"
	ReasonArgvMismatch       = "argv_mismatch"
	ReasonExecutableChanged  = "executable_changed"
	ReasonRedirectNotCovered = "redirect_not_covered"
	ReasonGlobWord           = "glob_word"
	ReasonOptionNotCovered   = "option_not_covered"
	ReasonPathEscapes        = "path_escapes"
	ReasonPathMismatch       = "path_mismatch"
	ReasonBadURL             = "bad_url"
	ReasonDomainMismatch     = "domain_mismatch"
	ReasonMalformedInput     = "malformed_input"
	// ReasonContentChanged: the executable at the pinned path is not the
	// file the grant was minted for (a content-pinned rule, see PinContent).
	ReasonContentChanged = "executable_content_changed"
	// ReasonRepositoryNotCovered: a git call would use a repository (and
	// its configuration, which can run commands) other than the project's.
	ReasonRepositoryNotCovered = "repository_not_covered"
)

// Call is what matching needs from a tool call.
type Call struct {
	Tool       string
	Input      map[string]any // decoded tool_input (json.Decoder with UseNumber)
	Cwd        string
	ProjectDir string
	// ProjectNamed says the agent's host named ProjectDir (Claude Code's
	// CLAUDE_PROJECT_DIR, which Gemini CLI and Cursor set too); false when
	// it is only the call's cwd, which the agent may choose (Gemini's
	// dir_path). A preset rule covers reading in a named project only.
	ProjectNamed bool
	Home         string
	// Shell is the analysis of tool_input.command, set by the caller for
	// Bash. PowerShell is not supported: it never matches.
	Shell *shellparse.Result
	// ExeDigest returns the SHA-256 (hex) of the executable at a path, for
	// content-pinned rules; nil means fsx.ContentDigest, uncached.
	ExeDigest func(path string) (string, error)
	// Confined says the call will run confined by the kernel to its rule's
	// capability (package confine): a preset rule then need not refuse a
	// word that names nothing on disk (a pattern such as sed's /func/p):
	// the kernel keeps the read in the project whatever the word is.
	Confined bool
}

// MatchError says why a rule does not cover a call.
type MatchError struct {
	Code   string // one of the Reason constants
	Detail string // for people; may quote the call
	// Word is the call's word a rule came close to covering and did not,
	// as it reads on a command line (shownWord): every word the rule
	// names matched, and this one (a word its wildcard absorbs, one past
	// the end of an exact rule, a redirection) is why not. Near is how
	// many words the rule names before its wildcard, to tell the nearer
	// of two rules. Both are zero otherwise.
	Word string
	Near int
	// why says for a person why Word is not covered (NearMiss).
	why string
}

// NearMiss says, for a person, which word of the call rule r does not
// cover and why ("Bash(git ls-tree *) does not cover -x: not in the
// read-only option table"), so that they know what to grant or report;
// "" when err is not such a near miss. The call's words are quoted as
// they are: the caller escapes the text for where it shows it.
func NearMiss(r Rule, err error) string {
	var me *MatchError
	if !errors.As(err, &me) || me.Word == "" {
		return ""
	}
	why := me.why
	if why == "" {
		why = me.Detail
	}
	return r.Unpinned().String() + " does not cover " + me.Word + ": " + why
}

// nearMiss is a MatchError about one word of a call that a rule naming
// near words came close to covering.
func nearMiss(code string, near int, word, why, format string, args ...any) *MatchError {
	return &MatchError{Code: code, Detail: fmt.Sprintf(format, args...), Word: word, Near: near, why: why}
}

// shownWord writes a word as it reads on a command line: as it is when
// plain, quoted otherwise.
func shownWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n\"'\\$`;&|<>(){}*?[]#~") {
		return w
	}
	return strconv.Quote(w)
}

func (e *MatchError) Error() string { return e.Code + ": " + e.Detail }

// Reason returns the stable reason code.
func (e *MatchError) Reason() string { return e.Code }

func mismatch(code, format string, args ...any) error {
	return &MatchError{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the reason code of an error from Match, or "" if err is
// nil or not a *MatchError.
func ReasonOf(err error) string {
	var me *MatchError
	if errors.As(err, &me) {
		return me.Code
	}
	return ""
}

// Match reports nil when r covers c, else a *MatchError. It fails closed:
// anything it cannot establish is a mismatch.
func Match(r Rule, c Call) error {
	if c.Tool == "" || c.Tool == toolPowerShell {
		return mismatch(ReasonToolMismatch, "tool %q is never covered by a scope", c.Tool)
	}
	switch r.kind {
	case kindJail:
		return errJailByEngine
	case kindBash:
		return matchBash(r, c)
	case kindFile:
		return matchFile(r, c)
	case kindWebFetch:
		return matchWebFetch(r, c)
	case kindMCP:
		if !r.matchMCPName(c.Tool) {
			return mismatch(ReasonToolMismatch, "rule %s does not cover tool %q", r, c.Tool)
		}
		return nil
	case kindBare:
		if !r.CoversTool(c.Tool) {
			if !argumentFree[r.tool] {
				return mismatch(ReasonToolMismatch, "bare rule %s covers nothing; scope it, e.g. %s(...)", r.tool, r.tool)
			}
			return mismatch(ReasonToolMismatch, "rule %s does not cover tool %q", r, c.Tool)
		}
		return nil
	}
	return mismatch(ReasonMalformedInput, "invalid rule")
}

// errJailByEngine: the jail rule covers no call by matching; the engine
// decides what the jail holds.
var errJailByEngine = errors.New("the jail grant covers a call only through the engine's jail step")
