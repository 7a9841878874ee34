package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loopguard/loopguard/fsx"
)

// hooksPathWhat is what a path core.hooksPath makes a hook is, for a person.
const hooksPathWhat = "git hooks (the directory core.hooksPath names: the human's own git runs them)"

// gitHookNames are the hooks git runs (githooks(5)).
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
}

// maxGitConfig bounds a git configuration file HooksPaths reads; a larger
// one is read as none.
const maxGitConfig = 1 << 20

// HooksPaths are the paths git runs as hooks in the repository of project
// because core.hooksPath names their directory, in the repository's
// configuration (.git/config, and a worktree's) or the user's (~/.gitconfig,
// $XDG_CONFIG_HOME/git/config or else ~/.config/git/config, and
// $GIT_CONFIG_GLOBAL, which git reads instead of both, when set): absolute,
// cleaned, each once; a symbolic link is given as written and resolved.
// For Places.HooksPaths: each is executable configuration.
//
// A relative hooksPath is relative to where git runs hooks, the top of the
// working tree (githooks(5)): the directory above project that holds .git,
// else project. "~/" is the home. A directory that is, or holds, the top
// or the home (hooksPath = ".") is given as its hook names (githooks(5)),
// so that the project is not executable configuration as a whole.
//
// The reader knows git's syntax for [core] hooksPath and follows an
// [include] path one level; [includeIf] is not followed, so a hooksPath
// set only through a conditional include is not seen, nor one set by the
// system configuration (/etc/gitconfig), by -c or by GIT_CONFIG_* in the
// environment. A file it cannot read or parse (a file git refuses too)
// names no hooksPath; it never panics. getenv reads $XDG_CONFIG_HOME and
// $GIT_CONFIG_GLOBAL (nil reads nothing).
func HooksPaths(project, home string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if !filepath.IsAbs(home) {
		home = ""
	}
	var top string
	var files []string
	if filepath.IsAbs(project) {
		project = filepath.Clean(project)
		top = project
		if t, gitDir := gitTop(project); t != "" {
			top = t
			files = append(files, repoConfigFiles(gitDir)...)
		}
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
		if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			files = append(files, filepath.Join(x, "git", "config"))
		} else {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
	}
	if g := getenv("GIT_CONFIG_GLOBAL"); filepath.IsAbs(g) {
		files = append(files, g)
	}
	var dirs []string
	for _, f := range files {
		for _, v := range hooksPathValues(f, home, true) {
			if d := expandGitPath(v, home, top); d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, d := range dirs {
		for _, p := range []string{d, resolved(d)} {
			if p == "" {
				continue
			}
			if (top != "" && fsx.Within(top, p)) || (home != "" && fsx.Within(home, p)) {
				for _, h := range gitHookNames {
					add(filepath.Join(p, h))
				}
				continue
			}
			add(p)
		}
	}
	return out
}

// resolved is p with its symbolic links resolved, "" when that fails or
// changes nothing.
func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}

// gitTop finds the working tree that holds dir: the nearest directory at
// or above it with a .git, and the git directory that .git is (a worktree's
// .git file names it). "" when there is none.
func gitTop(dir string) (top, gitDir string) {
	for d := dir; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if fi, err := os.Lstat(g); err == nil {
			switch {
			case fi.IsDir():
				return d, g
			case fi.Mode().IsRegular():
				b, err := fsx.ReadRegular(g, 4096, 0)
				if err != nil {
					return d, ""
				}
				line, _, _ := strings.Cut(string(b), "\n")
				p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
				if !ok {
					return d, ""
				}
				p = strings.TrimSpace(p)
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				return d, filepath.Clean(p)
			}
			return d, ""
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// repoConfigFiles are the configuration files of the git directory
// gitDir: its config and config.worktree, and, for a linked worktree, those
// of the common directory its commondir names.
func repoConfigFiles(gitDir string) []string {
	if gitDir == "" {
		return nil
	}
	out := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if b, err := fsx.ReadRegular(filepath.Join(gitDir, "commondir"), 4096, 0); err == nil {
		c := strings.TrimSpace(string(b))
		if c != "" {
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitDir, c)
			}
			out = append(out, filepath.Join(c, "config"))
		}
	}
	return out
}

// hooksPathValues are the core.hooksPath values of the git configuration
// file f, and, when follow is set, of the files its [include] path names
// (one level). A file that is missing, too large or not git's syntax gives
// none.
func hooksPathValues(f, home string, follow bool) []string {
	b, err := fsx.ReadRegular(f, maxGitConfig, 0)
	if err != nil {
		return nil
	}
	vars, ok := parseGitConfig(string(b))
	if !ok {
		return nil
	}
	var out []string
	for _, v := range vars {
		switch {
		case v.name == "core.hookspath" && v.hasValue:
			out = append(out, v.value)
		case v.name == "include.path" && v.hasValue && follow:
			if inc := expandGitPath(v.value, home, filepath.Dir(f)); inc != "" {
				out = append(out, hooksPathValues(inc, home, false)...)
			}
		}
	}
	return out
}

// expandGitPath is a pathname value of git's configuration made absolute:
// "~/" is the home, a relative path is relative to base. "" for an empty
// value (what git makes of an empty hooksPath has changed across its
// versions; it is never the project as a whole), or one this reader does
// not expand (~user/, %(prefix)/).
func expandGitPath(v, home, base string) string {
	switch {
	case v == "":
		return ""
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(v, "~"))
	case strings.HasPrefix(v, "~"), strings.HasPrefix(v, "%("):
		return ""
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	case base == "":
		return ""
	}
	return filepath.Join(base, v)
}

