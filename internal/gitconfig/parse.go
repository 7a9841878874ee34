// Package gitconfig reads git's configuration as git 2.39 reads it: the
// syntax of one file (Parse, held to `git config --list -z`) and the
// chain of files the include and includeIf settings add (Chain, held to
// `git config --list --show-origin --includes`). It has no opinion about
// what a setting means: policy (core.hooksPath) and confine (the files
// git reads) ask it, each with its own list of starting files.
package gitconfig

import (
	"errors"
	"strings"
)

// Entry is one setting of a git configuration file: its name as `git
// config --list` spells it (section and key lower-cased, a subsection as
// written: includeif.gitdir:~/work/.path), its value, and Bare for a key
// with no "=" (a boolean true, which has no value).
type Entry struct {
	Name, Value string
	Bare        bool
}

// ErrBadLine is what git calls a file it refuses ("bad config line").
var ErrBadLine = errors.New("bad config line")

// Parse reads a git configuration file as git's git_parse_source does, up
// to its first bad line (then ErrBadLine, with the settings before it):
// sections [section], [section "subsection"] (\ escapes the next
// character) and the old [section.subsection]; a key alone or key =
// value, where outside double quotes # and ; begin a comment and a run of
// white space is kept (each character one space) but at the ends; \" \\
// \n \t \b escape; a backslash ending a line continues the value on the
// next. A UTF-8 BOM at the start is skipped, CR LF is LF; a NUL ends a
// name or a value, as in git, where they are C strings.
func Parse(data []byte) ([]Entry, error) {
	p := parser{data: data}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.i = 3
	}
	var out []Entry
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
				return out, ErrBadLine
			}
			section = s + "."
			continue
		}
		if !isAlpha(c) {
			return out, ErrBadLine
		}
		e, ok := p.setting(section, c)
		if !ok {
			return out, ErrBadLine
		}
		// git hands on C strings: a NUL (in a subsection or a value)
		// ends the name or the value.
		e.Name, _, _ = strings.Cut(e.Name, "\x00")
		e.Value, _, _ = strings.Cut(e.Value, "\x00")
		out = append(out, e)
	}
}

type parser struct {
	data []byte
	i    int
	eof  bool
}

// next is git's get_next_char: CR LF reads as LF, the end as LF (eof).
func (p *parser) next() byte {
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
func (p *parser) sectionName() (string, bool) {
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
func (p *parser) setting(section string, c byte) (Entry, bool) {
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
		return Entry{Name: name.String(), Bare: true}, true
	}
	if c != '=' {
		return Entry{}, false
	}
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return Entry{}, false
			}
			return Entry{Name: name.String(), Value: string(v)}, true
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
				return Entry{}, false
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
