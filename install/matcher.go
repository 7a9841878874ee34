package install

import (
	"regexp"
	"strings"
)

// MatcherCovers reports whether Claude Code runs a hook registered with
// matcher for tool: "*" or "" match all; a matcher of only letters, digits,
// '_', '-', spaces, ',' and '|' is a list of exact names; anything else is
// an unanchored regular expression (JavaScript's; Go's RE2 agrees on the
// forms that matter here). A matcher that does not compile covers nothing.
func MatcherCovers(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	if strings.Trim(matcher, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- ,|") == "" {
		for _, name := range strings.FieldsFunc(matcher, func(r rune) bool { return r == '|' || r == ',' }) {
			if strings.TrimSpace(name) == tool {
				return true
			}
		}
		return false
	}
	re, err := regexp.Compile(matcher)
	return err == nil && re.MatchString(tool)
}

// Unguarded lists the tools of tools that matcher leaves out.
func Unguarded(matcher string, tools []string) []string {
	var out []string
	for _, t := range tools {
		if !MatcherCovers(matcher, t) {
			out = append(out, t)
		}
	}
	return out
}
