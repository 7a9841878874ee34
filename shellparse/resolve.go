package shellparse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopguard/loopguard/fsx"
	"mvdan.cc/sh/v3/syntax"
)

// resolution is where bash would find a command name in PATH.
type resolution struct {
	entry    string // the PATH entry as written
	dir      string // the entry made absolute against the cwd
	found    string // dir/name; "" if not found
	resolved string // found with symlinks resolved
	// unknown is set when an entry before any hit could not be resolved
	// (~user, or ~ without Env.Home): bash might find the name there.
	unknown bool
	// relative is set when the entry names a directory relative to the cwd.
	relative bool
}

func isAbs(p string) bool          { return filepath.IsAbs(p) }
func cleanPath(p string) string    { return filepath.Clean(p) }
func joinPath(a, b string) string  { return filepath.Join(a, b) }
func evalSymlinks(p string) string { r, _ := filepath.EvalSymlinks(p); return r }

// realDir is d with symlinks resolved, or d cleaned if that fails.
func realDir(d string) string {
	if r, err := filepath.EvalSymlinks(d); err == nil {
		return r
	}
	return filepath.Clean(d)
}

func isExecutableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// within reports whether p is dir or inside it (both absolute).
func within(p, dir string) bool { return fsx.Within(p, dir) }

// lookPath finds name in PATH as bash does: the first entry holding an
// executable regular file; an empty entry means the cwd.
func (a *analyzer) lookPath(name string) resolution {
	if r, ok := a.resolved[name]; ok {
		return r
	}
	var r resolution
	for _, entry := range filepath.SplitList(a.env.Path) {
		dir := entry
		if dir == "" {
			dir = "."
		}
		if strings.HasPrefix(dir, "~") {
			// bash tilde-expands a PATH element that starts with ~.
			user, rest, _ := strings.Cut(dir[1:], "/")
			if user != "" || a.env.Home == "" || !isAbs(a.env.Home) {
				r = resolution{entry: entry, unknown: true}
				break
			}
			dir = joinPath(a.env.Home, rest)
		}
		relative := !isAbs(dir)
		if relative {
			if a.env.Cwd == "" {
				r = resolution{entry: entry, unknown: true}
				break
			}
			dir = joinPath(a.env.Cwd, dir)
		}
		cand := joinPath(dir, name)
		if isExecutableFile(cand) {
			r = resolution{entry: entry, dir: dir, found: cand, resolved: evalSymlinks(cand), relative: relative}
			break
		}
	}
	a.resolved[name] = r
	return r
}

func (a *analyzer) isTrusted(dir string) bool {
	dir = filepath.Clean(dir)
	rd := realDir(dir)
	for _, t := range a.trusted {
		if dir == t || rd == realDir(t) {
			return true
		}
	}
	return false
}

// insideWork reports whether p lies in the project or the cwd, naming which.
func (a *analyzer) insideWork(p string) (string, bool) {
	rp := realDir(p)
	for _, w := range []struct{ name, dir string }{{"the project", a.env.ProjectDir}, {"the cwd", a.env.Cwd}} {
		if w.dir == "" || !isAbs(w.dir) {
			continue
		}
		if within(p, w.dir) || within(rp, realDir(w.dir)) {
			return w.name, true
		}
	}
	return "", false
}

// shadows names the executable of the same base name in a trusted
// directory, for messages.
func (a *analyzer) shadows(name string) string {
	base := filepath.Base(name)
	for _, t := range a.trusted {
		if c := joinPath(t, base); isExecutableFile(c) {
			return "; it shadows " + c
		}
	}
	return ""
}

