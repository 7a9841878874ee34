package scope

import (
	"fmt"
	"sort"
	"strings"
)

// PresetReadOnly names the preset of everyday read-only commands.
const PresetReadOnly = "readonly"

// presets are named standing sets of rules a human mints in one step
// (loopguard grant --preset NAME, offered by init). This is the one list:
// grant mints it, grants shows it as one preset, revoke --preset removes it.
//
// Every rule goes through Dangerous like any other rule, and matching keeps
// all its narrowing: the wildcard never covers an option the option table
// calls code, a write or unknown (git diff --output=, --ext-diff, git -c,
// sort -o, rg --pre), a call is never covered when it touches a protected
// resource (the hook's protected check runs before any scope), and a git
// call is covered only in the project's own repository (gitRepository).
//
// Left out on purpose: pagers and editors (less, more, vim: they run
// commands), find (-exec, -delete), tree (-o writes), printenv and env
// (tokens in the environment; env runs commands), sed and awk
// (interpreters), date (-s), git branch * (-d, -m change branches).
var presets = map[string][]string{
	PresetReadOnly: {
		"Bash(ls *)", "Bash(cat *)", "Bash(head *)", "Bash(tail *)", "Bash(wc *)", "Bash(pwd)",
		"Bash(file *)", "Bash(stat *)", "Bash(du *)", "Bash(df *)", "Bash(which *)",
		"Bash(grep *)", "Bash(rg *)", "Bash(diff *)", "Bash(cmp *)",
		"Bash(basename *)", "Bash(dirname *)", "Bash(realpath *)", "Bash(readlink *)",
		"Bash(uname *)", "Bash(whoami)",
		"Bash(git status *)", "Bash(git log *)", "Bash(git diff *)", "Bash(git show *)",
		"Bash(git rev-parse *)", "Bash(git ls-files *)", "Bash(git blame *)", "Bash(git branch)",
		"Bash(go vet *)", "Bash(go list *)", "Bash(go version)", "Bash(go env *)", "Bash(go doc *)",
	},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for n := range presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Preset returns the parsed, unpinned rules of the named preset, each
// accepted by Dangerous.
func Preset(name, home string) ([]Rule, error) {
	texts, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	rules := make([]Rule, 0, len(texts))
	for _, t := range texts {
		r, err := Parse(t)
		if err != nil {
			return nil, fmt.Errorf("preset %s: %w", name, err)
		}
		if err := Dangerous(r, home); err != nil {
			return nil, fmt.Errorf("preset %s: %w", name, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// Unpinned is r without its pinned executable and content digest, as a
// person wrote it.
func (r Rule) Unpinned() Rule {
	r.exe, r.digest = "", ""
	return r
}

// PresetOf names the preset a rule (pinned or not) belongs to, or "".
func PresetOf(r Rule) string {
	s := r.Unpinned().String()
	for name, texts := range presets {
		for _, t := range texts {
			if p, err := Parse(t); err == nil && p.String() == s {
				return name
			}
		}
	}
	return ""
}
