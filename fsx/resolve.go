// Package fsx holds loopguard's file-system primitives, one copy each:
// resolving a path the way the kernel will when a call writes through it.
// hooks (protected resources, rendering) and scope (file rules) both ask it,
// so what is judged protected and what a rule is matched against are the
// same path.
//
// The package is silent: it returns values and errors, never prints.
package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxLinks bounds the symbolic links followed in one resolution, as the
// kernel's ELOOP limit does.
const MaxLinks = 40

// ErrTooManyLinks is a resolution that followed more than MaxLinks links.
var ErrTooManyLinks = errors.New("too many levels of symbolic links")

// Resolution is where a path lands.
type Resolution struct {
	// Path is the absolute path with every symlink resolved, also through a
	// tail that does not exist yet.
	Path string
	// Links are the symlinks crossed, in order, each as "link -> target"
	// (target as stored in the link).
	Links []string
	// LinkPaths are the same links' own paths (their directories'
	// links resolved), in order.
	LinkPaths []string
	// Dangling is true when the last link crossed points to nothing yet:
	// writing through it creates its target.
	Dangling bool
}

// Crossed reports whether the path went through a symlink.
func (r Resolution) Crossed() bool { return len(r.Links) > 0 }

// Abs makes p absolute against cwd and expands a leading "~/" (or a lone
// "~") to home when home is set. It does not clean: ".." keeps the kernel's
// meaning until Resolve.
func Abs(cwd, home, p string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = cwd + string(filepath.Separator) + p
	}
	return p
}

// Resolve resolves every symlink in the absolute path p by the kernel's
// rules: ".." is the parent of the directory reached so far (after its
// links), not a lexical step. A tail that does not exist resolves through
// its deepest existing ancestor; a dangling symlink resolves to its target,
// because writing through it creates the target. Other errors (a loop, a
// file used as a directory, a permission error) fail.
func Resolve(p string) (Resolution, error) {
	if !filepath.IsAbs(p) {
		return Resolution{}, fmt.Errorf("path %q is not absolute", p)
	}
	return resolveFrom(string(filepath.Separator), Segments(p))
}

// ResolveIn is Resolve of dir/rel for a dir that is already resolved (a
// Resolution's Path): dir's own components are not looked at again. For
// many paths relative to one directory (a command's words) it saves the
// walk down to it each time.
func ResolveIn(dir, rel string) (Resolution, error) {
	if !filepath.IsAbs(dir) {
		return Resolution{}, fmt.Errorf("path %q is not absolute", dir)
	}
	if filepath.IsAbs(rel) {
		return Resolve(rel)
	}
	return resolveFrom(filepath.Clean(dir), Segments(rel))
}

func resolveFrom(cur string, rest []string) (Resolution, error) {
	var res Resolution
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if len(res.Links) > 0 && len(rest) == 0 {
				res.Dangling = true
			}
			// The rest does not exist either: ".." in it means what it
			// says lexically, as no link can intervene.
			res.Path = filepath.Join(append([]string{next}, rest...)...)
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if len(res.Links) >= MaxLinks {
				return res, ErrTooManyLinks
			}
			t, err := os.Readlink(next)
			if err != nil {
				return res, err
			}
			res.Links = append(res.Links, next+" -> "+t)
			res.LinkPaths = append(res.LinkPaths, next)
			if filepath.IsAbs(t) {
				cur = string(filepath.Separator)
			}
			rest = append(Segments(t), rest...)
			continue
		}
		if len(rest) > 0 && !fi.IsDir() {
			return res, fmt.Errorf("%q: not a directory", next)
		}
		cur = next
	}
	res.Path = cur
	return res, nil
}

// ResolvePath is Resolve's path alone.
func ResolvePath(p string) (string, error) {
	r, err := Resolve(p)
	return r.Path, err
}

// Segments is p's names in order: p split on the separator, with the
// empty names of a leading, trailing or doubled separator left out.
func Segments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, string(filepath.Separator)) {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Within reports whether the path p is dir or lies below it, both taken
// clean (the one containment predicate: "/" holds every absolute path, and
// /a/bc is not within /a/b). Both should be absolute; an empty one is
// within nothing.
func Within(p, dir string) bool {
	if p == "" || dir == "" {
		return false
	}
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	if p == dir || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
