package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// mise runs, on the user's next cd into a project whose configuration it
// trusts, what that configuration names: [env] _.source (a bash script
// sourced into the shell), _.file (an env file, whose BASH_ENV or
// LD_PRELOAD the shell then exports), [hooks] enter, cd and leave (shell
// commands), and a [tools] version of path: (a directory whose programs
// become the tool). Its trust covers the configuration file alone, as
// direnv's allowance covers the .envrc alone: the ninety-third attack
// run's project-write call rewrote the scripts/env.sh that a trusted
// mise.toml's _.source named, and the user's next cd ran it. So what a
// project's mise configuration names is executable configuration, as
// what its .envrc loads is (EnvrcLoads).

// miseTopConfigs are the mise configuration files of a project's top,
// besides its mise.<env>.toml files (miseConfigName), listed from it.
var miseTopConfigs = []string{
	".config/mise.toml", ".config/mise/config.toml", ".config/mise/mise.toml", ".config/mise/config.local.toml",
	".config/mise/mise.local.toml", ".mise/config.toml", ".mise/config.local.toml", "mise/config.toml",
}

// miseHookKey: is k one of [hooks]'s keys whose values are shell commands run on
// a directory change (enter, cd, leave) or around an install.
func miseHookKey(k string) bool {
	switch k {
	case "enter", "cd", "leave", "preinstall", "postinstall":
		return true
	}
	return false
}

// MiseLoads are the files of project that its mise configuration at the
// top names to load or run (mise.toml and its other names, every
// mise.<env>.toml, .config/mise/conf.d/*.toml): what [env] _.source and
// _.file name (and what a sourced script's commands name, commandPaths),
// what [hooks]'s commands name, and a [tools] version's path: directory;
// absolute, cleaned, each once, below project only, relative to the
// project ({{config_root}}). A file that cannot be read names nothing; it
// never panics.
func MiseLoads(project string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var files []string
	for _, e := range readDirN(project, maxTopNames) {
		if miseConfigName(strings.ToLower(e.Name())) && e.Type().IsRegular() {
			files = append(files, filepath.Join(project, e.Name()))
		}
	}
	for _, f := range miseTopConfigs {
		files = append(files, filepath.Join(project, f))
	}
	for _, e := range readDirN(filepath.Join(project, ".config", "mise", "conf.d"), 64) {
		if strings.HasSuffix(e.Name(), ".toml") {
			files = append(files, filepath.Join(project, ".config", "mise", "conf.d", e.Name()))
		}
	}
	budget := &readBudget{left: 256 << 10}
	reads := maxCommandReads
	var out pathSet
	for _, f := range files {
		for _, p := range miseConfigLoads(budget.read(f), project, budget, &reads) {
			if p != project && strings.HasPrefix(p, project+"/") {
				out.add(p)
			}
		}
	}
	return out.out
}

// miseConfigLoads are the paths one mise configuration file's text
// names (MiseLoads).
func miseConfigLoads(text, project string, budget *readBudget, reads *int) []string {
	var out []string
	table := ""
	for _, kv := range tomlEntries(text) {
		if kv.table {
			table = kv.key
			continue
		}
		full := kv.key // env._.source, hooks.enter.script, tools.python
		if table != "" {
			full = table + "." + kv.key
		}
		parts := strings.Split(full, ".")
		switch {
		case full == "env._.source" || full == "env._.file" || strings.HasPrefix(full, "env._.source.") || strings.HasPrefix(full, "env._.file."):
			for _, s := range tomlStrings(kv.value) {
				p := filepath.Join(project, miseRoot(s, project))
				out = append(out, p)
				if parts[2] == "source" {
					out = append(out, commandPathsWithin(budget.read(p), project, project, nil, reads, nil)...)
				}
			}
		case len(parts) >= 2 && parts[0] == "hooks" && miseHookKey(parts[1]):
			for _, s := range tomlStrings(kv.value) {
				out = append(out, commandPathsWithin(miseRoot(s, project), project, project, nil, reads, nil)...)
			}
		case parts[0] == "tools":
			for _, s := range tomlStrings(kv.value) {
				if v, ok := strings.CutPrefix(s, "path:"); ok {
					out = append(out, filepath.Join(project, miseRoot(v, project)))
				}
			}
		}
	}
	return out
}

// miseRoot is s with mise's {{config_root}} (the project) made a path.
func miseRoot(s, project string) string {
	for _, t := range []string{"{{config_root}}", "{{ config_root }}"} {
		s = strings.ReplaceAll(s, t, project)
	}
	if strings.HasPrefix(s, project+"/") {
		return strings.TrimPrefix(s, project+"/")
	}
	return s
}

// tomlEntry is a table header ([env], [[env]]: table) or a key's value
// text, as tomlEntries reads them.
type tomlEntry struct {
	key, value string
	table      bool
}

// tomlEntries reads TOML text loosely, as much as MiseLoads needs: each
// [table] and [[table]] header (its name without quotes or spaces), and
// each key = value, the value's text to its line's end, or over lines
// while a multi-line string, array or inline table is open.
func tomlEntries(text string) []tomlEntry {
	var out []tomlEntry
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			name := strings.Trim(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), "[]")
			out = append(out, tomlEntry{key: tomlKey(name), table: true})
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		for open := tomlOpen(v); open && i+1 < len(lines) && len(v) < 64<<10; open = tomlOpen(v) {
			i++
			v += "\n" + lines[i]
		}
		out = append(out, tomlEntry{key: tomlKey(k), value: v})
	}
	return out
}

// tomlKey is a dotted key without its quotes and spaces.
func tomlKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, k)
}

// tomlOpen reports whether the value text v goes on past its line: a
// multi-line string not closed, or more [ or { than ] or } outside
// strings.
func tomlOpen(v string) bool {
	for _, q := range []string{`"""`, `'''`} {
		if strings.Count(v, q)%2 == 1 {
			return true
		}
	}
	depth := 0
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return depth > 0
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth > 0
}

// tomlStrings are the strings in a value's text (a string, an array's,
// an inline table's values), multi-line ones too, unescaped loosely.
func tomlStrings(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '#' {
			if j := strings.IndexByte(v[i:], '\n'); j >= 0 {
				i += j
				continue
			}
			break
		}
		if c != '"' && c != '\'' {
			continue
		}
		q := string(c)
		if strings.HasPrefix(v[i:], q+q+q) {
			q += q + q
		}
		end := strings.Index(v[i+len(q):], q)
		for q == `"` && end > 0 && v[i+len(q)+end-1] == '\\' {
			next := strings.Index(v[i+len(q)+end+1:], q)
			if next < 0 {
				end = -1
				break
			}
			end += next + 1
		}
		if end < 0 {
			out = append(out, v[i+len(q):])
			break
		}
		s := v[i+len(q) : i+len(q)+end]
		if q == `"` || q == `"""` {
			s = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", `\t`, "\t").Replace(s)
		}
		out = append(out, strings.TrimPrefix(s, "\n"))
		i += len(q) + end + len(q) - 1
	}
	return slices.DeleteFunc(out, func(s string) bool { return strings.TrimSpace(s) == "" })
}
