package policy

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/loopguard/loopguard/fsx"
)

// packageScripts gathers, by package.json path, the entries commands run
// by name (PackageScripts).
type packageScripts struct {
	m     map[string][]string
	n     int
	queue [][2]string // each (package.json, key) as added, for follow
	// ws are, by a workspace root's manifest, the entries run in each
	// of its workspaces (PackageWorkspaceScripts).
	ws map[string][]string
	// depth is how many workspaces calls are under way (a workspace's
	// own workspaces).
	depth int
}

// maxWorkspaceDepth bounds workspaces within workspaces.
const maxWorkspaceDepth = 2

// maxPackageKeys bounds the entries packageScripts keeps.
const maxPackageKeys = 256

// command notes what the command prog ARGS, run in dir, runs of dir's
// package.json: npm test, npm run lint, yarn lint, pnpm run build, bun
// run dev (each script with npm's pre and post ones), an install's
// lifecycle scripts (npm ci: prepare, postinstall, ...), and lint-staged,
// whose commands are package.json's "lint-staged" entry.
func (s *packageScripts) command(dir, prog string, args []string) {
	if slices.Contains(args, "lint-staged") {
		s.add(dir, "lint-staged") // npx --no -- lint-staged --quiet, npm exec lint-staged, yarn lint-staged
	}
	if !packageTool(prog) && !taskRunner(prog) {
		// exec npm test, env CI=true npm test, time npm test, corepack
		// pnpm test, and a shell function's run npm test (the
		// fifty-fourth attack run's): the command after the first
		// package manager's name, whatever comes before it. A word that
		// only names one (echo npm test) is taken too: a refused change
		// to a script costs less than a missed one.
		for i, a := range args {
			if packageTool(a) {
				s.command(dir, a, args[i+1:])
				return
			}
		}
		return
	}
	wsAll := workspacesOption(prog, args)
	if d, ok := packageDir(dir, args); ok {
		if _, err := os.Stat(filepath.Join(d, "package.json")); err != nil && workspaceOption(args) && len(workspaceDirs(dir, false)) > 0 {
			// npm test -w packages: every workspace below a directory
			// that is none itself (the fifty-fourth attack run's).
			wsAll = true
		} else {
			dir = d // npm run lint --prefix web, npm -w web test
		}
	}
	if wsAll {
		// npm test --workspaces, npm -ws test, pnpm -r test: the same
		// command in each of the root's workspaces, those made later
		// too, and the list itself (the fifty-third attack run's npm
		// test --workspaces ran web/package.json's scripts.test).
		s.workspaces(dir, prog, withoutWorkspaces(args))
	}
	if s.runnerScripts(dir, prog, args) {
		return
	}
	var name string
	switch prog {
	case "lint-staged":
		s.add(dir, "lint-staged")
		return
	case "npx", "pnpx", "bunx":
		if len(args) > 0 && (args[0] == "lint-staged" || args[len(args)-1] == "lint-staged") {
			s.add(dir, "lint-staged")
		}
		// npx npm test, npx --yes yarn lint: a package manager npx runs.
		if rest := skipOptions(args); len(rest) > 0 && packageManager(rest[0]) {
			s.command(dir, rest[0], rest[1:])
		}
		return
	case "npm":
		args = npmCommand(args)
		if len(args) == 0 {
			return
		}
		switch args[0] {
		case "run", "run-script", "rum", "urn":
			if rest := skipOptions(args[1:]); len(rest) > 0 {
				name = rest[0]
			}
		case "test", "t", "tst":
			name = "test"
		case "start", "stop":
			name = args[0]
		case "restart":
			// npm runs stop and start where there is no restart script.
			s.command(dir, "npm", []string{"stop"})
			s.command(dir, "npm", []string{"start"})
			name = "restart"
		case "install-test", "it", "install-clean-test", "cit":
			s.install(dir) // then npm test
			name = "test"
		case "install", "i", "in", "ci", "add", "isntall", "clean-install":
			s.install(dir) // the project's own lifecycle scripts
			return
		case "exec", "x":
			// npm exec -- npm test: a package manager npm runs.
			if rest := skipOptions(slices.DeleteFunc(slices.Clone(args[1:]), func(a string) bool { return a == "--" })); len(rest) > 0 && packageManager(rest[0]) {
				s.command(dir, rest[0], rest[1:])
			}
			return
		}
	case "yarn", "pnpm", "bun":
		args = skipOptions(args)
		if len(args) == 0 {
			return
		}
		if prog == "yarn" && args[0] == "workspace" && len(args) > 2 {
			// yarn workspace web test: the workspace named web.
			if w, ok := workspaceNamed(dir, args[1]); ok {
				s.command(w, "yarn", args[2:])
			}
			return
		}
		name = args[0]
		if name == "install" || name == "i" || name == "add" {
			s.install(dir)
			return
		}
		if name == "run" || name == "run-script" {
			if rest := skipOptions(args[1:]); len(rest) > 0 {
				name = rest[0]
			} else {
				return
			}
		}
	default:
		return
	}
	if name == "" || strings.ContainsAny(name, "/$`") {
		return
	}
	for _, k := range []string{name, "pre" + name, "post" + name} {
		s.add(dir, "scripts."+k)
	}
}

