package policy

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/loopguard/loopguard/fsx"
)

// A project's executable configuration is protected by its name; what it
// names as the program to run was not. The forty-fifth attack run's
// project-write call rewrote .yarn/releases/yarn-4.5.0.cjs, which the
// project's .yarnrc.yml names as yarnPath, and the user's next `yarn`
// (any yarn command, --version included) ran it. An MCP server's script
// (.mcp.json: node ./tools/mcp.js), a Claude Code hook's
// ("$CLAUDE_PROJECT_DIR"/scripts/check.sh), a pre-commit or lefthook
// hook's entry are the same: each runs, unconfined, when the agent
// starts, on every tool call, on the user's next commit.

// jsonPrograms are the project's JSON configuration files whose command
// values run (relative to the project's top): every "command" (with its
// sibling "args") and every value of commandKeys, at any depth of the
// document.
var jsonPrograms = []string{
	".mcp.json", ".claude/settings.json", ".claude/settings.local.json",
	".cursor/mcp.json", ".vscode/mcp.json", ".vscode/tasks.json", ".gemini/settings.json",
	".devcontainer/devcontainer.json", ".devcontainer.json",
	".kiro/settings/mcp.json", ".roo/mcp.json", ".amazonq/mcp.json", ".crush.json", "crush.json",
}

// commandKeys are keys whose value is a command (a string, or an array
// of a program and its arguments): Claude Code's helpers, a dev
// container's lifecycle commands.
var commandKeys = map[string]bool{
	"command": true, "apiKeyHelper": true, "awsAuthRefresh": true, "awsCredentialExport": true, "otelHeadersHelper": true,
	"initializeCommand": true, "onCreateCommand": true, "updateContentCommand": true, "postCreateCommand": true,
	"postStartCommand": true, "postAttachCommand": true,
}

// yamlPrograms are the project's YAML configuration files, each with the
// keys whose values run: Yarn's yarnPath and plugins' path (the
// JavaScript file run as yarn, the plugins it loads), pre-commit's entry
// (a local hook's command), lefthook's run.
var yamlPrograms = map[string][]string{
	".yarnrc.yml":             {"yarnPath", "path"},
	".pre-commit-config.yaml": {"entry"},
	".pre-commit-config.yml":  {"entry"},
	"lefthook.yml":            {"run"}, ".lefthook.yml": {"run"}, "lefthook.yaml": {"run"}, ".lefthook.yaml": {"run"},
	"lefthook-local.yml": {"run"}, ".lefthook-local.yml": {"run"}, "lefthook-local.yaml": {"run"}, ".lefthook-local.yaml": {"run"},
}

// ConfigPrograms are the files of project that its executable
// configuration at the top names as programs to run (jsonPrograms,
// yamlPrograms, Yarn 1's yarn-path in .yarnrc), as commandPaths reads
// each command: the script and its directory, what it sources. Absolute,
// cleaned, each once, below project only. A file that cannot be read or
// parsed names nothing; it never panics.
func ConfigPrograms(project string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	r := newProgramReader(project, 128<<10)
	configPrograms(r, project, maxTopNames)
	return r.paths.out
}

