package confine

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Go stamps a main package with its module's version, which it works out
// from git (go build, go list, go vet: -buildvcs=auto), and writes what it
// found into the module cache every time, as the stat of that commit
// (GOMODCACHE/cache/download/MODULE/@v/PSEUDO-VERSION.info, through a
// temporary file renamed over it): a hash is never found there again, so
// every such command writes it. The module cache is read-only to every
// capability (a module's extracted source is code the user's next build
// runs unverified), so a confined go printed "go: writing stat cache: ...
// permission denied" where it prints nothing unconfined.
//
// So a launch whose directory is in a Go module may write that one
// directory of the module cache, the project's own module's @v, with what
// go needs to write its stat (create, write, truncate and remove files;
// never a link, a directory or a rename from elsewhere), and only while it
// holds nothing but stats (.info files): a module whose source or go.mod
// is cached there (a dependency of another project) gets no rule. After
// the call the launcher removes every new entry that is not a regular
// .info file (sweepGoStat).

// maxGoMod bounds what the plan reads of a go.mod for its module line.
const maxGoMod = 64 << 10

// goStatDir is the module cache's @v directory of the module that holds
// cwd (its go.mod at cwd or above, no higher than project), created if
// missing, its entries, and the directories it created for it (the
// deepest last), which the sweep removes again while they hold nothing
// (sweepGoStat: the usability run after the thirty-first attack run found
// them left in the user's module cache by every launch in a Go module,
// where an unconfined command that writes no stat leaves none); "" when
// there is none or it holds more than stats.
func goStatDir(modCache, project, cwd string) (string, map[string]bool, []string) {
	if modCache == "" || project == "" || !isAncestorOrSelf(project, cwd) {
		return "", nil, nil
	}
	var mod string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		// Not waiting on a FIFO an earlier call left as go.mod: such a
		// go.mod names no module.
		if f, err := os.OpenFile(filepath.Join(d, "go.mod"), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				mod = moduleLine(io.LimitReader(f, maxGoMod))
			}
			f.Close()
			break
		}
		if d == project || d == filepath.Dir(d) {
			return "", nil, nil
		}
	}
	esc, ok := escapeModule(mod)
	if !ok {
		return "", nil, nil
	}
	dir := filepath.Join(modCache, "cache", "download", esc, "@v")
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !os.IsNotExist(err) || d == modCache || d == filepath.Dir(d) {
			break
		}
		made = append([]string{d}, made...)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", nil, made
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", nil, made
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, made
	}
	before := map[string]bool{}
	for _, ent := range ents {
		if !ent.Type().IsRegular() || !strings.HasSuffix(ent.Name(), ".info") {
			return "", nil, made
		}
		before[ent.Name()] = true
	}
	return dir, before, made
}

// moduleLine is the module path a go.mod declares ("" if none).
func moduleLine(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest, _, _ = strings.Cut(rest, "//")
		return strings.Trim(strings.TrimSpace(rest), `"`)
	}
	return ""
}

// escapeModule is Go's module cache spelling of a module path (each upper
// case letter as ! and its lower case), or false for anything that is not
// a plain module path (no element may be empty, . or .., nothing but
// letters, digits and -._~).
func escapeModule(mod string) (string, bool) {
	if mod == "" {
		return "", false
	}
	for _, el := range strings.Split(mod, "/") {
		if el == "" || el == "." || el == ".." {
			return "", false
		}
	}
	var b strings.Builder
	for _, c := range mod {
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte('!')
			b.WriteRune(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.ContainsRune("-._~/", c):
			b.WriteRune(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// removeMade removes the directories the plan made in the module cache
// (Plan.goStatMade), the deepest first, while each is empty: a stat go
// wrote keeps them, as an unconfined go's would.
func removeMade(made []string) {
	for _, d := range slices.Backward(made) {
		if syscall.Rmdir(d) != nil {
			return
		}
	}
}