// runnerScripts notes what the task runners and node's --run run of
// dir's package.json, and reports whether prog was one: node --run test,
// npm-run-all lint build, run-s, run-p, concurrently npm:lint, turbo run
// test, lerna run test, nx run-many -t test (the fifty-fourth attack
// run's).
func (s *packageScripts) runnerScripts(dir, prog string, args []string) bool {
	switch prog {
	case "node":
		// node --run test: package.json's scripts.test, without its pre
		// and post scripts.
		for i, a := range args {
			if a == "--run" && i+1 < len(args) {
				s.add(dir, "scripts."+args[i+1])
			} else if v, ok := strings.CutPrefix(a, "--run="); ok {
				s.add(dir, "scripts."+v)
			}
		}
		return true
	case "npm-run-all", "run-s", "run-p":
		// npm-run-all lint build, run-s lint: each script it names.
		for _, a := range skipOptions(args) {
			if !strings.HasPrefix(a, "-") && !strings.ContainsAny(a, "*/$`") {
				s.add(dir, "scripts."+a)
			}
		}
		return true
	case "concurrently":
		// concurrently npm:lint "npm run test": each npm:NAME, and each
		// command it runs.
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "npm:"); ok && !strings.ContainsAny(v, "*/$`") {
				s.add(dir, "scripts."+v)
			} else if f := strings.Fields(a); len(f) > 1 && packageManager(f[0]) {
				s.command(dir, f[0], f[1:])
			}
		}
		return true
	case "turbo", "lerna", "nx":
		// turbo run test, lerna run test, nx run-many -t test: a script
		// of each workspace, as npm test --workspaces runs it.
		if rest := skipOptions(args); len(rest) > 1 && (rest[0] == "run" || rest[0] == "run-many") {
			name := rest[1]
			if name == "-t" || name == "--target" {
				if len(rest) < 3 {
					return true
				}
				name = rest[2]
			}
			s.workspaces(dir, "npm", []string{"run", name})
		}
		return true
	}
	return false
}