// gitConfigVar is one variable of a git configuration file: its full name
// as git spells it for comparison (section and key lower case, a
// subsection as written: "core.hookspath", "includeif.gitdir:~/x.path"),
// and its value (hasValue false for a bare "key", git's true).
type gitConfigVar struct {
	name     string
	value    string
	hasValue bool
}

// parseGitConfig reads git's configuration syntax (git-config(1) CONFIGURATION
// FILE), as git's own parser does: comments, section headers (with a
// quoted subsection, or the old [section.sub]), keys, values with quotes,
// escapes and continued lines. ok is false where git would refuse the file
// ("bad config line").
func parseGitConfig(text string) (vars []gitConfigVar, ok bool) {
	r := &gitConfigReader{s: strings.TrimPrefix(text, "\ufeff")}
	if strings.IndexByte(r.s, 0) >= 0 {
		return nil, false
	}
	var stem string // "section." or "section.sub." ("" before the first header: git reads such a key too)
	comment := false
	for {
		c := r.next()
		if c == '\n' {
			if r.eof {
				return vars, true
			}
			comment = false
			continue
		}
		if comment || isGitSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			base, ok := r.header()
			if !ok || base == "" {
				return nil, false
			}
			stem = base + "."
			continue
		}
		if !isAlpha(c) {
			return nil, false
		}
		v, ok := r.variable(c)
		if !ok {
			return nil, false
		}
		v.name = stem + v.name
		vars = append(vars, v)
	}
}

// gitConfigReader reads a configuration file a byte at a time, as git's
// get_next_char: "\r\n" is "\n", and the end reads as "\n" with eof set.
type gitConfigReader struct {
	s   string
	i   int
	eof bool
}

func (r *gitConfigReader) next() byte {
	if r.i >= len(r.s) {
		r.eof = true
		return '\n'
	}
	c := r.s[r.i]
	r.i++
	if c == '\r' && r.i < len(r.s) && r.s[r.i] == '\n' {
		r.i++
		return '\n'
	}
	return c
}

// header reads a section header after its "[": the section's name, lower
// case, with ".sub" for a subsection (as written when quoted).
func (r *gitConfigReader) header() (string, bool) {
	var b strings.Builder
	for {
		c := r.next()
		if r.eof {
			return "", false
		}
		switch {
		case c == ']':
			return b.String(), true
		case isGitSpace(c):
			return r.subsection(b.String(), c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		b.WriteByte(lower(c))
	}
}

// subsection reads [section "sub"] from the space after the section's name.
func (r *gitConfigReader) subsection(base string, c byte) (string, bool) {
	for isGitSpace(c) {
		if c == '\n' {
			return "", false
		}
		c = r.next()
	}
	if c != '"' {
		return "", false
	}
	var b strings.Builder
	b.WriteString(base + ".")
	for {
		c := r.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = r.next(); c == '\n' {
				return "", false
			}
		}
		b.WriteByte(c)
	}
	if r.next() != ']' {
		return "", false
	}
	return b.String(), true
}

// variable reads a key from its first letter c, and its value.
func (r *gitConfigReader) variable(c byte) (gitConfigVar, bool) {
	var name strings.Builder
	for {
		name.WriteByte(lower(c))
		c = r.next()
		if r.eof || !isKeyChar(c) {
			break
		}
	}
	for c == ' ' || c == '\t' {
		c = r.next()
	}
	v := gitConfigVar{name: name.String()}
	if c == '\n' {
		return v, true // a bare key: git's true
	}
	if c != '=' {
		return v, false
	}
	value, ok := r.value()
	v.value, v.hasValue = value, true
	return v, ok
}

// value reads a value after its "=", as git's parse_value: whitespace
// around it dropped, inside it each kept as a space, "..." quoted, # and ;
// start a comment outside quotes, \n \t \b \" \\ and a backslash before the
// line's end (which continues it) the only escapes.
func (r *gitConfigReader) value() (string, bool) {
	var b strings.Builder
	quote, comment, space := false, false, 0
	for {
		c := r.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			return b.String(), true
		}
		if comment {
			continue
		}
		if isGitSpace(c) && !quote {
			if b.Len() > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			switch c = r.next(); c {
			case '\n':
				continue // a continued line (or the end, as for git)
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			b.WriteByte(c)
		case '"':
			quote = !quote
		default:
			b.WriteByte(c)
		}
	}
}

func isGitSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
