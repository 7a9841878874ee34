package scope

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Directories at the project root that no Edit or Write scope may reach:
// the ones Claude Code itself protects in bypassPermissions mode.
var (
	projectWriteProtected = []string{".claude", ".git", ".vscode", ".idea"}
	projectWhy            = map[string]string{
		".claude": "its settings hold the hooks",
		".git":    "git config and hooks run commands",
		".vscode": "editor tasks run commands",
		".idea":   "editor run configurations run commands",
	}
)

// Directories under the home directory a file scope may not reach.
var (
	// editable by no scope: hook settings, guard state, keyrings, the guard
	homeWriteProtected = [][]string{
		{".claude"}, {".local", "state", "loopguard"}, {".config", "loopguard"},
		{".local", "share", "keyrings"}, {"Library", "Keychains"},
		{"go", "bin", "loopguard"}, {".local", "bin", "loopguard"}, {"bin", "loopguard"},
	}
	// readable by no scope: the guard's state and the keyrings
	homeReadProtected = [][]string{
		{".local", "state", "loopguard"}, {".config", "loopguard"},
		{".local", "share", "keyrings"}, {"Library", "Keychains"},
	}
)

func dangerousFile(r Rule, home string) error {
	if err := dangerousAtRoot(r, home); err != nil {
		return err
	}
	return dangerousProtected(r, strings.Split(r.pattern, "/"), home, r.tool != toolRead)
}

// dangerousAtRoot refuses rules that reach the project's own protected
// directories, or the home directory's, from where they are anchored.
func dangerousAtRoot(r Rule, home string) error {
	writes := r.tool != toolRead
	pat := strings.Split(r.pattern, "/")
	homeDirs := homeReadProtected
	if writes {
		homeDirs = homeWriteProtected
	}
	switch r.anchor {
	case anchorProject:
		if !writes || r.IsJailFiles() {
			return nil
		}
		for _, d := range projectWriteProtected {
			if policy.RuleCouldReach(pat, []string{d}) {
				return dangerous(r, "it can reach the project's %s/ directory (%s)", d, projectWhy[d])
			}
		}
		return nil
	case anchorHome:
		for _, d := range homeDirs {
			if policy.RuleCouldReach(pat, d) {
				return dangerous(r, "it can reach ~/%s", strings.Join(d, "/"))
			}
		}
		return nil
	case anchorRoot:
		if writes {
			for _, seg := range pat {
				for _, d := range projectWriteProtected {
					if seg != "**" && policy.RuleSegmentCouldMatch(seg, d) {
						return dangerous(r, "it can reach a %s/ directory (%s)", d, projectWhy[d])
					}
				}
			}
		}
		if !filepath.IsAbs(home) {
			return dangerous(r, "cannot check an absolute pattern without the home directory")
		}
		hs := fsx.Segments(filepath.Clean(home))
		for _, d := range homeDirs {
			if policy.RuleCouldReach(pat, append(append([]string{}, hs...), d...)) {
				return dangerous(r, "it can reach %s", filepath.Join(append([]string{home}, d...)...))
			}
		}
		return nil
	}
	return dangerous(r, "invalid file rule")
}

// dangerousProtected refuses a rule that names a protected path of either
// tier (policy): segments that spell .claude, .git, .mcp.json,
// .cursor/mcp.json, a shell start-up file, .npmrc..., or a pattern that can
// reach a fixed protected path (~/.config/go/env).
// Rules that only reach one through ** or * stay usable; matching never
// covers a protected path anyway.
func dangerousProtected(r Rule, pat []string, home string, writes bool) error {
	if writes {
		if what, ok := policy.PatternCouldName(r.pattern); ok {
			return dangerous(r, "it names %s, which no scope may cover", what)
		}
	}
	if !filepath.IsAbs(home) || r.anchor == anchorProject {
		return nil
	}
	hs := fsx.Segments(filepath.Clean(home))
	for _, root := range (policy.Places{Home: home}).Roots() {
		if !writes && !root.Secret {
			continue
		}
		rs := fsx.Segments(root.Path)
		if r.anchor == anchorHome {
			if len(rs) <= len(hs) || !slices.Equal(rs[:len(hs)], hs) {
				continue
			}
			rs = rs[len(hs):]
		}
		if policy.RuleCouldReach(pat, rs) {
			return dangerous(r, "it can reach %s (%s)", root.Path, root.What)
		}
	}
	return nil
}