// workspaces notes, for the workspace root in dir, the command prog args
// run in each of its workspaces: the entries of each workspace's
// package.json there now, those a later one is judged by (ws), and the
// root's "workspaces" list itself (pnpm's pnpm-workspace.yaml is
// executable configuration).
func (s *packageScripts) workspaces(dir, prog string, args []string) {
	if s.depth >= maxWorkspaceDepth {
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	pnpm := prog == "pnpm"
	for _, w := range workspaceDirs(dir, pnpm) {
		s.command(w, prog, args)
	}
	t := packageScripts{depth: s.depth}
	t.command(dir, prog, args)
	keys := t.m[filepath.Join(dir, "package.json")]
	if len(keys) == 0 {
		return
	}
	manifest := filepath.Join(dir, "package.json")
	if pnpm {
		manifest = filepath.Join(dir, "pnpm-workspace.yaml")
	} else {
		s.add(dir, "workspaces")
	}
	if s.ws == nil {
		s.ws = map[string][]string{}
	}
	for _, k := range keys {
		if !slices.Contains(s.ws[manifest], k) && len(s.ws) < maxWorkspaces {
			s.ws[manifest] = append(s.ws[manifest], k)
		}
	}
}

// npmCommand is args from npm's command on: the first word that is one
// of npm's commands this reading knows, past options whose values it
// cannot tell from an operand (npm --loglevel error test: the
// fifty-fourth attack run's); with none, the first word no option takes.
func npmCommand(args []string) []string {
	for i, a := range args {
		switch a {
		case "run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart",
			"install-test", "it", "install-clean-test", "cit", "install", "i", "in", "ci", "add", "isntall", "clean-install", "exec", "x":
			return args[i:]
		}
		if !strings.HasPrefix(a, "-") && (i == 0 || !strings.HasPrefix(args[i-1], "-")) {
			break
		}
	}
	return skipOptions(args)
}

// workspaceOption: args name a workspace (npm -w, --workspace).
func workspaceOption(args []string) bool {
	for _, a := range args {
		if a == "-w" || a == "--workspace" || strings.HasPrefix(a, "--workspace=") {
			return true
		}
	}
	return false
}

// WorkspaceDirs are the workspace directories manifest (a package.json,
// or a pnpm-workspace.yaml) names now.
func WorkspaceDirs(manifest string) []string {
	return workspaceDirs(filepath.Dir(manifest), filepath.Base(manifest) == "pnpm-workspace.yaml")
}

// InWorkspace reports whether dir is, or would be once its package.json
// is made, one of the workspaces manifest names: its globs match it.
func InWorkspace(manifest, dir string) bool {
	root := filepath.Dir(manifest)
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	for _, g := range workspaceGlobs(root, filepath.Base(manifest) == "pnpm-workspace.yaml") {
		if ok, _ := doublestar.Match(strings.TrimPrefix(path.Clean(g), "./"), filepath.ToSlash(rel)); ok {
			return true
		}
	}
	return false
}

// packageManager: a package manager whose command a runner (npx, npm
// exec) may run.
func packageManager(prog string) bool {
	switch prog {
	case "npm", "yarn", "pnpm", "bun":
		return true
	}
	return false
}

// packageTool: a package manager, a package runner (npx, pnpx, bunx) or
// lint-staged: a program command reads for what it runs of package.json;
// after any other program's name, the command from it on is read.
func packageTool(prog string) bool {
	switch prog {
	case "npx", "pnpx", "bunx", "lint-staged":
		return true
	}
	return packageManager(prog)
}

// taskRunner: node, or a task runner that runs package.json's scripts by
// name (runnerScripts).
func taskRunner(prog string) bool {
	switch prog {
	case "node", "npm-run-all", "run-s", "run-p", "concurrently", "turbo", "lerna", "nx":
		return true
	}
	return false
}

// npmWorkspacesFlag: a, npm's flag for every workspace.
func npmWorkspacesFlag(a string) bool {
	return a == "--workspaces" || a == "-ws" || a == "--ws" || a == "--workspaces=true"
}

// workspacesOption: prog's args run the command in every workspace
// (npm --workspaces, -ws, --ws; pnpm -r, --recursive; yarn's workspaces
// foreach).
func workspacesOption(prog string, args []string) bool {
	for i, a := range args {
		switch {
		case prog == "npm" && npmWorkspacesFlag(a):
			return true
		case prog == "pnpm" && (a == "-r" || a == "--recursive"):
			return true
		case prog == "yarn" && a == "workspaces" && i+1 < len(args) && args[i+1] == "foreach":
			return true
		}
	}
	return false
}

// withoutWorkspaces is args without the options workspacesOption takes,
// and without yarn's "workspaces foreach" and its options.
func withoutWorkspaces(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case npmWorkspacesFlag(a) || a == "-r" || a == "--recursive" || strings.HasPrefix(a, "--workspace="):
		case (a == "-w" || a == "--workspace") && i+1 < len(args):
			i++
		case a == "workspaces" && i+1 < len(args) && args[i+1] == "foreach":
			i++
			for i+1 < len(args) && strings.HasPrefix(args[i+1], "-") {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

// maxWorkspaces bounds the workspaces workspaceDirs gives.
const maxWorkspaces = 64

// workspaceDirs are the workspace directories of the package in dir:
// package.json's "workspaces" (a list of globs, or an object with
// "packages"), or for pnpm pnpm-workspace.yaml's packages list, each
// glob (** included) matched to directories holding a package.json.
func workspaceDirs(dir string, pnpm bool) []string {
	var out []string
	for _, g := range workspaceGlobs(dir, pnpm) {
		ds, _ := doublestar.FilepathGlob(filepath.Join(dir, filepath.FromSlash(g), "package.json"), doublestar.WithNoFollow())
		for _, m := range ds {
			if d := filepath.Dir(m); !slices.Contains(out, d) && len(out) < maxWorkspaces {
				out = append(out, d)
			}
		}
	}
	return out
}

// workspaceGlobs are the workspace globs of the package in dir, as
// workspaceDirs reads them; none that is absolute, negated or climbs.
func workspaceGlobs(dir string, pnpm bool) []string {
	var globs []string
	if pnpm {
		for _, l := range strings.Split(readSmall(filepath.Join(dir, "pnpm-workspace.yaml")), "\n") {
			if g, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
				globs = append(globs, strings.Trim(strings.TrimSpace(g), `'"`))
			}
		}
	} else if top := packageJSON(filepath.Join(dir, "package.json")); top != nil {
		var list []string
		var obj struct {
			Packages []string `json:"packages"`
		}
		if json.Unmarshal(top["workspaces"], &list) != nil && json.Unmarshal(top["workspaces"], &obj) == nil {
			list = obj.Packages
		}
		globs = list
	}
	return slices.DeleteFunc(globs, func(g string) bool {
		return g == "" || strings.HasPrefix(g, "!") || filepath.IsAbs(g) || strings.Contains(g, "..")
	})
}

// workspaceNamed is the workspace of the package in dir whose
// package.json's name is name, or whose directory is name.
func workspaceNamed(dir, name string) (string, bool) {
	for _, w := range workspaceDirs(dir, false) {
		var n string
		if top := packageJSON(filepath.Join(w, "package.json")); top != nil && json.Unmarshal(top["name"], &n) == nil && n == name {
			return w, true
		}
	}
	if w := filepath.Join(dir, name); !filepath.IsAbs(name) && !strings.Contains(name, "..") {
		if _, err := os.Stat(filepath.Join(w, "package.json")); err == nil {
			return w, true
		}
	}
	return "", false
}

// install notes the lifecycle scripts an install runs of the project's
// own package.json.
func (s *packageScripts) install(dir string) {
	for _, k := range []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"} {
		s.add(dir, "scripts."+k)
	}
}

// skipOptions is args from its first word that is not an option or an
// option's value (npm -w web test, --prefix web).
func skipOptions(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if packageDirOption(args[0]) && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	return args
}

// packageDirOption: an npm, yarn or pnpm option whose next word is the
// directory of the package.json it runs: one naming the directory a
// program runs in (dirOptions: npm --prefix, yarn --cwd, pnpm -C), or a
// workspace (npm -w, pnpm --filter).
func packageDirOption(o string) bool {
	switch o {
	case "-w", "--workspace", "--filter", "-F":
		return true
	}
	return slices.Contains(dirOptions, o)
}

// packageDir is the directory args name as the package's, anywhere among
// them (npm run lint --prefix web), relative to dir.
func packageDir(dir string, args []string) (string, bool) {
	for i, a := range args {
		v, o := "", a
		if packageDirOption(a) && i+1 < len(args) {
			v = args[i+1]
		} else if k, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") && packageDirOption(k) {
			v, o = val, k
		}
		if v == "" || strings.ContainsAny(v, "$`*") || filepath.IsAbs(v) {
			continue
		}
		if o == "-w" || o == "--workspace" || o == "--filter" || o == "-F" {
			// A workspace by its package's name (npm -w @app/web test)
			// as well as by its directory.
			if w, ok := workspaceNamed(dir, v); ok {
				return w, true
			}
		}
		return filepath.Join(dir, v), true
	}
	return "", false
}

