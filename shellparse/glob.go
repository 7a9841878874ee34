package shellparse

import (
	"errors"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/loopguard/loopguard/fsx"
)

// Filename expansion is done here, against the file system, when the
// command is analysed: a glob word becomes the files it matches, each of
// them judged like any other word (the protected set, the project bound,
// symlinks resolved), and the canonical command passes exactly those names,
// single-quoted, so bash expands nothing at run time. What is matched is
// what bash matches with its default options (bash 5.2: no dotglob,
// nullglob, failglob, globstar, extglob or nocaseglob; globskipdots and
// globasciiranges on): a name starting with a dot only by a pattern that
// starts with a literal dot, never . or ..; ** is *; a pattern that matches
// nothing stays as written. Matches are sorted bytewise (bash sorts by the
// locale's collation: the order may differ outside the C locale, the names
// do not). Bracket expressions with character classes ([[:alpha:]]),
// equivalence classes or collating symbols are refused, not guessed.

const (
	// maxGlobDirs bounds the directories one command's globs may read.
	maxGlobDirs = 1024
	// maxGlobEntries bounds the directory entries they may read.
	maxGlobEntries = 200_000
)

// errGlobSyntax is a pattern the matcher does not reproduce.
var errGlobSyntax = errors.New("unsupported bracket expression")

// expandGlob returns the names pattern matches, relative to the cwd when
// pattern is relative, sorted; nil when it matches nothing.
func (a *analyzer) expandGlob(pattern string, pos syntax.Pos) ([]string, error) {
	comps := strings.Split(pattern, "/")
	prefixes := []string{""}
	matched := false
	for i, comp := range comps {
		last := i == len(comps)-1
		var next []string
		switch {
		case comp == "" && last && i > 0:
			// A trailing slash: directories only, the slash kept.
			for _, p := range prefixes {
				if a.isDir(p) {
					next = append(next, p)
				}
			}
		case !hasGlob(comp) || comp == "[":
			lit := unescapeGlob(comp)
			for _, p := range prefixes {
				next = append(next, p+lit)
			}
		default:
			m, err := compilePattern(comp)
			if err != nil {
				return nil, deny(Unparseable, pos, "the glob %q uses a bracket expression loopguard does not expand ([[:class:]], [=c=] or [.c.]); spell the names out", pattern)
			}
			matched = true
			for _, p := range prefixes {
				names, err := a.readDir(p)
				if err != nil {
					return nil, deny(Unparseable, pos, "the glob %q: %v; spell the names out", pattern, err)
				}
				for _, n := range names {
					if m.match(n) {
						next = append(next, p+n)
					}
				}
			}
		}
		if !last {
			for j := range next {
				next[j] += "/"
			}
		}
		prefixes = next
		if len(prefixes) == 0 {
			return nil, nil
		}
		if len(prefixes) > maxWords {
			return nil, deny(Unparseable, pos, "the glob %q matches more than %d files; spell the names out", pattern, maxWords)
		}
	}
	if !matched {
		return nil, nil
	}
	out := prefixes[:0]
	for _, p := range prefixes {
		// The literal components after a pattern must exist, as bash
		// checks (a dangling symlink exists).
		if _, err := os.Lstat(a.fsPath(p)); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	sort.Strings(out)
	return out, nil
}

// fsPath is the file system path of a name relative to the cwd.
func (a *analyzer) fsPath(p string) string {
	if p == "" {
		p = "."
	}
	if isAbs(p) || a.env.Cwd == "" {
		return p
	}
	return joinPath(a.env.Cwd, p)
}

func (a *analyzer) isDir(p string) bool {
	fi, err := os.Stat(a.fsPath(p))
	return err == nil && fi.IsDir()
}

// readDir lists the names in directory p (following a symlink to it), within
// the command's budget; a directory that cannot be read lists nothing, as
// for bash.
func (a *analyzer) readDir(p string) ([]string, error) {
	a.globDirs++
	if a.globDirs > maxGlobDirs {
		return nil, errors.New("more than 1024 directories to read")
	}
	dir := a.fsPath(p)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	f, err := fsx.OpenDir(dir)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxGlobEntries - a.globEntries + 1)
	a.globEntries += len(names)
	if a.globEntries > maxGlobEntries {
		return nil, errors.New("more than 200000 directory entries to read")
	}
	return names, nil
}

