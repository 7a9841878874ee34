package gitconfig

import (
	"path/filepath"
	"strings"
)

// MaxIncludeDepth is git's MAX_INCLUDE_DEPTH: git dies at a file included
// deeper; Chain does not read it.
const MaxIncludeDepth = 10

// MaxFiles bounds the files one Chain reads.
const MaxFiles = 64

// MaxFileSize bounds the bytes read of one configuration file.
const MaxFileSize = 1 << 20

// Chain follows git's configuration from the files it starts at (Read),
// as git 2.39's config.c does: each file's settings in order and, at each
// include.path and includeIf.<condition>.path (whatever the condition: a
// file git might not read is read too), the file it names, there and
// whole, before the next setting: ~ and ~/ are Home, a relative path is
// relative to the including file's name (not to where its links lead), to
// MaxIncludeDepth, at most MaxFiles files. A file with a bad line is read
// up to it (git dies there). The zero value of T is a file's state when
// nothing says otherwise.
type Chain[T any] struct {
	// Home is the home ~ names; "" expands no ~.
	Home string
	// Open is asked for each file the chain reaches, by its absolute,
	// cleaned name, with the state of the file that includes it (a
	// starting file: Read's). It returns the file's bytes (nil: nothing
	// to read) and its own state; ok false skips the file and what it
	// would include. An opened file counts towards MaxFiles.
	Open func(p string, from T) (data []byte, st T, ok bool)
	// Setting, when set, is each setting that is not a followed include
	// (a bare include.path is one), in git's order, with its file's state.
	Setting func(e Entry, st T)

	files int
}

// Read follows the starting file p (an absolute name; anything else is
// skipped) with state st.
func (c *Chain[T]) Read(p string, st T) { c.read(p, 0, st) }

func (c *Chain[T]) read(p string, depth int, from T) {
	if !filepath.IsAbs(p) || depth > MaxIncludeDepth || c.files >= MaxFiles {
		return
	}
	p = filepath.Clean(p)
	data, st, ok := c.Open(p, from)
	if !ok {
		return
	}
	c.files++
	entries, _ := Parse(data) // git stops at a bad line too (and dies)
	for _, e := range entries {
		if !e.Bare && IsInclude(e.Name) {
			inc := Expand(e.Value, c.Home)
			if inc == "" {
				continue
			}
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(p), inc)
			}
			c.read(inc, depth+1, st)
			continue
		}
		if c.Setting != nil {
			c.Setting(e, st)
		}
	}
}

// IsInclude reports whether the setting name (as Entry spells it) names a
// file to include: include.path, or includeIf.<condition>.path with any
// condition.
func IsInclude(name string) bool {
	if name == "include.path" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "includeif.")
	return ok && strings.HasSuffix(rest, ".path") && len(rest) > len(".path")
}

// Expand is git's interpolate_path: ~ and ~/ are home; ~user/ and
// %(prefix)/ are not followed, "" (another user's home, git's own
// prefix: not this home's), nor is ~ when home is ""; anything else is
// as written (relative stays relative).
func Expand(s, home string) string {
	switch {
	case strings.HasPrefix(s, "%(prefix)/"):
		return ""
	case s == "~" || strings.HasPrefix(s, "~/"):
		if home == "" {
			return ""
		}
		return home + s[1:]
	case strings.HasPrefix(s, "~"):
		return ""
	}
	return s
}
