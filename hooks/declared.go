package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The project's own declarations of local code outside it (relatedPlaces):
// the ninety-fourth attack run's Makefile did `include ../lib2/common.mk`,
// another session's jailed call in ../lib2 rewrote common.mk after the
// approval of `make all && git push`, and the retry ran it outside the
// jail; neither the command's words nor a link named ../lib2. Each build
// file at the project's top (and at the call's cwd) is read, its first
// maxDeclaredFile bytes, and the places it names, maxDeclared of them at
// most, are resolved from its directory. A prediction still: what a build
// file names through a variable, or a file it includes names, is not read.

const (
	maxDeclaredFile = 256 << 10
	maxDeclared     = 64
)

// declaredReaders: the build files read, by name (a pattern), and the
// reader of the places each names (paths as written: relative to the
// file's directory, or absolute; a pattern where the tool expands one).
var declaredReaders = []struct {
	name string
	read func([]byte) []string
}{
	{"Makefile", makePaths}, {"makefile", makePaths}, {"GNUmakefile", makePaths},
	{"go.mod", goModPaths}, {"go.work", goModPaths},
	{"package.json", packageJSONPaths},
	{"Cargo.toml", cargoPaths}, {"pyproject.toml", tomlPaths},
	{"pnpm-workspace.yaml", pnpmPaths},
	{"requirements*.txt", requirementsPaths},
	{"CMakeLists.txt", cmakePaths},
	{"tsconfig*.json", tsconfigPaths},
	{"MODULE.bazel", bazelPaths}, {"WORKSPACE", bazelPaths}, {"WORKSPACE.bazel", bazelPaths}, {"WORKSPACE.bzlmod", bazelPaths},
}

// declaredPlaces calls add with each place outside project that the build
// files among ents (the entries of dir) name, absolute: where one does not
// exist yet (a `-include` of a file not made), the directory it would be
// in. A pattern is expanded only where it leaves the project.
func declaredPlaces(dir, project string, ents []os.DirEntry, add func(string)) {
	for _, ent := range ents {
		if ent.IsDir() {
			continue
		}
		for _, r := range declaredReaders {
			if ok, _ := filepath.Match(r.name, ent.Name()); !ok {
				continue
			}
			src := readBounded(filepath.Join(dir, ent.Name()))
			for i, p := range r.read(src) {
				if i >= maxDeclared {
					break
				}
				declaredPlace(dir, project, p, add)
			}
		}
	}
}

// declaredPlace adds p, named by a build file in dir.
func declaredPlace(dir, project, p string, add func(string)) {
	if p == "" || strings.Contains(p, "$") {
		return
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if strings.ContainsAny(p, "*?[") {
		if under(p, project) {
			return
		}
		ms, _ := filepath.Glob(p)
		for i, m := range ms {
			if i >= maxDeclared {
				break
			}
			add(m)
		}
		return
	}
	if _, err := os.Lstat(p); err != nil {
		p = filepath.Dir(p)
	}
	add(p)
}

// readBounded is the first maxDeclaredFile bytes of file, nil when it
// cannot be read.
func readBounded(file string) []byte {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxDeclaredFile))
	return b
}

// lines calls f with each line of src, its comment (from a word that
// starts with comment, "" for none) cut and its words split.
func lines(src []byte, comment string, f func(words []string)) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, maxDeclaredFile)
	for sc.Scan() {
		line := sc.Text()
		if comment != "" {
			if i := strings.Index(line, comment); i >= 0 {
				line = line[:i]
			}
		}
		if ws := strings.Fields(line); len(ws) > 0 {
			f(ws)
		}
	}
}

// makePaths: a Makefile's includes (makeIncludes) and the directories
// its recipes enter (makeRecipes).
func makePaths(src []byte) []string { return append(makeIncludes(src), makeRecipes(src)...) }

// makeIncludes: make's include, -include and sinclude lines' words (a
// word with a variable is skipped where it is added: declaredPlace).
func makeIncludes(src []byte) []string {
	var out []string
	lines(src, "#", func(ws []string) {
		switch ws[0] {
		case "include", "-include", "sinclude":
			out = append(out, ws[1:]...)
		}
	})
	return out
}

// goModPaths: go.mod's and go.work's replace directives whose target is
// a directory (./, ../ or absolute, as go decides), and go.work's use
// directives; one line each, or in a ( ) block.
func goModPaths(src []byte) []string {
	var out []string
	block := ""
	lines(src, "//", func(ws []string) {
		verb := block
		switch {
		case ws[0] == ")":
			block = ""
			return
		case len(ws) == 2 && ws[1] == "(":
			block = ws[0]
			return
		case block == "":
			verb, ws = ws[0], ws[1:]
		}
		switch verb {
		case "use":
			out = append(out, unquoteGo(ws[0]))
		case "replace":
			for i, w := range ws {
				if w == "=>" && i+1 < len(ws) {
					if t := unquoteGo(ws[i+1]); localGoPath(t) {
						out = append(out, t)
					}
				}
			}
		}
	})
	return out
}

