package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	var out []string
	add := func(cmds []string) {
		for _, c := range cmds {
			for _, p := range commandPaths(c, project, project, nil) {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	// One listing of the top, where most of these files are not: a
	// stat a file was 94 µs a call where the listing is about 30.
	top := map[string]bool{}
	if ents, err := os.ReadDir(project); err == nil {
		for _, e := range ents {
			top[e.Name()] = true
		}
	} else {
		top = nil // unlisted: read each
	}
	at := func(f string) bool {
		first, _, _ := strings.Cut(f, "/")
		return top == nil || top[first]
	}
	for _, f := range jsonPrograms {
		if !at(f) {
			continue
		}
		if text := readSmall(filepath.Join(project, f)); text != "" {
			var doc any
			if json.Unmarshal([]byte(text), &doc) == nil {
				add(jsonCommands(doc, nil))
			}
		}
	}
	for f, keys := range yamlPrograms {
		if !at(f) {
			continue
		}
		if text := readSmall(filepath.Join(project, f)); text != "" {
			add(yamlValues(text, keys))
		}
	}
	if at(".yarnrc") {
		for line := range strings.SplitSeq(readSmall(filepath.Join(project, ".yarnrc")), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "yarn-path"); ok && (v == "" || v[0] == ' ' || v[0] == '\t') {
				add([]string{quoteWord(unquoteValue(strings.TrimSpace(v)))})
			}
		}
	}
	return out
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
			words := stringsOf(x)
			if k == "command" {
				words = append(words, stringsOf(v["args"])...)
			}
			if len(words) > 0 {
				if _, isText := x.(string); isText && len(words) == 1 {
					out = append(out, words[0]) // command text
				} else {
					out = append(out, joinWords(words))
				}
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
// (a mapping's "key: value", or a list item's "- key: value"): a quoted
// value unquoted, a block scalar (| or >) its indented lines. Enough for
// the files yamlPrograms lists; a form it does not read names nothing.
func yamlValues(text string, keys []string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		body := strings.TrimLeft(line, " \t")
		body = strings.TrimLeft(strings.TrimPrefix(body, "-"), " \t")
		for _, k := range keys {
			v, ok := strings.CutPrefix(body, k+":")
			if !ok || v != "" && v[0] != ' ' && v[0] != '\t' {
				continue
			}
			v = strings.TrimSpace(v)
			if v == "" || v[0] == '|' || v[0] == '>' {
				// A block: the lines indented past the key's.
				indent := len(line) - len(strings.TrimLeft(line, " \t"))
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

// unquoteValue is a quoted value's text (YAML's or .yarnrc's quotes).
func unquoteValue(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// ProjectLoads are Places.Imports for project: what its instruction files
// import (InstructionImports), what its .envrc loads (EnvrcLoads), and
// what its executable configuration names as programs (ConfigPrograms).
func ProjectLoads(project, home string) []string {
	return slices.Concat(InstructionImports(project, home), EnvrcLoads(project), ConfigPrograms(project))
}
