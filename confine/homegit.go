package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// gitRules are the files git reads to run, found as git finds them (git
// 2.39, config.c and dir.c):
//   - the system configuration ($GIT_CONFIG_SYSTEM, /etc/gitconfig; /etc is
//     read whole, but its includes and settings may name the home), the
//     global one ($GIT_CONFIG_GLOBAL, else ~/.gitconfig and
//     $XDG_CONFIG_HOME/git/config or ~/.config/git/config), the
//     repository's (.git/config, config.worktree, the common directory's);
//   - every file these include ([include] path, and every
//     [includeIf "..."] path whatever its condition: a file git might not
//     read is harmless to read when it passes the veto, and a condition
//     judged wrongly would break git), relative to the including file, ~/
//     expanded, to git's depth of 10;
//   - the files their settings name: core.excludesFile (by default
//     $XDG_CONFIG_HOME/git/ignore, where Claude Code writes), core.attributesFile
//     (.../git/attributes), gpg.ssh.allowedSignersFile (log
//     --show-signature), diff.orderFile, mailmap.file, blame.ignoreRevsFile,
//     commit.template; and the directories core.hooksPath (git reads a
//     hook to run it) and init.templateDir.
//
// What the repository's configuration names (a file confined code with
// +git may write) is granted as a file only, never a directory.
func (v *homeVet) gitRules(s Spec, env func(string) string) {
	g := &gitChain{v: v, home: v.home}
	xdg := ""
	switch x := env("XDG_CONFIG_HOME"); {
	case x == "":
		xdg = filepath.Join(v.home, ".config", "git")
	case filepath.IsAbs(x):
		xdg = filepath.Join(x, "git")
	}
	if !gitBool(env("GIT_CONFIG_NOSYSTEM")) {
		sys := env("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		g.file(sys, 0, trustUser)
	}
	if gl := env("GIT_CONFIG_GLOBAL"); gl != "" {
		g.file(g.expand(gl), 0, trustUser)
	} else {
		if xdg != "" {
			g.file(filepath.Join(xdg, "config"), 0, trustUser)
		}
		g.file(filepath.Join(v.home, ".gitconfig"), 0, trustUser)
	}
	for _, c := range repoConfigs(s.Project) {
		g.file(c, 0, trustProject)
	}
	if xdg != "" {
		v.grant(filepath.Join(xdg, "ignore"), fileKind, trustUser)
		v.grant(filepath.Join(xdg, "attributes"), fileKind, trustUser)
	}
}

// repoConfigs are the configuration files of the repository at project:
// .git/config, or, for a worktree or submodule (a .git file), its git
// directory's config.worktree and its common directory's config.
func repoConfigs(project string) []string {
	if project == "" {
		return nil
	}
	dot := filepath.Join(project, ".git")
	if fi, err := os.Stat(dot); err == nil && fi.IsDir() {
		return []string{filepath.Join(dot, "config"), filepath.Join(dot, "config.worktree")}
	}
	var out []string
	for _, d := range linkedGitDirs(project) {
		out = append(out, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
	}
	return out
}

// gitBool is git's reading of a boolean variable's value as true.
func gitBool(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// maxGitInclude is git's MAX_INCLUDE_DEPTH.
const maxGitInclude = 10

// maxGitConfig bounds the bytes read of one configuration file.
const maxGitConfig = 1 << 20

// gitFileKeys are the settings that name a file git reads, and
// gitDirKeys a directory (section.key, lower-cased).
var (
	gitFileKeys = map[string]bool{"core.excludesfile": true, "core.attributesfile": true, "gpg.ssh.allowedsignersfile": true,
		"diff.orderfile": true, "mailmap.file": true, "blame.ignorerevsfile": true, "commit.template": true}
	gitDirKeys = map[string]bool{"core.hookspath": true, "init.templatedir": true}
)

// gitChain follows one launch's git configuration files.
type gitChain struct {
	v     *homeVet
	home  string
	files int
}

// maxGitFiles bounds the configuration files one launch reads.
const maxGitFiles = 64

// file reads the configuration file at p (as git names it: a relative
// include is relative to this name, not to where its links lead), at
// include depth depth, if it is one git could read confined (it passes the
// veto, or it is in the project, which is read whole), and follows it.
func (g *gitChain) file(p string, depth int, t trust) {
	if !filepath.IsAbs(p) || depth > maxGitInclude || g.files >= maxGitFiles {
		return
	}
	p = filepath.Clean(p)
	t = g.v.trustOf(p, t)
	r, ok := g.v.realpath(p)
	if !ok {
		return
	}
	if g.v.project != "" && within(r, g.v.project) {
		// The project is read whole: a regular file of it is read
		// here (not what a link of it leads to outside).
		if st := g.v.lstat(r); st.err != nil || !st.fi.Mode().IsRegular() {
			return
		}
	} else if r, ok = g.v.grant(p, fileKind, t); !ok {
		return
	}
	g.files++
	data, err := readLimited(r, maxGitConfig)
	if err != nil {
		return
	}
	entries, _ := parseGitConfig(data) // git stops at a bad line too (and dies)
	for _, e := range entries {
		switch {
		case e.bare:
		case e.name == "include.path" || isIncludeIfPath(e.name):
			inc := g.expand(e.value)
			if inc == "" {
				continue
			}
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(p), inc)
			}
			g.file(inc, depth+1, t)
		case gitFileKeys[e.name]:
			if f := g.expand(e.value); filepath.IsAbs(f) {
				g.v.grant(f, fileKind, t)
			}
		case gitDirKeys[e.name]:
			if d := g.expand(e.value); filepath.IsAbs(d) {
				g.v.grant(d, dirKind, t)
			}
		}
	}
}

// isIncludeIfPath: includeIf.<condition>.path, with any condition.
func isIncludeIfPath(name string) bool {
	rest, ok := strings.CutPrefix(name, "includeif.")
	return ok && strings.HasSuffix(rest, ".path") && len(rest) > len(".path")
}

// expand is git's interpolate_path: ~/ and ~ are the home; ~user/ and
// %(prefix)/ are not followed (another user's home, git's own prefix: not
// this home's); anything else is as written.
func (g *gitChain) expand(s string) string {
	switch {
	case strings.HasPrefix(s, "%(prefix)/"):
		return ""
	case s == "~":
		return g.home
	case strings.HasPrefix(s, "~/"):
		return g.home + s[1:]
	case strings.HasPrefix(s, "~"):
		return ""
	}
	return s
}

// readLimited reads up to n bytes of the file p, by plain system calls:
// os.Open's registration with the poller costs more than a small file's
// read, and a launch reads several.
func readLimited(p string, n int) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 4096)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := syscall.Read(fd, buf[len(buf):min(cap(buf), n)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		buf = buf[:len(buf)+m]
	}
	return buf, nil
}