// configPrograms reads into r the commands of project's executable
// configuration at its top (ConfigPrograms), found by one listing of the
// top where it has at most maxNames names, else each file looked for.
func configPrograms(r *programReader, project string, maxNames int) {
	add := func(cmds []string) {
		for _, c := range cmds {
			if len(r.read) < maxCommands || r.read[c] {
				r.command(c) // to maxCommands (a list of 170,000 "- a/b" read each: 900 ms)
			}
		}
	}
	// One listing of the top, where most of these files are not (a stat
	// a file made ProjectLoads 94 µs slower than the imports and the
	// .envrc alone; with the listing, 58 µs, a top of 32 names with a
	// .claude/settings.json to parse). A top of more than maxTopNames is
	// not listed whole (200,000 names took 422 ms a call): each file is
	// looked for instead.
	top := map[string]bool{}
	if f, err := fsx.OpenDir(project); err != nil {
		top = nil // unlisted: read each
	} else if fi, err := f.Stat(); maxNames < maxTopNames && (err != nil || fi.Size() > maxAncestorDirSize) {
		f.Close()
		top = nil // too large to list for a few names
	} else {
		names, err := f.Readdirnames(maxNames + 1)
		f.Close()
		if err != nil && len(names) == 0 || len(names) > maxNames {
			top = nil
		}
		for _, n := range names {
			if top != nil {
				top[n] = true
			}
		}
	}
	at := func(f string) bool {
		first, _, _ := strings.Cut(f, "/")
		return top == nil || top[first]
	}
	for _, f := range jsonPrograms {
		if !at(f) {
			continue
		}
		if text := r.budget.read(filepath.Join(project, f)); text != "" {
			var doc any
			if json.Unmarshal([]byte(uncommentedJSON(text)), &doc) == nil {
				if f == ".vscode/tasks.json" {
					doc = autoTasks(doc)
				}
				add(jsonCommands(doc, nil))
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(yamlPrograms)) { // one order for the budget
		keys := yamlPrograms[f]
		if !at(f) {
			continue
		}
		if text := r.budget.read(filepath.Join(project, f)); text != "" {
			if f != ".yarnrc.yml" {
				add(yamlValues(text, keys, ""))
				continue
			}
			for _, v := range yamlValues(text, keys, "plugins") {
				add([]string{quoteWord(v)}) // a path, not command text
			}
		}
	}
	if at(".yarnrc") {
		for line := range strings.SplitSeq(r.budget.read(filepath.Join(project, ".yarnrc")), "\n") {
			line = strings.TrimSpace(line)
			for _, key := range []string{"yarn-path", `"yarn-path"`, "'yarn-path'"} {
				if v, ok := strings.CutPrefix(line, key); ok && (v == "" || v[0] == ' ' || v[0] == '\t') {
					add([]string{quoteWord(unquoteValue(strings.TrimSpace(v)))})
				}
			}
		}
	}
}

// uncommentedJSON is JSONC text as JSON: its // and /* */ comments and
// its trailing commas taken out, outside strings (VS Code's tasks.json and
// a dev container's devcontainer.json are JSONC: one comment made
// json.Unmarshal read nothing there).
func uncommentedJSON(text string) string {
	return jsonPass(jsonPass(text, true), false)
}

// jsonPass is text with its comments taken out (comments), or its
// trailing commas (not comments), outside strings.
func jsonPass(text string, comments bool) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"':
			j := i + 1
			for ; j < len(text) && text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				}
			}
			b.WriteString(text[i:min(j+1, len(text))])
			i = j
			continue
		case comments && strings.HasPrefix(text[i:], "//"):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j - 1
			continue
		case comments && strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 3
			continue
		case !comments && c == ',':
			k := i + 1
			for k < len(text) && strings.IndexByte(" \t\r\n", text[k]) >= 0 {
				k++
			}
			if k < len(text) && (text[k] == '}' || text[k] == ']') {
				continue // a trailing comma
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// autoTasks is what of a tasks.json runs unasked: its tasks that run when
// the folder is opened (runOptions.runOn = folderOpen). A task a person
// starts runs project code as make does; its script's directory made
// read-only (src/ for python3 src/main.py) cost every call there its
// writes (the forty-sixth run's).
func autoTasks(doc any) any {
	m, _ := doc.(map[string]any)
	tasks, _ := m["tasks"].([]any)
	var auto []any
	for _, t := range tasks {
		tm, _ := t.(map[string]any)
		ro, _ := tm["runOptions"].(map[string]any)
		if on, _ := ro["runOn"].(string); on == "folderOpen" {
			auto = append(auto, t)
		}
	}
	return auto
}

// jsonCommands are the commands in a JSON document: each "command" with
// its sibling "args", each other commandKeys value; a command given as
// an array is its words.
func jsonCommands(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !commandKeys[k] {
				out = jsonCommands(x, out)
				continue
			}
			var args []string
			cd := ""
			if k == "command" {
				args = stringsOf(v["args"])
				if dir := cwdOf(v); dir != "" {
					cd = "cd " + quoteWord(dir) + " && " // read where it runs (commandPaths' cd)
				}
			}
			if text, isText := x.(string); isText {
				// Command text (a task's shell line), its args after it.
				if len(args) > 0 {
					text += " " + joinWords(args)
				}
				out = append(out, cd+text)
			} else if words := append(stringsOf(x), args...); len(words) > 0 {
				out = append(out, cd+joinWords(words)) // a program and its words
			}
			out = jsonCommands(x, out)
		}
	case []any:
		for _, x := range v {
			out = jsonCommands(x, out)
		}
	}
	return out
}

