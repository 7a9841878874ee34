package policy

import (
	"encoding/json"
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

// envrcTool are the files of the .envrc's directory that prog's shell
// hook loads when a .envrc runs it (devbox's generated one: eval
// "$(devbox generate direnv --print-envrc)", which runs devbox shellenv
// --init-hook; pixi's: eval "$(pixi shell-hook)"), the manifest first;
// the hook runs on every cd what the manifest names: devbox.json's
// shell.init_hook, pixi's [activation] scripts and its environment's
// activate.d scripts. The eighty-third attack run found them off every
// list. (A function, not a map: a map literal is built at every start of
// the hook, which this one would have put over its start-up bound.)
func envrcTool(prog string) []string {
	switch prog {
	case "devbox":
		return []string{"devbox.json", "devbox.lock", "devbox.d"}
	case "pixi":
		return []string{"pixi.toml", "pixi.lock", "pyproject.toml", ".pixi"}
	}
	return nil
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
	return EnvrcLoadsOf(project, []string{filepath.Join(filepath.Clean(project), ".envrc")})
}

// EnvrcLoadsOf is EnvrcLoads from the .envrc files envrcs (absolute, in
// project or below it): a nested project's, which direnv runs when the
// user's shell enters its directory, as the launcher's walk finds them.
// The files read share one budget (64 KiB); one not below project loads
// nothing.
func EnvrcLoadsOf(project string, envrcs []string) []string {
	if !filepath.IsAbs(project) {
		return nil
	}
	project = filepath.Clean(project)
	var start []string
	for _, f := range envrcs {
		if f = filepath.Clean(f); strings.HasPrefix(f, project+"/") {
			start = append(start, f)
		}
	}
	// 64 KiB a .envrc, to 1 MiB: a hundred nested ones of 2 KiB each
	// were past one shared 64 KiB (the forty-eighth attack run).
	budget := &readBudget{left: min(len(start), 16) * 64 << 10}
	reads := 2 * maxCommandReads // all the files' commands together
	// The files' variables are one shell's: a value one sets is the
	// next one's (source_env .envrc.shared, which sets API, then
	// source_env $API/dev.sh: the sixty-fourth attack run's); read again
	// with them all where there are any, each file's text kept from the
	// first reading.
	vars, texts := map[string][]string{}, map[string]string{}
	text := func(file string) string {
		t, ok := texts[file]
		if !ok {
			t = budget.read(file)
			texts[file] = t
		}
		return t
	}
	more := func(p string) []string {
		if filepath.Base(p) == ".envrc" {
			return nil
		}
		return []string{filepath.Join(p, ".envrc")} // source_env DIR
	}
	read := func(file string) []string {
		return commandPathsVars(text(file), filepath.Dir(file), project, envrc, &reads, nil, vars)
	}
	out := loadsFrom(start, read, more)
	if len(vars) == 0 {
		return out
	}
	reads = 2 * maxCommandReads
	var all pathSet
	for _, p := range slices.Concat(out, loadsFrom(start, read, more)) {
		all.add(p)
	}
	return all.out
}

// envrc is a .envrc's language: bash, with direnv's loaders and the
// functions whose words are not followed.
var envrc = &dialect{skip: envrcNotPaths, load: envrcLoad}

// envrcLoad reads a command of direnv's, or bash's, that loads a file
// (envrcLoaders, use): the files it names, there or not, or those it loads
// when it names none. It reports whether prog is one.
func envrcLoad(r *cmdReader, prog string, args []string) bool {
	if prog == "use" && len(args) > 0 {
		kind := envrcUses[args[0]]
		if len(args) == 1 {
			for _, d := range kind {
				r.add(filepath.Join(r.dir, d))
			}
		}
		for _, a := range args[1:] {
			r.loaded(a)
			for _, d := range kind {
				r.loaded(filepath.Join(a, d))
			}
		}
		return true
	}
	if files := envrcTool(prog); files != nil {
		for _, f := range files {
			r.add(filepath.Join(r.dir, f))
		}
		// What the manifest runs: devbox's init_hook commands, pixi's
		// activation scripts.
		text := readSmall(filepath.Join(r.dir, files[0]))
		if prog == "devbox" {
			r.read(strings.Join(devboxInitHook(text), "\n"), 1, false)
		} else {
			for _, f := range pixiActivation(text) {
				r.script(r.pathOf(f))
			}
		}
		return true
	}
	if prog == "source_up" || prog == "source_up_if_exists" {
		// The file (.envrc when none is named) in the nearest directory
		// above this one that has it: each is taken, to the top.
		name := ".envrc"
		if len(args) > 0 && !strings.ContainsAny(args[0], "/$`") {
			name = args[0]
		}
		for d := filepath.Dir(r.dir); d != r.base && strings.HasPrefix(d, r.base+"/"); d = filepath.Dir(d) {
			r.add(filepath.Join(d, name))
		}
		r.add(filepath.Join(r.base, name))
		return true
	}
	defaults, ok := envrcLoaders[prog]
	if !ok {
		return false
	}
	if len(args) == 0 {
		for _, d := range defaults {
			r.add(filepath.Join(r.dir, d))
		}
	}
	for _, a := range args {
		r.loaded(a)
	}
	return true
}

// devboxInitHook are the commands of a devbox.json's shell.init_hook (a
// string or a list of them); none where it does not decode.
func devboxInitHook(text string) []string {
	var m struct {
		Shell struct {
			InitHook json.RawMessage `json:"init_hook"`
		} `json:"shell"`
	}
	if json.Unmarshal([]byte(text), &m) != nil {
		return nil
	}
	var one string
	if json.Unmarshal(m.Shell.InitHook, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(m.Shell.InitHook, &list)
	return list
}

// pixiActivation are the scripts a pixi.toml's activation tables name
// ([activation] scripts = [...], and each [target.PLATFORM.activation]'s),
// read line by line: the quoted words of a scripts array, over several
// lines too, in a table whose name holds "activation".
func pixiActivation(text string) []string {
	var out []string
	table, in := "", false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") && !in {
			table = line
			continue
		}
		if !in {
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(k) != "scripts" || !strings.Contains(table, "activation") {
				continue
			}
			line, in = v, true
		}
		out = append(out, quotedWords(line)...)
		if strings.Contains(line, "]") {
			in = false
		}
	}
	return out
}

// quotedWords are the "..." and '...' words of a line of TOML.
func quotedWords(line string) []string {
	var out []string
	for {
		i := strings.IndexAny(line, `"'`)
		if i < 0 {
			return out
		}
		j := strings.IndexByte(line[i+1:], line[i])
		if j < 0 {
			return out
		}
		out = append(out, line[i+1:i+1+j])
		line = line[i+2+j:]
	}
}