// unescapeGlob removes the backslashes that quote a pattern's characters.
func unescapeGlob(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// globItem is one element of a compiled pattern component.
type globItem struct {
	kind   byte // 'l' literal rune, '?' any rune, '*' any run, '[' bracket
	r      rune
	negate bool
	ranges []runeRange
}

type runeRange struct{ lo, hi rune }

// globPattern is one compiled path component.
type globPattern struct {
	items []globItem
	// dot: the component starts with a literal dot, so it may match a
	// name starting with one.
	dot bool
}

// maxBracketScan bounds the characters one pattern's brackets read.
const maxBracketScan = 1 << 18

func compilePattern(s string) (globPattern, error) { return compileWithin(s, maxBracketScan) }

// compileWithin is compilePattern with its brackets reading at most
// maxScan characters.
func compileWithin(s string, maxScan int) (globPattern, error) {
	var p globPattern
	// scanned bounds what the brackets read: each [ without a ] reads to
	// the end of the pattern, and "[a" repeated 16,000 times took 3.5 s
	// of a hook call (the seventy-fifth attack run). Past the bound the
	// pattern is one this reader does not take (a question).
	scanned := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '*':
			if n := len(p.items); n == 0 || p.items[n-1].kind != '*' {
				p.items = append(p.items, globItem{kind: '*'})
			}
			i++
		case '?':
			p.items = append(p.items, globItem{kind: '?'})
			i++
		case '[':
			if scanned += len(s) - i; scanned > maxScan {
				return p, errGlobSyntax
			}
			it, n, err := compileBracket(s[i:])
			if err != nil {
				return p, err
			}
			if n == 0 { // no closing ]: a literal [
				p.items = append(p.items, globItem{kind: 'l', r: '['})
				i++
				continue
			}
			p.items = append(p.items, it)
			i += n
		case '\\':
			if i+1 < len(s) {
				i++
			}
			fallthrough
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			p.items = append(p.items, globItem{kind: 'l', r: r})
			i += size
		}
	}
	p.dot = len(p.items) > 0 && p.items[0].kind == 'l' && p.items[0].r == '.'
	return p, nil
}

// compileBracket compiles the bracket expression at the start of s and
// returns its length, 0 when it has no closing bracket.
func compileBracket(s string) (globItem, int, error) {
	it := globItem{kind: '['}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		it.negate = true
		i++
	}
	first := true
	for i < len(s) {
		if s[i] == ']' && !first {
			return it, i + 1, nil
		}
		if s[i] == '[' && i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '=' || s[i+1] == '.') {
			return it, 0, errGlobSyntax
		}
		first = false
		lo, n := bracketRune(s[i:])
		if n == 0 {
			return it, 0, nil
		}
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			var m int
			hi, m = bracketRune(s[i+1:])
			if m == 0 {
				return it, 0, nil
			}
			i += 1 + m
		}
		it.ranges = append(it.ranges, runeRange{lo, hi})
	}
	return it, 0, nil
}

// bracketRune reads one character of a bracket expression, a backslash
// quoting the next.
func bracketRune(s string) (rune, int) {
	if s == "" {
		return 0, 0
	}
	if s[0] == '\\' && len(s) > 1 {
		r, size := utf8.DecodeRuneInString(s[1:])
		return r, 1 + size
	}
	r, size := utf8.DecodeRuneInString(s)
	return r, size
}

func (it globItem) matches(r rune) bool {
	switch it.kind {
	case 'l':
		return it.r == r
	case '?':
		return true
	case '[':
		in := false
		for _, rg := range it.ranges {
			if rg.lo <= r && r <= rg.hi {
				in = true
				break
			}
		}
		return in != it.negate
	}
	return false
}

// match reports whether name matches the component, with bash's rules for
// file names: . and .. never, a leading dot only explicitly.
func (p globPattern) match(name string) bool {
	if name == "." || name == ".." || strings.HasPrefix(name, ".") && !p.dot {
		return false
	}
	rs := []rune(name)
	// The classic iterative match with one backtrack point per star.
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(rs) {
		switch {
		case pi < len(p.items) && p.items[pi].kind == '*':
			star, mark = pi, ni
			pi++
		case pi < len(p.items) && p.items[pi].matches(rs[ni]):
			pi++
			ni++
		case star >= 0:
			pi, mark = star+1, mark+1
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p.items) && p.items[pi].kind == '*' {
		pi++
	}
	return pi == len(p.items)
}