func (s *packageScripts) add(dir, key string) {
	if s.n >= maxPackageKeys {
		return
	}
	if s.m == nil {
		s.m = map[string][]string{}
	}
	p := filepath.Join(dir, "package.json")
	for _, k := range s.m[p] {
		if k == key {
			return
		}
	}
	s.m[p] = append(s.m[p], key)
	s.n++
	s.queue = append(s.queue, [2]string{p, key})
}

// MaxPackageJSON bounds what is read of a package.json: here, and where
// the hook judges a file tool's change to one and keeps it for the check
// after the call (packages hooks, state).
const MaxPackageJSON = 1 << 20

// follow adds what the kept scripts run in turn ("test": "npm run lint
// && jest" runs scripts.lint: the fiftieth attack run changed lint), each
// script read as a command in its package's directory, each package.json
// read once (to 1 MiB), to maxPackageKeys.
func (s *packageScripts) follow(project string) {
	scripts := map[string]map[string]string{}
	reads := maxCommandReads
	for i := 0; i < len(s.queue); i++ {
		path, key := s.queue[i][0], s.queue[i][1]
		name, ok := strings.CutPrefix(key, "scripts.")
		if !ok {
			continue
		}
		m, read := scripts[path]
		if !read {
			m = readScripts(path)
			scripts[path] = m
		}
		if text := m[name]; text != "" {
			commandPathsWithin(text, filepath.Dir(path), project, nil, &reads, s)
		}
	}
}