// cwdOf is the directory a command's object says it runs in (an MCP
// server's "cwd", a VS Code task's "options": {"cwd"}), VS Code's
// ${workspaceFolder} the project's top; "" where none is said or a
// reader cannot tell it.
func cwdOf(v map[string]any) string {
	dir, _ := v["cwd"].(string)
	if opts, ok := v["options"].(map[string]any); ok && dir == "" {
		dir, _ = opts["cwd"].(string)
	}
	for _, ws := range []string{"${workspaceFolder}", "${workspaceRoot}"} {
		dir = strings.ReplaceAll(dir, ws, ".")
	}
	if strings.ContainsAny(dir, "$`") {
		return ""
	}
	return dir
}

// stringsOf is a string value as one word, an array's strings as words.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var words []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				words = append(words, s)
			}
		}
		return words
	}
	return nil
}

// joinWords is words as command text, each quoted.
func joinWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quoteWord(w)
	}
	return strings.Join(q, " ")
}

// quoteWord is w as one shell word.
func quoteWord(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// yamlValues are the values of keys in YAML text, read a line at a time
// (a mapping's "key: value", a list item's "- key: value", a key in
// quotes, a one-line flow mapping's "{key: value, ...}"): a quoted value
// unquoted (a double-quoted one's escapes decoded), a block scalar (| or
// >) its indented lines. listOf, when set, is a key whose list's plain
// items are values too (Yarn's plugins: a path, or a mapping with one).
// Enough for the files yamlPrograms lists as people and their tools
// write them; anchors and aliases, complex keys and multi-line flow
// collections are not read (docs/confinement.md, What is left).
func yamlValues(text string, keys []string, listOf string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	inList := -1 // the indent of listOf's key while its items are read
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		body := strings.TrimLeft(line, " \t")
		if inList >= 0 && body != "" && !strings.HasPrefix(body, "#") && indent <= inList && !strings.HasPrefix(body, "-") {
			inList = -1
		}
		item, isItem := strings.CutPrefix(body, "-")
		if isItem {
			body = strings.TrimLeft(item, " \t")
			if inList >= 0 && !strings.Contains(body, ":") {
				if v := unquoteValue(stripYAMLComment(body)); v != "" {
					out = append(out, v)
				}
				continue
			}
		}
		pairs := [][2]string{}
		if strings.HasPrefix(body, "{") {
			for _, kv := range strings.Split(strings.Trim(stripYAMLComment(body), "{} "), ",") {
				k, v, _ := strings.Cut(kv, ":")
				pairs = append(pairs, [2]string{unquoteValue(strings.TrimSpace(k)), strings.TrimSpace(v)})
			}
		} else if k, v, ok := cutYAMLKey(body); ok {
			pairs = append(pairs, [2]string{k, v})
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			if k == listOf && listOf != "" && strings.TrimSpace(stripYAMLComment(v)) == "" {
				inList = indent
				continue
			}
			if !slices.Contains(keys, k) {
				continue
			}
			if v == "" || v[0] == '|' || v[0] == '>' {
				// A block: the lines indented past the key's.
				var block []string
				for i+1 < len(lines) {
					next := strings.TrimRight(lines[i+1], " \t\r")
					if strings.TrimSpace(next) != "" && len(next)-len(strings.TrimLeft(next, " \t")) <= indent {
						break
					}
					block = append(block, strings.TrimSpace(next))
					i++
				}
				v = strings.Join(block, "\n")
			} else {
				v = unquoteValue(stripYAMLComment(v))
			}
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// cutYAMLKey splits "key: value" (the key bare or in quotes) into its
// key, unquoted, and its value, trimmed.
func cutYAMLKey(body string) (key, value string, ok bool) {
	if body == "" {
		return "", "", false
	}
	end := 0
	if q := body[0]; q == '"' || q == '\'' {
		j := strings.IndexByte(body[1:], q)
		if j < 0 {
			return "", "", false
		}
		end = j + 2
	} else {
		end = strings.IndexByte(body, ':')
		if end < 0 {
			return "", "", false
		}
	}
	rest := strings.TrimLeft(body[end:], " \t")
	v, ok := strings.CutPrefix(rest, ":")
	if !ok || v != "" && v[0] != ' ' && v[0] != '\t' {
		return "", "", false
	}
	return unquoteValue(body[:end]), strings.TrimSpace(v), true
}

// stripYAMLComment is v without a trailing " # comment" outside quotes.
func stripYAMLComment(v string) string {
	if v == "" || v[0] == '"' || v[0] == '\'' {
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

// unquoteValue is a quoted value's text (YAML's or .yarnrc's quotes): a
// double-quoted one's escapes decoded where Go's are YAML's (\x2e, \u002e),
// a single-quoted one's ” a quote.
func unquoteValue(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// ProjectLoads are Places.Imports for project: what its instruction files
// import (InstructionImports), what its .envrc loads (EnvrcLoads), what
// its mise configuration loads and runs (MiseLoads), what
// its executable configuration names as programs (ConfigPrograms), and
// what its git hooks run (HookPrograms, of hooksPaths: Places.HooksPaths);
// and where project lies below the top of the working tree that holds
// it, those of the top that lie in project (enclosingLoads).
func ProjectLoads(project, home string, hooksPaths []string) []string {
	return slices.Concat(ownLoads(project, home, hooksPaths), enclosingLoads(project, home))
}

// ownLoads are ProjectLoads of project's own files.
func ownLoads(project, home string, hooksPaths []string) []string {
	return slices.Concat(InstructionImports(project, home), EnvrcLoads(project), MiseLoads(project), ConfigPrograms(project), HookPrograms(project, hooksPaths), LinkedConfig(project))
}

// enclosingLoads are, for a project below other directories, what lies
// in project of what those directories' own files load: for each
// ancestor that is the top of a working tree (a monorepo above svc/api;
// the superproject of a submodule, whose .git is a file; a repository
// above a nested one) its ProjectLoads (what its git hooks run, its
// .envrc loads, its configuration names, its instruction files import),
// and for every other ancestor what its .envrc loads, its instruction
// files import and its configuration names: direnv and Claude Code read
// the first two of every directory above the one they run in, not only
// within a repository, and an agent or editor started there the third
// (ownLoads: each ancestor once). A load that
// leads into project through a link (svc/current -> api) is named by
// where it leads. The sixty-first and sixty-second attack runs' launches
// on the subdirectory wrote the env.sh the top's .envrc sources, through
// svc/current too, and a submodule's files its superproject's hook runs.
func enclosingLoads(project, home string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var all []string
	for d := filepath.Dir(project); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			all = append(all, ownLoads(d, home, HooksPaths(d, home, nil))...)
		} else {
			// Not a repository's top (a workspace of several, a
			// directory between a monorepo's top and svc/api): its
			// .mcp.json, settings' hooks and tasks too, which the agent or
			// editor started there runs (the sixty-third attack run's
			// workspace .mcp.json ran node proj/tools/server.js).
			all = append(all, InstructionImports(d, home)...)
			all = append(all, EnvrcLoads(d)...)
			r := newProgramReader(d, 128<<10)
			configPrograms(r, d, maxAncestorNames)
			all = append(all, r.paths.out...)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	var out []string
	add := func(p string) {
		if p != project && fsx.Within(p, project) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range all {
		add(p)
		if r := resolvedPath(p); r != "" {
			add(r)
		}
	}
	return out
}

// resolvedPath is p with the links on its way resolved, its last name
// too where it exists: "" when that changes nothing or fails.
func resolvedPath(p string) string {
	if r := resolved(p); r != "" {
		return r
	}
	if d := resolved(filepath.Dir(p)); d != "" {
		return filepath.Join(d, filepath.Base(p))
	}
	return ""
}

// maxCommands bounds the commands ConfigPrograms reads (each a reader of
// its own, with its own stats: 4,096 distinct ones took 370 ms).
const maxCommands = 256

// maxTopNames bounds the project's top names ConfigPrograms lists.
const maxTopNames = 4096

// maxAncestorNames and maxAncestorDirSize bound the names, and the size
// as the file system gives it, of a directory above the project that
// enclosingLoads lists for its configuration; past either each file is
// looked for (/tmp's 500 names, a size of 32 KB here, took 265 µs
// to list a call; the 22 names looked for, 50).
const (
	maxAncestorNames   = 256
	maxAncestorDirSize = 4096
)

// maxHookScripts bounds the files read of one hooks directory, and the
// directories read.
const maxHookScripts = 64

// HookPrograms are the files of project that its git hooks run: each
// script in the directories core.hooksPath names there (hooksPaths) and
// in .git/hooks (not a .sample), read as commandPaths reads a command,
// from the worktree's top, where git runs a hook. The forty-sixth attack
// run's .husky/pre-commit ran ./scripts/check.sh, which project-write
// rewrote, and the user's next git commit ran it.
func HookPrograms(project string, hooksPaths []string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	r := newProgramReader(project, 64<<10)
	hookPrograms(r, project, hooksPaths)
	return r.paths.out
}

// hookPrograms reads into r the scripts of project's git hooks
// (HookPrograms).
func hookPrograms(r *programReader, project string, hooksPaths []string) {
	// The repository's own hooks: in a linked worktree (its .git a file)
	// those of the common git directory, outside the worktree, which git
	// runs there (the sixty-second attack run rewrote the script a
	// linked worktree's pre-commit ran).
	own := filepath.Join(project, ".git", "hooks")
	if top, gitDir := gitTop(project); top == project && gitDir != "" {
		own = filepath.Join(commonDir(gitDir), "hooks")
	}
	dirs := []string{own}
	for _, d := range hooksPaths {
		dirs = append(dirs, d)
		if filepath.Base(d) == "_" {
			// husky 9: core.hooksPath is .husky/_, whose every hook runs
			// .husky/h, which runs the hook of that name in .husky (the
			// fifty-first run's: .husky/pre-commit was never read).
			dirs = append(dirs, filepath.Dir(d))
		}
	}
	// A directory outside the project too (a global core.hooksPath,
	// ~/.githooks: the sixty-third attack run's pre-commit there ran
	// ./scripts/check.sh, which stayed writable): its hooks run in the
	// project's worktree, and what they name there is kept.
	for i, d := range dirs {
		if i > maxHookScripts {
			break
		}
		for _, e := range readDirN(d, maxHookScripts) {
			// A hook that is a link (ln -s ../../scripts/pre-commit
			// .git/hooks/pre-commit) is read through it, as git runs it.
			if strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			before := len(r.paths.out)
			r.command(r.budget.read(filepath.Join(d, e.Name())))
			if r.scripts == nil {
				continue
			}
			// For PackageScripts: a shell script the hook runs
			// (./scripts/check.sh) is read as the hook is, from the top,
			// and a script that one runs, to maxScriptDepth, for what it
			// runs by name of package.json (npm run lint: the
			// fifty-third and fifty-fourth attack runs'). The paths it
			// names are not protected for that: TestJailGitPins' hook
			// script names .git/objects, which +git then could not write.
			sr := newProgramReader(project, 0)
			sr.budget, sr.reads, sr.scripts = r.budget, r.reads, r.scripts
			next := slices.Clone(r.paths.out[before:])
			for depth := 0; depth < maxScriptDepth && len(next) > 0; depth++ {
				start := len(sr.paths.out)
				for _, p := range next {
					if shellScript(p) {
						sr.command(sr.budget.read(p))
					}
				}
				next = slices.Clone(sr.paths.out[start:])
			}
			r.budget, r.reads = sr.budget, sr.reads
		}
	}
}

// maxScriptDepth bounds the scripts a hook runs that are read, one
// running the next.
const maxScriptDepth = 4

// shellScript: the file p is a shell script, by its #! line (sh, bash,
// dash, zsh, ksh, directly or through env) or, with none, its .sh name.
func shellScript(p string) bool {
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return false // a FIFO's open would wait for a writer
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 128)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".bash")
	}
	words := strings.Fields(rest)
	if len(words) > 1 && filepath.Base(words[0]) == "env" {
		words = words[1:]
	}
	if len(words) == 0 {
		return false
	}
	switch filepath.Base(words[0]) {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}

// PackageScripts are the entries of the project's package.json files
// that its git hooks and its executable configuration run by name: by
// the file's path, each entry's key ("scripts.test", "scripts.pretest",
// "lint-staged"). husky's default hook is `npm test`: a call that
// changed scripts.test in package.json had the user's next commit run it
// (the forty-ninth attack run), and package.json itself, which npm
// install writes, cannot be executable configuration. Bounded as
// HookPrograms and ConfigPrograms are.
func PackageScripts(project string, hooksPaths []string) map[string][]string {
	entries, _ := PackageWorkspaceScripts(project, hooksPaths)
	return entries
}

// PackageWorkspaceScripts is PackageScripts, and by the path of a
// workspace root's manifest (a package.json with "workspaces", or
// pnpm-workspace.yaml), the entries the project's hooks and
// configuration run in each of its workspaces (npm test --workspaces):
// in one made later too, whose package.json names the same entries (the
// fifty-fourth attack run made packages/evil/package.json, and the
// user's next commit ran its scripts.test). WorkspaceDirs and InWorkspace
// tell its workspaces.
func PackageWorkspaceScripts(project string, hooksPaths []string) (entries, workspaces map[string][]string) {
	if !filepath.IsAbs(project) {
		return nil, nil
	}
	project = filepath.Clean(project)
	scripts := &packageScripts{}
	r := newProgramReader(project, 64<<10)
	r.scripts = scripts
	hookPrograms(r, project, hooksPaths)
	c := newProgramReader(project, 128<<10)
	c.scripts = scripts
	configPrograms(c, project, maxTopNames)
	scripts.follow(project)
	return scripts.m, scripts.ws
}

// programReader gives the paths of a project that the commands it reads
// name (commandPaths, run from the project's top), each command read
// once, the files holding them read to its budget: ConfigPrograms' and
// HookPrograms' one reading.
type programReader struct {
	project string
	paths   pathSet
	read    map[string]bool // the commands read
	budget  readBudget
	reads   int             // the simple commands its readers may still read, all together
	scripts *packageScripts // where set, the package.json entries they run
}

// newProgramReader is a programReader of project (absolute, cleaned)
// whose files are read to budget bytes.
func newProgramReader(project string, budget int) *programReader {
	return &programReader{project: project, read: map[string]bool{}, budget: readBudget{left: budget}, reads: maxCommandReads}
}

// command adds what the command text c names, once.
func (r *programReader) command(c string) {
	if r.read[c] {
		return
	}
	r.read[c] = true
	for _, p := range commandPathsWithin(c, r.project, r.project, nil, &r.reads, r.scripts) {
		if !r.paths.add(p) {
			return
		}
	}
}
