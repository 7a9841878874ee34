package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// direnv runs a project's .envrc in the user's shell once the user has
// allowed it, and its allowance covers that file alone: what the .envrc
// loads runs, or is exported into the shell, unasked. The forty-second
// attack run's project-write call wrote .envrc.local (which the user's
// .envrc loaded with source_env_if_exists: bash) and .env (dotenv_if_exists:
// it exported BASH_ENV into the user's shell), and the user's next cd ran
// them. So what a project's .envrc loads is executable configuration, as
// what CLAUDE.md imports is an instruction file.

// envrcLoaders are direnv's stdlib functions (and bash's) that load a
// file: the file each names, relative to the .envrc, or (dotenv, use nix,
// use flake) the one each loads when it names none.
var envrcLoaders = map[string][]string{
	"source_env": nil, "source_env_if_exists": nil, "source": nil, ".": nil,
	"dotenv": {".env"}, "dotenv_if_exists": {".env"},
}

// envrcUses are the files `use KIND` loads when it names none.
var envrcUses = map[string][]string{
	"nix":   {"shell.nix", "default.nix"},
	"flake": {"flake.nix", "flake.lock"},
}

// envrcNotPaths are direnv's functions whose words are directories put on
// a search path or files watched, not loaded: not followed (PATH_add bin
// makes what is in bin/ a program the user's shell may run; see
// docs/confinement.md).
var envrcNotPaths = map[string]bool{
	"PATH_add": true, "path_add": true, "MANPATH_add": true, "PATH_rm": true, "path_rm": true,
	"watch_file": true, "watch_dir": true, "load_prefix": true, "layout": true,
}

// EnvrcLoads are the files of project that its .envrc (direnv's) loads,
// and what those load in turn (to maxImportHops): what source_env,
// source_env_if_exists, source, ., dotenv and dotenv_if_exists name (or
// .env), what use nix and use flake load (shell.nix, default.nix,
// flake.nix, flake.lock, or the files named), and what its other commands
// name (commandPaths: ./scripts/setup.sh and scripts/, a file $(grep ...
// .env.shared) reads, python -m's module): absolute, cleaned, each once,
// below project only. A file that cannot be read loads nothing; it never
// panics.
func EnvrcLoads(project string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	return loadsFrom([]string{filepath.Join(project, ".envrc")}, func(file string) []string {
		dir := filepath.Dir(file)
		text := readSmall(file)
		// What direnv's and bash's loaders name, and what its other
		// commands name (commandPaths: a script they run, and its
		// directory; a file an inner command reads into variables).
		var refs []string
		for _, ref := range slices.Concat(envrcRefs(text), commandPaths(text, dir, project, envrcNotPaths)) {
			p := ref
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if p = filepath.Clean(p); p != project && strings.HasPrefix(p, project+"/") {
				refs = append(refs, p)
			}
		}
		return refs
	}, func(p string) []string {
		if filepath.Base(p) == ".envrc" {
			return nil
		}
		return []string{filepath.Join(p, ".envrc")} // source_env DIR
	})
}

// shellKeywords begin a command that is the next word.
var shellKeywords = map[string]bool{"if": true, "then": true, "elif": true, "else": true, "do": true, "while": true, "until": true, "!": true, "{": true, "}": true, "fi": true, "done": true}

// envrcRefs are the paths a .envrc's (or a file it sources') commands
// name, as EnvrcLoads says, relative to it as written.
func envrcRefs(text string) []string {
	var refs []string
	add := func(r string) {
		if r != "" && !strings.HasPrefix(r, "-") && !strings.ContainsAny(r, "$`*?[~") && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	for line := range strings.SplitSeq(joinContinued(text), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			line = line[:i]
		}
		// Each command of the line, at ; & | (quoted or not: a path with
		// one of them in its name is missed).
		for seg := range strings.FieldsFuncSeq(line, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
			words := commandWords(seg)
			for len(words) > 0 && shellKeywords[words[0]] {
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			cmd, args := words[0], words[1:]
			switch {
			case envrcNotPaths[cmd]:
				continue
			case cmd == "use" && len(args) > 0:
				if len(args) == 1 {
					for _, d := range envrcUses[args[0]] {
						add(d)
					}
				}
				for _, a := range args[1:] {
					add(a)
					for _, d := range envrcUses[args[0]] {
						add(filepath.Join(a, d))
					}
				}
				continue
			}
			if defaults, ok := envrcLoaders[cmd]; ok {
				if len(args) == 0 {
					for _, d := range defaults {
						add(d)
					}
				}
				for _, a := range args {
					add(a)
				}
				continue
			}
		}
	}
	return refs
}