func unquoteGo(w string) string { return strings.Trim(w, "\"`") }

func localGoPath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)
}

// packageJSONPaths: dependencies, devDependencies and optionalDependencies
// given as file:, link: or portal: paths, and the workspaces' patterns
// (a list, or yarn's {"packages": [...]}).
func packageJSONPaths(src []byte) []string {
	var pj struct {
		Dependencies         map[string]string `json:"dependencies"`
		DevDependencies      map[string]string `json:"devDependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
		Workspaces           json.RawMessage   `json:"workspaces"`
	}
	if json.Unmarshal(src, &pj) != nil {
		return nil
	}
	var out []string
	for _, deps := range []map[string]string{pj.Dependencies, pj.DevDependencies, pj.OptionalDependencies} {
		for _, v := range deps {
			for _, pre := range []string{"file:", "link:", "portal:"} {
				if p, ok := strings.CutPrefix(v, pre); ok {
					out = append(out, p)
				}
			}
		}
	}
	var ws []string
	if json.Unmarshal(pj.Workspaces, &ws) != nil {
		var y struct {
			Packages []string `json:"packages"`
		}
		_ = json.Unmarshal(pj.Workspaces, &y)
		ws = y.Packages
	}
	return append(out, ws...)
}

// tomlPath is a TOML key path = "x" or 'x' (Cargo's path dependencies and
// [patch] entries, uv's and poetry's path sources; a [lib] or [[bin]]
// path outside the project is compiled too), and a PEP 508 url
// "name @ file:x".
var (
	tomlPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s{,])path\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	})
	fileURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@\s*file:(?://)?([^\s"',;\]]+)`) })
)

// tomlPaths: Cargo.toml's and pyproject.toml's local paths (tomlPath).
func tomlPaths(src []byte) []string {
	var out []string
	lines(src, "", func(ws []string) {
		line := strings.Join(ws, " ")
		if strings.HasPrefix(line, "#") {
			return
		}
		for _, m := range tomlPath().FindAllStringSubmatch(line, -1) {
			out = append(out, m[1]+m[2])
		}
		for _, m := range fileURL().FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	})
	return out
}

// requirementsPaths: pip's -e/--editable, -r/--requirement and
// -c/--constraint arguments, file: urls, and requirements that are paths
// (./, ../ or absolute).
func requirementsPaths(src []byte) []string {
	var out []string
	lines(src, "", func(ws []string) {
		for i := 0; i < len(ws); i++ {
			w := ws[i]
			switch {
			case strings.HasPrefix(w, "#"): // a comment, to the line's end
				return
			case w == "-e" || w == "--editable" || w == "-r" || w == "--requirement" || w == "-c" || w == "--constraint":
				if i+1 < len(ws) {
					i++
					out = append(out, strings.TrimPrefix(strings.TrimPrefix(ws[i], "file://"), "file:"))
				}
			case strings.HasPrefix(w, "--editable=") || strings.HasPrefix(w, "--requirement=") || strings.HasPrefix(w, "--constraint="):
				_, v, _ := strings.Cut(w, "=")
				out = append(out, strings.TrimPrefix(strings.TrimPrefix(v, "file://"), "file:"))
			case strings.HasPrefix(w, "file:"):
				out = append(out, strings.TrimPrefix(strings.TrimPrefix(w, "file://"), "file:"))
			case localGoPath(w):
				out = append(out, w)
			}
		}
	})
	return out
}