// packageJSON is the package.json at path by its top keys (packageTop);
// none where it cannot be read.
func packageJSON(path string) map[string]json.RawMessage {
	// Never a blocking open: a package.json that is a FIFO, or a link to
	// the hook's own standard output (/proc/self/fd/1, the seventy-first
	// attack run), held the hook to its deadline and then took its answer.
	data, err := fsx.ReadRegular(path, MaxPackageJSON, 0)
	if err != nil {
		return nil
	}
	return packageTop(data)
}

// packageTop is package.json's text by its top keys, as npm reads it
// (JSON.parse): a leading byte order mark skipped, by the exact key
// (encoding/json's structs would take "Scripts" too), the last of a
// duplicated key. Text that is no JSON object: none.
func packageTop(data []byte) map[string]json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &top) != nil {
		return nil
	}
	return top
}

// PackageEntries are the values of keys (PackageScripts' "scripts.test",
// "lint-staged") in the package.json text data, decoded and encoded again
// (the same value however escaped: npm pkg set rewrites "\u0026" as "&"),
// read as packageTop reads it; "" for one absent, and for every key of
// text that is no JSON object, which runs nothing.
func PackageEntries(data []byte, keys []string) map[string]string {
	vals := make(map[string]string, len(keys))
	top := packageTop(data)
	if top == nil {
		return vals
	}
	var scripts map[string]json.RawMessage
	_ = json.Unmarshal(top["scripts"], &scripts)
	for _, k := range keys {
		var raw json.RawMessage
		if name, ok := strings.CutPrefix(k, "scripts."); ok {
			raw = scripts[name]
		} else {
			raw = top[k]
		}
		var v any
		if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
			if b, err := json.Marshal(v); err == nil {
				vals[k] = string(b)
			}
		}
	}
	return vals
}

// packageMain is the main file of the package in dir that node runs for
// `node DIR` (node .), "" where its package.json names none.
func packageMain(dir string) string {
	var main string
	if json.Unmarshal(packageJSON(filepath.Join(dir, "package.json"))["main"], &main) != nil || strings.Contains(main, "..") {
		return ""
	}
	return main
}

// readScripts is the "scripts" of the package.json at path, as npm reads
// them; none where it cannot be read.
func readScripts(path string) map[string]string {
	var scripts map[string]any
	if json.Unmarshal(packageJSON(path)["scripts"], &scripts) != nil {
		return nil
	}
	out := make(map[string]string, len(scripts))
	for k, v := range scripts {
		if text, ok := v.(string); ok {
			out[k] = text
		}
	}
	return out
}