// resolveCommand checks where bash finds argv[0]: it returns the resolved
// executable, or builtin, or a PathShadowed verdict.
func (a *analyzer) resolveCommand(name string, pos syntax.Pos) (string, bool, error) {
	if name == "" {
		return "", false, deny(PathShadowed, pos, "empty command name")
	}
	if !strings.Contains(name, "/") {
		if bashBuiltins[name] {
			return "", true, nil
		}
		r := a.lookPath(name)
		switch {
		case r.unknown:
			return "", false, deny(PathShadowed, pos, "the PATH entry %q cannot be resolved, and bash may find %s there", r.entry, name)
		case r.found == "":
			return "", false, deny(PathShadowed, pos, "%s is not found in PATH%s", name, a.shadows(name))
		case r.relative:
			return "", false, deny(PathShadowed, pos, "%s is found as %s through the relative PATH entry %q%s", name, r.found, r.entry, a.shadows(name))
		}
		if where, ok := a.insideWork(r.dir); ok {
			return "", false, deny(PathShadowed, pos, "%s is found as %s, inside %s%s", name, r.found, where, a.shadows(name))
		}
		if !a.isTrusted(r.dir) {
			return "", false, deny(PathShadowed, pos, "%s is found as %s, in %s, which is not a trusted directory%s", name, r.found, r.dir, a.shadows(name))
		}
		if r.resolved == "" {
			return "", false, deny(PathShadowed, pos, "%s: cannot resolve the symlinks of %s", name, r.found)
		}
		if where, ok := a.insideWork(r.resolved); ok {
			return "", false, deny(PathShadowed, pos, "%s is a symlink to %s, inside %s%s", r.found, r.resolved, where, a.shadows(name))
		}
		return r.resolved, false, nil
	}
	if !isAbs(name) {
		return "", false, deny(PathShadowed, pos, "%s is a relative path, not a command in a trusted directory%s", name, a.shadows(name))
	}
	if cleanPath(name) != name {
		return "", false, deny(PathShadowed, pos, "%s is not a clean absolute path%s", name, a.shadows(name))
	}
	dir := filepath.Dir(name)
	if where, ok := a.insideWork(dir); ok {
		return "", false, deny(PathShadowed, pos, "%s is inside %s%s", name, where, a.shadows(name))
	}
	if !a.isTrusted(dir) {
		return "", false, deny(PathShadowed, pos, "%s is not in a trusted directory%s", name, a.shadows(name))
	}
	if !isExecutableFile(name) {
		return "", false, deny(PathShadowed, pos, "%s is not an executable file", name)
	}
	resolved := evalSymlinks(name)
	if resolved == "" {
		return "", false, deny(PathShadowed, pos, "cannot resolve the symlinks of %s", name)
	}
	if where, ok := a.insideWork(resolved); ok {
		return "", false, deny(PathShadowed, pos, "%s is a symlink to %s, inside %s%s", name, resolved, where, a.shadows(name))
	}
	return resolved, false, nil
}

// Shadow is where a host finds a program by name on PATH, when the rule
// that judges a command name in a call (resolveCommand) refuses it.
type Shadow struct {
	Reason string // why it would be PathShadowed
	Entry  string // the PATH entry it is found through, as written
	Found  string // the file found there ("" when the entry cannot be resolved)
	// Resolved is Found with symlinks resolved ("" when they cannot be).
	Resolved string
	// Untrusted is set when the only objection is that Found lies in a
	// directory that is not trusted: an absolute entry outside the project
	// and the cwd.
	Untrusted bool
}

// Shadowed judges the program a host finds by name on env.Path as the
// name of a command in a call is judged: nil when name resolves into a
// trusted directory, or is found nowhere on PATH (the host then looks
// elsewhere, or gives up). For a host that looks a program up on its own
// PATH to run a call with (Codex's shell, which the model names: which zsh).
func Shadowed(name string, env Env) *Shadow {
	if name == "" || strings.Contains(name, "/") {
		return nil
	}
	a := newAnalyzer(env)
	r := a.lookPath(name)
	if !r.unknown && r.found == "" {
		return nil
	}
	_, _, err := a.resolveCommand(name, syntax.Pos{})
	if err == nil {
		return nil
	}
	s := &Shadow{Reason: err.Error(), Entry: r.entry, Found: r.found, Resolved: r.resolved}
	var ve *verdictError
	if errors.As(err, &ve) {
		s.Reason = ve.reason
	}
	if !r.unknown && !r.relative && !a.isTrusted(r.dir) {
		_, in := a.insideWork(r.dir)
		s.Untrusted = !in
	}
	return s
}