// gitEntry is one setting of a git configuration file: its name as `git
// config --list` spells it (section and key lower-cased, a subsection as
// written: includeif.gitdir:~/work/.path), its value, and bare for a key
// with no "=" (a boolean true, which has no value).
type gitEntry struct {
	name, value string
	bare        bool
}

var errGitConfig = errors.New("bad config line")

// parseGitConfig reads a git configuration file as git's
// git_parse_source does, up to its first bad line: sections [section],
// [section "subsection"] (\ escapes the next character) and the old
// [section.subsection]; a key alone or key = value, where outside double
// quotes # and ; begin a comment and a run of white space is kept (each
// character one space) but at the ends; \" \\ \n \t \b escape; a
// backslash ending a line continues the value on the next. A UTF-8 BOM at
// the start is skipped, CR LF is LF.
func parseGitConfig(data []byte) ([]gitEntry, error) {
	p := gitParser{data: data}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.i = 3
	}
	var out []gitEntry
	var section string // "section." or "section.subsection."
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			s, ok := p.sectionName()
			if !ok || s == "" {
				return out, errGitConfig
			}
			section = s + "."
			continue
		}
		if !isAlpha(c) {
			return out, errGitConfig
		}
		e, ok := p.setting(section, c)
		if !ok {
			return out, errGitConfig
		}
		out = append(out, e)
	}
}

type gitParser struct {
	data []byte
	i    int
	eof  bool
}

// next is git's get_next_char: CR LF reads as LF, the end as LF (eof).
func (p *gitParser) next() byte {
	if p.i >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.i]
	p.i++
	if c == '\r' && p.i < len(p.data) && p.data[p.i] == '\n' {
		p.i++
		return '\n'
	}
	return c
}

// sectionName reads what follows "[" (git's get_base_var and
// get_extended_base_var).
func (p *gitParser) sectionName() (string, bool) {
	var b strings.Builder
	for {
		c := p.next()
		if p.eof {
			return "", false
		}
		if c == ']' {
			return b.String(), true
		}
		if isSpace(c) {
			for isSpace(c) {
				if c == '\n' {
					return "", false
				}
				c = p.next()
			}
			if c != '"' {
				return "", false
			}
			b.WriteByte('.')
			for {
				c := p.next()
				if c == '\n' {
					return "", false
				}
				if c == '"' {
					break
				}
				if c == '\\' {
					if c = p.next(); c == '\n' {
						return "", false
					}
				}
				b.WriteByte(c)
			}
			if p.next() != ']' {
				return "", false
			}
			return b.String(), true
		}
		if !isKeyChar(c) && c != '.' {
			return "", false
		}
		b.WriteByte(lower(c))
	}
}

// setting reads a key whose first character is c, and its value (git's
// get_value and parse_value).
func (p *gitParser) setting(section string, c byte) (gitEntry, bool) {
	var name strings.Builder
	name.WriteString(section)
	name.WriteByte(lower(c))
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name.WriteByte(lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return gitEntry{name: name.String(), bare: true}, true
	}
	if c != '=' {
		return gitEntry{}, false
	}
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return gitEntry{}, false
			}
			return gitEntry{name: name.String(), value: string(v)}, true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return gitEntry{}, false
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// isSpace is git's isspace: space, tab, LF and CR (not VT or FF).
func isSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool   { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
