package policy

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// packageScripts gathers, by package.json path, the entries commands run
// by name (PackageScripts).
type packageScripts struct {
	m     map[string][]string
	n     int
	queue [][2]string // each (package.json, key) as added, for follow
}

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
	if p, ok := Lookup(prog); ok && p.Class == Runner {
		// exec npm test, env CI=true npm test, time npm test: the
		// command a runner runs, whatever its options.
		for i, a := range args {
			switch a {
			case "npm", "yarn", "pnpm", "bun", "npx", "pnpx", "bunx", "lint-staged":
				s.command(dir, a, args[i+1:])
				return
			}
		}
		return
	}
	if d, ok := packageDir(dir, args); ok {
		dir = d // npm run lint --prefix web, npm -w web test
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
		return
	case "npm":
		args = skipOptions(args)
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
		case "start", "stop", "restart":
			name = args[0]
		case "install", "i", "in", "ci", "add", "isntall", "clean-install", "it", "install-test", "cit", "install-clean-test":
			s.install(dir) // the project's own lifecycle scripts
			return
		}
	case "yarn", "pnpm", "bun":
		args = skipOptions(args)
		if len(args) == 0 {
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
		v := ""
		if packageDirOption(a) && i+1 < len(args) {
			v = args[i+1]
		} else if k, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") && packageDirOption(k) {
			v = val
		}
		if v != "" && !strings.ContainsAny(v, "$`*") && !filepath.IsAbs(v) {
			return filepath.Join(dir, v), true
		}
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

// maxPackageJSON bounds the package.json follow reads.
const maxPackageJSON = 1 << 20

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
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSON+1))
	if err != nil || len(data) > maxPackageJSON {
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