// cmakeCall is CMake's add_subdirectory(x ...) and include(x ...), any
// case, x quoted or not.
var cmakeCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:add_subdirectory|include)\s*\(\s*"?([^\s)"]+)`)
})

// cmakePaths: CMakeLists.txt's add_subdirectory and include arguments (a
// module's name, CTest, names no file and is dropped where it is added).
func cmakePaths(src []byte) []string {
	var out []string
	lines(src, "#", func(ws []string) {
		for _, m := range cmakeCall().FindAllStringSubmatch(strings.Join(ws, " "), -1) {
			out = append(out, m[1])
		}
	})
	return out
}

// rawLines calls f with each line of src as it is (its indentation kept).
func rawLines(src []byte, f func(line string)) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, maxDeclaredFile)
	for sc.Scan() {
		f(sc.Text())
	}
}

// makeRecipes: the directories a Makefile's recipe lines (a tab first)
// enter: make's -C DIR, -CDIR, --directory=DIR and --directory DIR after
// make, gmake, $(MAKE) or ${MAKE}, and cd DIR at the start of a command
// (after &&, ||, ;, | or &, or an opening parenthesis); the ninety-sixth
// attack run's `$(MAKE) -C ../mlib` ran a Makefile in a sibling project.
func makeRecipes(src []byte) []string {
	var out []string
	rawLines(src, func(line string) {
		cmds, ok := strings.CutPrefix(line, "\t")
		if !ok {
			return
		}
		if i := strings.Index(cmds, "#"); i >= 0 {
			cmds = cmds[:i]
		}
		for _, cmd := range strings.FieldsFunc(cmds, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
			out = append(out, recipeDirs(strings.Fields(cmd))...)
		}
	})
	return out
}

// recipeDirs: the directory one recipe command (its words) enters.
func recipeDirs(ws []string) []string {
	for len(ws) > 0 {
		ws[0] = strings.TrimLeft(ws[0], "@-+(")
		if ws[0] != "" && !strings.Contains(ws[0], "=") {
			break
		}
		ws = ws[1:] // an assignment before the command, or a bare @, - or +
	}
	if len(ws) < 2 {
		return nil
	}
	unq := func(w string) string { return strings.Trim(w, `"')`) }
	if ws[0] == "cd" {
		for _, w := range ws[1:] {
			if !strings.HasPrefix(w, "-") {
				return []string{unq(w)}
			}
		}
		return nil
	}
	switch filepath.Base(ws[0]) {
	case "make", "gmake", "$(MAKE)", "${MAKE}":
	default:
		return nil
	}
	var out []string
	for i := 1; i < len(ws); i++ {
		switch w := ws[i]; {
		case (w == "-C" || w == "--directory") && i+1 < len(ws):
			i++
			out = append(out, unq(ws[i]))
		case strings.HasPrefix(w, "--directory="):
			out = append(out, unq(w[len("--directory="):]))
		case strings.HasPrefix(w, "-C") && len(w) > 2:
			out = append(out, unq(w[2:]))
		}
	}
	return out
}

// jsonc is src, a JSON with comments (tsconfig.json's JSONC: // and /* */
// comments, trailing commas), as JSON.
func jsonc(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inStr := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inStr:
			if c == '\\' && i+1 < len(src) {
				out = append(out, c)
				i++
				c = src[i]
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			c = '\n'
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
			c = ' '
		case c == '}' || c == ']':
			// a trailing comma before it is dropped
			if t := bytes.TrimRight(out, " \t\r\n"); len(t) > 0 && t[len(t)-1] == ',' {
				out = append(t[:len(t)-1], out[len(t):]...)
			}
		}
		out = append(out, c)
	}
	return out
}

// tsconfigPaths: tsconfig.json's references' paths and an extends (a
// string or, since TypeScript 5.0, a list) that is a path (./, ../ or
// absolute; one without .json has it added, as tsc does): not a package's
// name. The ninety-sixth attack run's references [{"path": "../shared"}]
// built a sibling project's sources.
func tsconfigPaths(src []byte) []string {
	var tc struct {
		Extends    json.RawMessage `json:"extends"`
		References []struct {
			Path string `json:"path"`
		} `json:"references"`
	}
	if json.Unmarshal(jsonc(src), &tc) != nil {
		return nil
	}
	var out []string
	for _, r := range tc.References {
		out = append(out, r.Path)
	}
	var ext []string
	if json.Unmarshal(tc.Extends, &ext) != nil {
		var one string
		_ = json.Unmarshal(tc.Extends, &one)
		ext = []string{one}
	}
	for _, e := range ext {
		if localGoPath(e) {
			if !strings.HasSuffix(e, ".json") {
				e += ".json"
			}
			out = append(out, e)
		}
	}
	return out
}

// bazelCall is a Starlark call of Bazel's local_path_override (MODULE.bazel),
// local_repository or new_local_repository (WORKSPACE), its arguments up to
// the first ")"; bazelPath a path = "x" among them. Built on first use (the
// hook's start-up allocations are bounded: TestLoopguardInitIsSmall).
var (
	bazelOnce             sync.Once
	bazelCall, bazelPathA *regexp.Regexp
)

// bazelPaths: MODULE.bazel's local_path_override(path = ...) and
// WORKSPACE's local_repository(path = ...) and new_local_repository(path
// = ...), over lines, with # comments cut.
func bazelPaths(src []byte) []string {
	bazelOnce.Do(func() {
		bazelCall = regexp.MustCompile(`\b(?:local_path_override|local_repository|new_local_repository)\s*\(([^)]*)\)`)
		bazelPathA = regexp.MustCompile(`\bpath\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	})
	var b strings.Builder
	rawLines(src, func(line string) {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line)
		b.WriteByte('\n')
	})
	var out []string
	for _, call := range bazelCall.FindAllStringSubmatch(b.String(), -1) {
		if m := bazelPathA.FindStringSubmatch(call[1]); m != nil {
			out = append(out, m[1]+m[2])
		}
	}
	return out
}
