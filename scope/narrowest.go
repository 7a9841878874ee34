package scope

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/shellparse"
)

// ErrNoNarrowRule is returned by Narrowest when no rule narrower than an
// exact approval can be offered for a call.
var ErrNoNarrowRule = errors.New("no narrow rule covers this call")

// Narrowest returns the narrowest rule that covers call c: for Bash the
// command's own words, pinned to the executable they resolve to under env;
// for file tools the one file; for WebFetch the one host; for an MCP tool
// that tool. The rule is offered only if it parses, is not refused by
// Dangerous (home is the user's home) and covers c under Match: exactly
// the checks a grant of it passes, and the hook's check of its use.
func Narrowest(c Call, env shellparse.Env) (Rule, error) {
	text, err := narrowText(c)
	if err != nil {
		return Rule{}, err
	}
	return offerable(text, c, env)
}

// offerable is the rule text as review may offer it for c: parsed, not
// refused by Dangerous, pinned in env, and covering c under Match (the
// checks a grant of it passes, and the hook's check of its use).
func offerable(text string, c Call, env shellparse.Env) (Rule, error) {
	r, err := Parse(text)
	if err != nil {
		return Rule{}, fmt.Errorf("%w: %v", ErrNoNarrowRule, err)
	}
	if err := Dangerous(r, c.Home); err != nil {
		return Rule{}, fmt.Errorf("%w: %v", ErrNoNarrowRule, err)
	}
	if r, err = r.Pin(env); err != nil {
		return Rule{}, fmt.Errorf("%w: %v", ErrNoNarrowRule, err)
	}
	if err := Match(r, c); err != nil {
		return Rule{}, fmt.Errorf("%w: %s does not cover the call: %v", ErrNoNarrowRule, r, err)
	}
	return r, nil
}

// globChars are the characters a file rule reads as a pattern.
const globChars = "*?[]{}\\"

func narrowText(c Call) (string, error) {
	switch c.Tool {
	case toolBash:
		sh := c.Shell
		if sh == nil || sh.Verdict != shellparse.Simple || len(sh.Argv) == 0 {
			return "", fmt.Errorf("%w: only a simple command can be granted", ErrNoNarrowRule)
		}
		if len(sh.Assigns) > 0 || len(sh.Redirects) > 0 {
			return "", fmt.Errorf("%w: a command with assignments or redirections is approved one at a time", ErrNoNarrowRule)
		}
		var bs bashSpec
		for _, w := range sh.Argv {
			if w.Glob {
				return "", fmt.Errorf("%w: a glob word matches files that change", ErrNoNarrowRule)
			}
			bs.words = append(bs.words, bashWord{lits: []string{w.Value}})
		}
		return "Bash(" + bs.String() + ")", nil
	case toolEdit, toolMultiEdit, toolWrite, toolNotebookEdit:
		raw, _ := c.Input[fileInputKey(c.Tool)].(string)
		if raw == "" || !filepath.IsAbs(raw) || strings.ContainsAny(raw, globChars+"()\x00\n") {
			return "", fmt.Errorf("%w: the path is not absolute or holds pattern characters", ErrNoNarrowRule)
		}
		clean := filepath.Clean(raw)
		spec := "/" + clean // "//" anchors at the root
		if c.ProjectDir != "" {
			if rel, err := filepath.Rel(filepath.Clean(c.ProjectDir), clean); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				spec = filepath.ToSlash(rel)
			}
		}
		tool := toolEdit
		if c.Tool == toolWrite {
			tool = toolWrite
		}
		return tool + "(" + spec + ")", nil
	case toolWebFetch:
		raw, _ := c.Input["url"].(string)
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return "", fmt.Errorf("%w: the URL has no host", ErrNoNarrowRule)
		}
		return "WebFetch(domain:" + strings.ToLower(u.Hostname()) + ")", nil
	}
	if strings.HasPrefix(c.Tool, "mcp__") && !strings.ContainsAny(c.Tool, "*()") {
		return c.Tool, nil
	}
	return "", fmt.Errorf("%w: %s calls are approved one at a time", ErrNoNarrowRule, c.Tool)
}

// Part is part i of chain c (c.Shell.Parts, from shellparse: a simple
// command joined to the others by ;, &&, || or a pipe) as a call of its
// own, judged where the hook judges it (hooks/chain.go): in the cwd an
// earlier cd of the chain moved to, with the chain's input. env is the
// chain's, with that cwd.
func Part(c Call, env shellparse.Env, i int) (Call, shellparse.Env) {
	p := &c.Shell.Parts[i]
	c.Shell, c.Cwd = p, p.Cwd
	env.Cwd = p.Cwd
	return c, env
}

// NarrowestParts returns Narrowest of each part of chain c on its own, in
// order: the rules that together cover the chain, part by part, as the
// hook judges a chain against grants. It fails, naming the part, when one
// part cannot be granted; a call that is not such a chain has none.
func NarrowestParts(c Call, env shellparse.Env) ([]Rule, error) {
	sh := c.Shell
	if c.Tool != toolBash || sh == nil || sh.Verdict != shellparse.Chained || len(sh.Parts) == 0 {
		return nil, fmt.Errorf("%w: not a chain of simple commands", ErrNoNarrowRule)
	}
	rules := make([]Rule, len(sh.Parts))
	for i := range sh.Parts {
		r, err := Narrowest(Part(c, env, i))
		if err != nil {
			return nil, fmt.Errorf("the part `%s`: %w", PartText(&sh.Parts[i]), err)
		}
		rules[i] = r
	}
	return rules, nil
}

// PartText is one part of a chain as its words, for messages.
func PartText(p *shellparse.Result) string {
	w := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		w[i] = a.Value
	}
	return strings.Join(w, " ")
}
