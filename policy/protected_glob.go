package policy

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loopguard/loopguard/fsx"
)

// claudeCriticalProbes are concrete names claudeCritical's patterns stand
// for, to test a glob segment against.
var claudeCriticalProbes = []string{"settings.json", "settings.local.json", ".claude.json", "shell-snapshots", "session-env", "plugins"}

// GlobProtection says how protected the strongest path the absolute glob
// pattern could match is, whatever exists now: bash's pathname expansion
// (* ? [...]), and, failing closed, {a,b} and ** as well. A glob that could
// match a protected path is as protected as that path.
func (pl Places) GlobProtection(pattern string) Protection {
	if !filepath.IsAbs(pattern) {
		return Protection{}
	}
	segs := fsx.Segments(filepath.Clean(pattern))
	homes := pl.homes()
	var best Protection
	for _, e := range pl.entries() {
		es := fsx.Segments(e.path)
		if reach(segs, es) {
			if e.claudeDir && len(segs) >= len(es) && !hasDoubleStar(segs[:len(es)]) {
				best = best.max(globClaudeRules(e.path, segs[len(es):], e.desc()))
			} else if e.claudeDir {
				best = best.max(Protection{Tier: GuardCritical, What: e.desc(), Path: e.path})
			} else {
				best = best.max(Protection{Tier: e.tier, Secret: e.secret, What: e.desc(), Path: e.path})
			}
			continue
		}
		if e.tier != GuardCritical {
			continue
		}
		for _, h := range homes {
			if strictlyBelow(e.path, h) {
				// An ancestor below home.
				hs := len(fsx.Segments(h))
				if len(segs) > hs && len(segs) < len(es) && reach(segs, es[:len(segs)]) {
					best = best.max(Protection{Tier: GuardCritical, What: "a directory holding " + e.desc(), Path: e.path})
				}
			}
		}
	}
	for _, h := range homes {
		hs := fsx.Segments(h)
		if len(segs) == len(hs)+1 && reach(segs[:len(hs)], hs) && segCouldMatch(segs[len(hs)], ".claude.json") {
			best = best.max(Protection{Tier: GuardCritical, What: "Claude Code's state (~/.claude.json)", Path: filepath.Join(h, ".claude.json")})
		}
	}
	for i, s := range segs {
		if s == "**" {
			continue
		}
		dir := "/" + strings.Join(segs[:i+1], "/")
		if segCouldMatch(s, claudeDirName) {
			best = best.max(globClaudeRules(dir, segs[i+1:], "a Claude Code configuration directory (.claude)"))
		}
		if segCouldMatch(s, gitDirName) {
			best = best.max(Protection{Tier: ExecConfig, What: "git's directory (its config and hooks run commands)", Path: dir})
		}
		for _, e := range anyDepth() {
			if globReachesParts(segs[i:], e.parts) {
				best = best.max(Protection{Tier: ExecConfig, What: e.what, Path: dir})
			}
		}
	}
	return best
}

// globClaudeRules is claudeRules for the pattern segments below a Claude
// Code configuration directory.
func globClaudeRules(dir string, rest []string, what string) Protection {
	if len(rest) == 0 || rest[0] == "**" {
		return Protection{Tier: GuardCritical, What: what + ", which holds the settings", Path: dir}
	}
	for _, probe := range claudeCriticalProbes {
		if segCouldMatch(rest[0], probe) {
			return claudeRules(dir, []string{probe}, what)
		}
	}
	return Protection{Tier: ExecConfig, What: "a file in " + what, Path: dir}
}

// reach reports whether the glob segments (bash's pathname expansion) can
// match dir (segments) or something below it.
func reach(pat, dir []string) bool { return reachWith(pat, dir, segCouldMatch) }

// RuleCouldReach reports whether a file rule's pattern, split on "/", can
// match dir (split on "/") or something below it. A rule is doublestar
// syntax matched by the guard itself, where * matches a leading dot too.
func RuleCouldReach(pat, dir []string) bool { return reachWith(pat, dir, RuleSegmentCouldMatch) }

// RuleSegmentCouldMatch reports whether one segment of a file rule's
// pattern can match name; a segment no pattern reader can read counts as
// a match (fail closed).
func RuleSegmentCouldMatch(seg, name string) bool { return globCouldMatch(seg, name, false) }

// reachWith is reach and RuleCouldReach, with the segment matcher of
// their syntax. A ** segment can match anything from there on.
func reachWith(pat, dir []string, match func(seg, name string) bool) bool {
	for i, d := range dir {
		if i >= len(pat) {
			return false // the pattern ends above dir
		}
		if pat[i] == "**" {
			return true
		}
		if !match(pat[i], d) {
			return false
		}
	}
	return true
}

