package scope

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// ReasonProtectedPath: the path is a protected resource, which no scope
// covers (see policy).
const ReasonProtectedPath = "protected_path"

// anchor is where a file pattern is rooted.
type anchor uint8

const (
	anchorProject anchor = iota + 1 // bare, ./ or / : the project dir
	anchorHome                      // ~/
	anchorRoot                      // //  : the file system root
)

func (a anchor) prefix() string {
	switch a {
	case anchorHome:
		return "~/"
	case anchorRoot:
		return "//"
	}
	return ""
}

const (
	maxPatternLen = 1024
	maxPathLen    = 4096
)

// parseFileSpec parses the specifier of Edit/Write/Read rules.
func parseFileSpec(spec string) (anchor, string, *specError) {
	a := anchorProject
	pat := spec
	off := 0
	switch {
	case strings.HasPrefix(spec, "//"):
		a, pat, off = anchorRoot, spec[2:], 2
	case strings.HasPrefix(spec, "~/"):
		a, pat, off = anchorHome, spec[2:], 2
	case strings.HasPrefix(spec, "~"):
		return 0, "", serr(0, "~user paths are not supported; write ~/path")
	case strings.HasPrefix(spec, "./"):
		pat, off = spec[2:], 2
	case strings.HasPrefix(spec, "/"):
		pat, off = spec[1:], 1
	}
	if pat == "" {
		return 0, "", serr(off, "empty path pattern")
	}
	if len(pat) > maxPatternLen {
		return 0, "", serr(off, "path pattern longer than %d bytes", maxPatternLen)
	}
	if i := strings.IndexAny(pat, "{}\\"); i >= 0 {
		return 0, "", serr(off+i, "%q is not supported in path patterns (no braces, no escapes)", pat[i])
	}
	if strings.HasSuffix(pat, "/") {
		return 0, "", serr(off+len(pat)-1, "trailing '/'; write dir/** to cover a directory's contents")
	}
	segOff := off
	for _, seg := range strings.Split(pat, "/") {
		switch seg {
		case "":
			return 0, "", serr(segOff, "empty path segment")
		case ".", "..":
			return 0, "", serr(segOff, "%q segments are not allowed in path patterns", seg)
		}
		if strings.Contains(seg, "**") && seg != "**" {
			return 0, "", serr(segOff, "** must be a whole path segment")
		}
		segOff += len(seg) + 1
	}
	if !doublestar.ValidatePattern(pat) {
		return 0, "", serr(off, "invalid path pattern")
	}
	return a, pat, nil
}

// fileInputKey is the tool_input field holding the target path.
func fileInputKey(tool string) string {
	if f := policy.ToolOf(tool).Changes; f != "" {
		return f
	}
	return "file_path" // Read rules: Read's file_path
}

// matchFile resolves the call's target and matches it against the rule.
func matchFile(r Rule, c Call) error {
	if !r.CoversTool(c.Tool) {
		return mismatch(ReasonToolMismatch, "rule %s does not cover tool %q", r, c.Tool)
	}
	raw, ok := c.Input[fileInputKey(c.Tool)].(string)
	if !ok || raw == "" {
		return mismatch(ReasonMalformedInput, "%s: missing or non-string %s", c.Tool, fileInputKey(c.Tool))
	}
	if len(raw) > maxPathLen || strings.IndexByte(raw, 0) >= 0 {
		return mismatch(ReasonMalformedInput, "%s: unusable path", c.Tool)
	}
	for _, seg := range strings.Split(filepath.ToSlash(raw), "/") {
		if seg == ".." {
			return mismatch(ReasonPathEscapes, "path %q contains '..'", raw)
		}
	}
	target := raw
	if !filepath.IsAbs(target) {
		if !filepath.IsAbs(c.Cwd) {
			return mismatch(ReasonMalformedInput, "relative path %q without an absolute cwd", raw)
		}
		target = filepath.Join(c.Cwd, target)
	}
	resolved, err := fsx.ResolvePath(target)
	if err != nil {
		return mismatch(ReasonMalformedInput, "failed to resolve %q: %v", raw, err)
	}
	// No scope covers a protected path, at any depth: Edit(src/**) does
	// not cover src/.claude/skills/... nor src/.git/config.
	pl := policy.Places{Home: c.Home}
	for _, at := range []string{filepath.Clean(target), resolved} {
		p := pl.Classify(at)
		if p.Protected() && (c.Tool != toolRead || p.Secret) {
			return mismatch(ReasonProtectedPath, "%q is %s (%s): no scope covers it", raw, p.What, p.Tier)
		}
	}
	var base string
	switch r.anchor {
	case anchorProject:
		base = c.ProjectDir
		if base == "" {
			base = c.Cwd
		}
	case anchorHome:
		base = c.Home
	case anchorRoot:
		base = "/"
	default:
		return mismatch(ReasonMalformedInput, "rule has no anchor")
	}
	if !filepath.IsAbs(base) {
		return mismatch(ReasonMalformedInput, "no absolute base directory for rule %s", r)
	}
	rbase, err := fsx.ResolvePath(base)
	if err != nil {
		return mismatch(ReasonMalformedInput, "failed to resolve base directory: %v", err)
	}
	rel, err := filepath.Rel(rbase, resolved)
	if err != nil {
		return mismatch(ReasonPathEscapes, "%q is not under %s", raw, rbase)
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return mismatch(ReasonPathEscapes, "%q resolves to %s, outside %s", raw, resolved, rbase)
	}
	if rel == "." {
		return mismatch(ReasonPathMismatch, "%q is the base directory itself", raw)
	}
	ok, err = doublestar.Match(r.pattern, rel)
	if err != nil || !ok {
		return mismatch(ReasonPathMismatch, "%q (%s) does not match %s", raw, rel, r.spec)
	}
	return nil
}