func hasDoubleStar(segs []string) bool {
	for _, s := range segs {
		if s == "**" {
			return true
		}
	}
	return false
}

// segCouldMatch reports whether the glob segment seg can match name, as
// bash's pathname expansion would. As in bash, a name starting with "." is
// matched only by a segment that starts with one (or, failing closed, with
// "[" or "{", which could spell it).
func segCouldMatch(seg, name string) bool {
	if seg == name {
		return true
	}
	if strings.HasPrefix(name, ".") && seg != "" && !strings.ContainsRune(".[{\\", rune(seg[0])) {
		return false
	}
	return globCouldMatch(seg, name, true)
}

// globCouldMatch reports whether the doublestar pattern seg can match name
// as spelled (bash on a file system that tells case apart: ".[!S]sh"
// matches .ssh) or in another case (macOS and Windows file systems do
// not: .CLAUDE is .claude there). What no pattern reader can read is, with
// literal, judged as the literal it is, as bash does (an unclosed [ or {,
// an empty []: python's "[f for f in x]" or a format string's "{len(x)}",
// split into words); without it, or when even that fails, it counts as a
// match.
func globCouldMatch(seg, name string, literal bool) bool {
	if bracketClass(seg) {
		return true // doublestar has no [[:class:]], [[=c=]] or [[.c.]]: fail closed
	}
	if strings.Count(seg, "{") > maxGlobBraces {
		// doublestar's match is exponential in the alternations: the
		// seventy-second attack run's {,} 32 times then x held the hook to
		// its deadline with a command of 101 bytes. Counted as a match: a
		// question, never a pass.
		return true
	}
	match := func(seg, name string) bool {
		ok, err := doublestar.Match(seg, name)
		if err != nil && literal {
			ok, err = doublestar.Match(quoteGlob(seg), name)
		}
		return ok || err != nil
	}
	// Each spelling once: most segments and names are lower case already.
	lseg, lname := strings.ToLower(seg), strings.ToLower(name)
	return match(seg, name) || name != lname && match(seg, lname) || seg != lseg && match(lseg, lname)
}

// bracketClass reports whether seg may hold a bracket expression's
// character class, equivalence class or collating symbol ([:lower:],
// [=a=], [.a.]), which bash reads and doublestar does not.
func bracketClass(seg string) bool {
	for _, d := range []string{":", "=", "."} {
		if i := strings.Index(seg, "["+d); i >= 0 && strings.Contains(seg[i+2:], d+"]") {
			return true
		}
	}
	return false
}

// quoteGlob quotes every pattern character of seg.
func quoteGlob(seg string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if strings.IndexByte(`*?[]{},\`, seg[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(seg[i])
	}
	return b.String()
}

// SegmentCouldName reports whether one segment of a file rule's pattern
// (doublestar syntax) could name an entry that is protected at any depth
// (.claude, .git, .mcp.json, shell start-up files...), and what. A rule
// that names one is refused; a rule that only reaches one through ** or a
// bare * stays usable and simply does not cover it.
func SegmentCouldName(seg string) (string, bool) {
	if seg == "**" {
		return "", false
	}
	if segCouldMatch(seg, claudeDirName) {
		return "a Claude Code configuration directory (.claude)", true
	}
	if segCouldMatch(seg, gitDirName) {
		return "git's directory (.git)", true
	}
	for _, e := range anyDepth() {
		if len(e.parts) == 1 && segNames(seg, e.parts[0]) {
			return e.what, true
		}
	}
	if miseConfigName(strings.ToLower(seg)) {
		return miseEnvWhat, true // mise.dev.toml, mise.*.toml
	}
	return "", false
}

// globReachesParts reports whether the glob segments, from their first,
// could match the names parts or a directory that would hold them (the
// pattern ends inside them): a ** reaches everything from there on.
func globReachesParts(segs, parts []string) bool {
	for j, p := range parts {
		if j >= len(segs) {
			return j > 0 // ends inside the names: a directory that holds the entry
		}
		if segs[j] == "**" {
			return true
		}
		if j == 0 && !strings.HasPrefix(p, ".") {
			// A name with no dot counts only when spelled: bash's * would
			// match it, and every glob of a directory would otherwise be
			// executable configuration (Classify still judges the files).
			if !strings.EqualFold(segs[0], p) {
				return false
			}
			continue
		}
		if !segCouldMatch(segs[j], p) {
			return false
		}
	}
	return true
}

// maxGlobBraces bounds the alternations ({a,b}) a segment is matched
// with; one with more could match anything.
const maxGlobBraces = 8
