package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// What a command that a configuration runs (a git setting's, a .envrc's)
// takes from the project cannot be read off its text in general: the
// forty-third attack run ran `python3 -m tools.fsmon`, a script that
// imports its neighbour, `sh -c 'tools/clean.sh "$1"'`, `eval
// "$(./tools/genenv)"` and `export $(grep -v '^#' .env.shared | xargs)`.
// commandPaths reads more than the shell would, and protects more than a
// file: a wrong guess costs a refused write, a missed one code the user's
// own tools run.

// maxCommandDepth bounds how deep command text inside command text
// ($(...), sh -c '...') is read.
const maxCommandDepth = 4

// pathVariables are the variables an assignment before a command can
// point at the project's code with (PYTHONPATH=tools python3 -m conv).
var pathVariables = map[string]bool{
	"PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "RUBYLIB": true, "BASH_ENV": true, "ENV": true,
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "PATH": true, "GEM_PATH": true, "PYTHONSTARTUP": true,
}

// loadVariables are the variables whose value makes a program load a
// file, exported (export NAME=VALUE, where direnv puts it in the user's
// shell) or before a command: the files themselves (loadFiles, a list
// separated by ":"), a command's text (loadCommand: what it runs), or a
// module search path, whose directories start-up code is read from
// (loadSitePath: sitecustomize.py and usercustomize.py there; not the
// directories, which the project's build writes, as PATH_add's are not).
var loadVariables = map[string]int{
	"BASH_ENV": loadFiles, "ENV": loadFiles, "LD_PRELOAD": loadFiles, "PYTHONSTARTUP": loadFiles,
	"GIT_CONFIG_GLOBAL": loadFiles, "GIT_CONFIG_SYSTEM": loadFiles, "GIT_CONFIG": loadFiles, "KUBECONFIG": loadFiles,
	"NPM_CONFIG_USERCONFIG": loadFiles, "npm_config_userconfig": loadFiles, "PERL5OPT": loadOptions, "RUBYOPT": loadOptions,
	"GIT_SSH_COMMAND": loadCommand, "GIT_SSH": loadCommand, "GIT_EDITOR": loadCommand, "GIT_SEQUENCE_EDITOR": loadCommand,
	"GIT_PAGER": loadCommand, "GIT_ASKPASS": loadCommand, "GIT_EXTERNAL_DIFF": loadCommand, "SSH_ASKPASS": loadCommand,
	"EDITOR": loadCommand, "VISUAL": loadCommand, "PAGER": loadCommand, "PROMPT_COMMAND": loadCommand, "NODE_OPTIONS": loadOptions,
	"PYTHONPATH": loadSitePath,
}

const (
	loadFiles = iota + 1
	loadCommand
	loadOptions
	loadSitePath
)

// exported reads the assignment name=value for the files it makes a
// program load (loadVariables).
func (r *cmdReader) exported(name, value string, depth int, evaluated bool) {
	switch loadVariables[name] {
	case loadFiles:
		for _, v := range strings.Split(value, ":") {
			if v != "" {
				for _, p := range r.pathsOf(v) {
					r.add(p)
				}
			}
		}
	case loadCommand:
		if strings.ContainsAny(value, " \t") {
			r.read(value, depth+1, evaluated) // GIT_SSH_COMMAND="./ssh.sh -v"
		} else if strings.Contains(value, "/") {
			for _, p := range r.pathsOf(value) {
				r.script(p)
			}
		}
	case loadOptions:
		r.interpOptions(name, value)
	case loadSitePath:
		for _, v := range strings.Split(value, ":") {
			if v != "" {
				for _, p := range r.pathsOf(v) {
					r.add(filepath.Join(p, "sitecustomize.py"))
					r.add(filepath.Join(p, "usercustomize.py"))
				}
			}
		}
	}
}

// interpOptions reads an interpreter's options variable (NODE_OPTIONS,
// PERL5OPT, RUBYOPT) for the files its options load: node's --require,
// --import and --loader (=X or X next, -r X); perl's -I dirs with its
// -M and -m modules, ruby's with its -r libraries (the sixty-fifth
// attack run's PERL5OPT="-I$PWD/tools -Mhook" loaded tools/hook.pm).
func (r *cmdReader) interpOptions(name, value string) {
	words := strings.Fields(value)
	var incs, mods []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		next := func() string {
			if i+1 < len(words) {
				i++
				return words[i]
			}
			return ""
		}
		switch {
		case name == "NODE_OPTIONS":
			opt, v, eq := strings.Cut(w, "=")
			switch opt {
			case "--require", "-r", "--import", "--loader", "--experimental-loader":
				if !eq {
					v = next()
				}
				for _, p := range r.pathsOf(v) {
					r.script(p)
				}
			}
		case strings.HasPrefix(w, "-I"):
			d := strings.TrimPrefix(w, "-I")
			if d == "" {
				d = next()
			}
			incs = append(incs, d)
		case strings.HasPrefix(w, "-M"), strings.HasPrefix(w, "-m"), name == "RUBYOPT" && strings.HasPrefix(w, "-r"):
			m := w[2:]
			if m == "" {
				m = next()
			}
			m, _, _ = strings.Cut(strings.TrimPrefix(m, "-"), "=")
			mods = append(mods, m)
		}
	}
	ext := ".pm"
	if name == "RUBYOPT" {
		ext = ".rb"
	}
	for _, d := range incs {
		for _, dir := range r.pathsOf(d) {
			for _, m := range mods {
				r.add(filepath.Join(dir, strings.ReplaceAll(m, "::", "/")+ext))
			}
		}
	}
}

// assign keeps value as one of name's (API+=/api: each value it had,
// with the text added). Every value a variable is given anywhere in the
// text is one it may have where it is used: in a branch, a subshell, a
// function, before a prefix assignment (API=decoy cmd $API/x expands the
// outer one) or after an unset (the sixty-fifth attack run's), so each
// is read (pathsOf), the last given first.
func (r *cmdReader) assign(name, value string) {
	name, add := strings.CutSuffix(name, "+")
	if name == "" || name == "PWD" || !isName(name) || len(r.vars) >= maxVars && r.vars[name] == nil {
		return
	}
	if r.vars == nil {
		r.vars = map[string][]string{}
	}
	vals := []string{value}
	if add {
		vals = nil
		for _, v := range r.vars[name] {
			vals = append(vals, v+value)
		}
	}
	for _, v := range vals {
		if !slices.Contains(r.vars[name], v) && len(r.vars[name]) < maxValues {
			r.vars[name] = append(r.vars[name], v)
		}
	}
}

// isName: a shell variable's name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// Assignment is the name and value of w where it is an assignment
// (NAME=VALUE, NAME+=VALUE: ^[A-Za-z_][A-Za-z0-9_]*\+?=), as bash reads a
// word before a command's name: the one reading of it, the shell parser's
// (shellparse) and this package's.
func Assignment(w string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(w, "=")
	return name, value, ok && isName(strings.TrimSuffix(name, "+"))
}

// expansions are the words w may be with its leading variables replaced
// by the values the text gave them ($API/dev.sh after API=svc/api;
// "$ENVFILE"; B=$A/api after A=svc; each value a variable was given, the
// last first), a default's or alternative's word (${API:-d}, ${API:+d},
// whether API has a value or not), a literal suffix or prefix taken off
// (${API%/}), to maxExpansions and maxVarHops: those pathOf reads.
func (r *cmdReader) expansions(w string) []string {
	var out []string
	steps := 0
	var walk func(w string, hops int)
	walk = func(w string, hops int) {
		if len(out) >= maxExpansions || hops > maxVarHops || steps >= maxExpansionSteps {
			return
		}
		steps++
		if literalPath(w) {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
			return
		}
		name, op, arg, rest, ok := leadingVar(w)
		if !ok {
			return
		}
		vals := r.vars[name]
		for i := len(vals) - 1; i >= 0; i-- {
			v := vals[i]
			switch op {
			case "", "-", ":-", "=", ":=":
				if v != "" || op == "" || op == "-" || op == "=" {
					walk(v+rest, hops+1)
				}
			case "%", "%%":
				walk(strings.TrimSuffix(v, arg)+rest, hops+1)
			case "#", "##":
				walk(strings.TrimPrefix(v, arg)+rest, hops+1)
			}
		}
		switch op {
		case "-", ":-", "=", ":=", "+", ":+":
			walk(arg+rest, hops+1) // unset, empty or set: the word may be what is used
		}
	}
	walk(w, 0)
	return out
}

// maxVarHops bounds the variables one path is read through (A=$A/x
// would be read for ever), maxExpansions the words it may be, and
// maxExpansionSteps the words looked at on the way: nine variables of eight
// values each, none ending in a path, were 8^9 steps (the seventy-second
// attack run's committed .envrc of 849 bytes held every call to the hook's
// deadline).
const (
	maxVarHops        = 8
	maxExpansions     = 16
	maxExpansionSteps = 512
)

// leadingVar is the variable w begins with ($NAME, ${NAME}, and ${NAME
// OP ARG} for the operators expansions reads: - := = :+ + % %% # ##, with
// a literal ARG), and what follows it.
func leadingVar(w string) (name, op, arg, rest string, ok bool) {
	if !strings.HasPrefix(w, "$") {
		return "", "", "", "", false
	}
	if strings.HasPrefix(w, "${") {
		j := strings.IndexByte(w, '}')
		if j < 0 {
			return "", "", "", "", false
		}
		inner := w[2:j]
		k := 0
		for k < len(inner) && isName(inner[:k+1]) {
			k++
		}
		name, tail := inner[:k], inner[k:]
		for _, o := range []string{":-", ":=", ":+", "%%", "##", "-", "=", "+", "%", "#"} {
			if strings.HasPrefix(tail, o) {
				op, arg = o, tail[len(o):]
				break
			}
		}
		if name == "" || op == "" && tail != "" || strings.ContainsAny(arg, "*?[{}") {
			return "", "", "", "", false // ${#A}, ${A/x/y}, ${A%*/}: another value
		}
		return name, op, arg, w[j+1:], true
	}
	j := 1
	for j < len(w) && isName(w[1:j+1]) {
		j++
	}
	return w[1:j], "", "", w[j:], j > 1
}

// pathsOf are the paths a word may name: pathOf's, and where it begins
// with a variable of the text's own, one for each word it may be
// (expansions).
func (r *cmdReader) pathsOf(w string) []string {
	var out []string
	for _, e := range r.varWords(w) {
		if p := r.pathOf(e); p != "" {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return out
	}
	if p := r.pathOf(w); p != "" {
		out = append(out, p)
	}
	return out
}

// varWords are the words w may be where it begins with a variable of
// the text's own (expansions; not $PWD/, which pathOf reads itself).
func (r *cmdReader) varWords(w string) []string {
	if !strings.HasPrefix(w, "$") || strings.HasPrefix(w, "$PWD/") || strings.HasPrefix(w, "${PWD}/") {
		return nil
	}
	return r.expansions(w)
}

// literalPath: a value with no expansion but a leading $PWD's, which
// pathOf reads.
func literalPath(v string) bool {
	for _, pwd := range []string{"$PWD/", "${PWD}/"} {
		v = strings.TrimPrefix(v, pwd)
	}
	return !strings.ContainsAny(v, "$`")
}

// transparent: words begins with what runs the rest as its command, or a
// function's definition around it: builtin, command (not -v or -V), a
// function's name() and its brace (setup() { export BASH_ENV=...; }: the
// sixty-fifth attack run's), function NAME.
func transparent(words []string) bool {
	w := words[0]
	switch {
	case w == "builtin", w == "(", w == "((":
		return true
	case w == "command":
		return len(words) < 2 || words[1] != "-v" && words[1] != "-V"
	case w == "function" && len(words) > 1:
		return true
	case strings.HasSuffix(w, "()") && isName(strings.TrimSuffix(w, "()")):
		return true
	case strings.HasSuffix(w, ")") && !strings.HasPrefix(w, "$(") && !strings.Contains(w, "("):
		return true // a case's pattern: *) API=svc/api;;
	}
	return false
}

// defaultsAssigned keeps ${NAME:=word}'s (and ${NAME=word}'s) word as a
// value of NAME: : ${API:=svc/api} assigns it.
func (r *cmdReader) defaultsAssigned(w string) {
	for i := strings.Index(w, "${"); i >= 0; {
		if name, op, arg, _, ok := leadingVar(w[i:]); ok && (op == ":=" || op == "=") {
			r.assign(name, arg)
		}
		next := strings.Index(w[i+2:], "${")
		if next < 0 {
			return
		}
		i += 2 + next
	}
}

// shellKeywords begin a command that is the next word.
var shellKeywords = map[string]bool{"if": true, "then": true, "elif": true, "else": true, "do": true, "while": true, "until": true, "!": true, "{": true, "}": true, "fi": true, "done": true}

// A dialect is what a configuration's language adds to the shell's: the
// commands whose words are not followed (a search path, a watched file),
// and the commands that load a file, which load reads (reporting whether
// prog is one). A nil dialect is the shell's alone.
type dialect struct {
	skip map[string]bool
	load func(r *cmdReader, prog string, args []string) bool
}

// commandPaths are the paths below base (absolute, cleaned) that the
// command text cmd runs, or reads into what it runs, relative to dir
// (where it runs). Of each simple command:
//   - its program where it names a path (./tools/fmt.sh; a path after an
//     expansion, "$(git rev-parse --show-toplevel)/tools/fmt.sh", from
//     its first / on, relative to base): a bare name is found on PATH,
//     never in the project (credential.helper = store, core.editor =
//     code);
//   - an interpreter's script (python3 clean.py, there or not), python's
//     -m module (tools.fsmon: tools/fsmon.py and tools/), sh -c's text;
//   - for a program or a script in a directory below base (not base
//     itself), that directory: its neighbours, which it imports or
//     sources;
//   - what a path variable assigned before it names (PYTHONPATH=tools);
//   - any other word, or an option's value (--extcmd=./dt.sh), that
//     names a path with a / in it: the file alone; a glob's directory
//     (.envrc.d/*.sh: .envrc.d/);
//   - where its output becomes code or variables (eval "$(...)", export
//     $(...), an export's or a source's inner commands: read, in
//     evalSubst), each word that names an entry of dir that is there
//     (.env.shared).
//
// Command text inside it is read too: $(...) and `...`, and sh -c's; a
// comment is not. The dialect's loaders add what they load, and its skipped
// commands nothing.
// What the code these name reaches by other ways (a top-level script's
// import of its neighbour, a path computed at run time) is not found.
func commandPaths(cmd, dir, base string, d *dialect) []string {
	reads := maxCommandReads
	return commandPathsWithin(cmd, dir, base, d, &reads, nil)
}

// commandPathsWithin is commandPaths reading at most *reads simple
// commands, a budget its caller shares between readings; where scripts
// is set, the package.json entries the commands run are noted there.
func commandPathsWithin(cmd, dir, base string, d *dialect, reads *int, scripts *packageScripts) []string {
	vars := map[string][]string{}
	out := commandPathsVars(cmd, dir, base, d, reads, scripts, vars)
	if len(vars) == 0 {
		return out
	}
	// Again with every value the text gave: a function read before the
	// assignment it uses (f() { source_env $API/dev.sh; }; API=svc/api;
	// f: the sixty-fourth attack run's).
	var all pathSet
	for _, p := range slices.Concat(out, commandPathsVars(cmd, dir, base, d, reads, scripts, vars)) {
		all.add(p)
	}
	return all.out
}

// commandPathsVars is commandPathsWithin read once, with the variables
// vars holds, which the text's own assignments join: a caller that reads
// several texts of one shell (EnvrcLoadsOf: one .envrc's values in the
// file it sources) reads them all again itself once vars is full.
func commandPathsVars(cmd, dir, base string, d *dialect, reads *int, scripts *packageScripts, vars map[string][]string) []string {
	if d == nil {
		d = &dialect{}
	}
	r := &cmdReader{dir: dir, base: base, dialect: d, reads: reads, scripts: scripts, vars: vars}
	r.read(joinContinued(cmd), 0, false)
	return r.paths.out
}

// maxCommandReads bounds the simple commands one reading reads: each
// command is read again in each directory a cd went to, and in each
// text it holds (sh -c '...'), so a hook of nested cds and sh -c took a
// second of the hook's every call.
const maxCommandReads = 8192

// cmdReader is one commandPaths: where the command runs, the top its paths
// must be below, and what it found.
type cmdReader struct {
	dir, base string
	*dialect
	paths   pathSet
	stats   int             // Lstat calls made, to maxStats
	reads   *int            // the simple commands it may still read (maxCommandReads)
	scripts *packageScripts // where set, the package.json entries the commands run
	// vars are the variables the text gave a value of its own, as
	// written (API=svc/api, then source_env $API/dev.sh: the
	// sixty-third attack run's .envrc had $API/dev.sh taken for dev.sh
	// at the top), to maxVars.
	vars map[string][]string
	// dirHops are the directory options (make -C) the command being
	// read is read through, to maxDirHops.
	dirHops int
}

// maxDirHops bounds the directory options one command is read through:
// each read what followed it again, in its directory, and a thousand
// of them (make -C. -C. ..., 4 KB in a committed .envrc, .mcp.json or
// lefthook.yml) held every call to the hook's deadline (the seventy-fifth
// attack run).
const maxDirHops = 8

// maxVars bounds the variables a reading keeps, and maxValues the values
// of one.
const (
	maxVars   = 256
	maxValues = 8
)

// maxStats bounds the Lstat calls one reading makes; past it a path is
// taken as there (a directory's script, a word read into variables): more
// protected, never less (a hook of 256 KiB of "eval n0 n1 ..." took 600
// ms of them).
const maxStats = 1024

// lstat is whether p is there and a directory, while the reader's stats
// last (known false past them).
func (r *cmdReader) lstat(p string) (there, dir, known bool) {
	if r.stats >= maxStats {
		return false, false, false
	}
	r.stats++
	fi, err := os.Lstat(p)
	return err == nil, err == nil && fi.IsDir(), true
}

// add keeps p (cleaned) where it is below base, once, to maxLoads; and
// where p is a link, what it leads to, there too (svc/api/dev.sh ->
// ../../tools/dev-env.sh: the forty-eighth attack run wrote the target).
func (r *cmdReader) add(p string) {
	p = filepath.Clean(p)
	if p == r.base || !strings.HasPrefix(p, r.base+"/") || r.paths.in[p] || !r.paths.add(p) {
		return
	}
	if r.stats >= maxStats {
		return
	}
	r.stats++
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(p); err == nil && t != p {
			r.add(t)
		}
	}
}

// pathOf is a word's path, or "" where it is none a reader can tell: a
// word that begins with an expansion is its part from the first / on,
// relative to base.
func (r *cmdReader) pathOf(w string) string {
	switch {
	case strings.HasPrefix(w, "$PWD/") || strings.HasPrefix(w, "${PWD}/"):
		_, rest, _ := strings.Cut(w, "/")
		if strings.ContainsAny(rest, "$`") {
			return ""
		}
		return filepath.Join(r.dir, rest) // where the command runs (a nested .envrc's own directory)
	case strings.HasPrefix(w, "$"):
		if e := r.expansions(w); len(e) > 0 {
			return r.pathOf(e[0]) // a value of the text's own: $API/dev.sh, "$ENVFILE", ${API:-x}/dev.sh (pathsOf: each)
		}
		_, rest, ok := strings.Cut(w, "/")
		if !ok || strings.ContainsAny(rest, "$`") {
			return ""
		}
		return filepath.Join(r.base, rest)
	case strings.ContainsAny(w, "$`"):
		return ""
	case filepath.IsAbs(w):
		return w
	}
	return filepath.Join(r.dir, w)
}

// script adds p, and the directory it is in where that is below base.
func (r *cmdReader) script(p string) {
	if p == "" {
		return
	}
	r.add(p)
	if d := filepath.Dir(filepath.Clean(p)); d != r.base && strings.HasPrefix(d, r.base+"/") {
		if _, dir, known := r.lstat(p); !known || !dir {
			r.add(d)
		}
	}
}

// read reads command text: each simple command, then the commands of its
// substitutions (evaluated: their output becomes code or variables).
func (r *cmdReader) read(text string, depth int, evaluated bool) {
	if depth > maxCommandDepth {
		return
	}
	outer, inner := substitutions(uncommented(text))
	// After a cd (cd web && python3 check.py: the forty-eighth attack
	// run's hook), each command is read where the text began and in every
	// directory a cd in it went to: a subshell's cd, (cd web && make),
	// ends with it, and cd - and popd go back to one of them.
	start := r.dir
	var cds []string
	for _, seg := range segments(outer) {
		words := commandWords(seg)
		if to, ok := r.cdTo(words, start, cds); ok {
			if to != "" && to != start && !slices.Contains(cds, to) && len(cds) < maxCds {
				cds = append(cds, to)
			}
			continue
		}
		r.command(words, depth, evaluated)
		for _, d := range cds {
			r.dir = d
			r.command(words, depth, evaluated)
			r.dir = start
		}
	}
	if len(inner) == 0 || r.paths.full() {
		return
	}
	evaluated = evaluated || strings.Contains(outer, "eval ") || strings.Contains(outer, "export $S") // once: a scan a substitution was quadratic
	for _, s := range inner {
		r.read(s, depth+1, evaluated)
	}
}

// command reads one simple command's words: keywords, a for loop's
// head and assignments before it taken off.
func (r *cmdReader) command(words []string, depth int, evaluated bool) {
	if *r.reads <= 0 {
		return
	}
	*r.reads--
	for len(words) > 0 && (shellKeywords[words[0]] || transparent(words)) {
		words = words[1:]
	}
	// Each NAME=VALUE word anywhere in the command is a value NAME may
	// have (a case's branch, a function's body, builtin export, env A=b);
	// a load variable's is read for what it loads, and a path variable's
	// before the command for its directories (PYTHONPATH=tools python3 -m
	// conv). ${NAME:=word}'s word is one too.
	lead := true
	for _, w := range words {
		lead = lead && strings.Contains(w, "=") && !strings.HasPrefix(w, "-")
		if name, value, ok := Assignment(w); ok && !strings.HasPrefix(w, "-") {
			if lead && pathVariables[name] {
				for _, v := range strings.Split(value, ":") {
					if p := r.pathOf(v); p != "" && v != "" {
						r.add(p)
					}
				}
			}
			r.exported(strings.TrimSuffix(name, "+"), value, depth, evaluated)
			r.assign(name, value)
		}
		r.defaultsAssigned(w)
	}
	// for x in WORDS; do: the words are the loop's.
	if len(words) > 2 && words[0] == "for" && words[2] == "in" {
		words = append([]string{"for"}, words[3:]...)
	}
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:] // read above
	}
	if len(words) == 0 || r.skip[words[0]] {
		return
	}
	if v, ok := r.interpWord(words, 0); ok && v != words[0] {
		words = append([]string{v}, words[1:]...) // "$INSTALL_PYTHON" -mpre_commit
	}
	prog := words[0]
	if prog == "eval" && len(words) > 1 {
		r.read(strings.Join(words[1:], " "), depth+1, true) // eval API=svc/api
	}
	if r.load != nil && r.load(r, prog, words[1:]) {
		return
	}
	if strings.Contains(prog, "/") {
		for _, p := range r.pathsOf(prog) {
			r.script(p)
		}
	}
	base := filepath.Base(prog)
	it, name, interp := interpName(base) // coderules.go's one table
	evalsOutput := evaluated || prog == "eval" || prog == "export" || prog == "source" || prog == "."
	if r.scripts != nil {
		r.scripts.command(r.dir, base, words[1:])
	}
	scripts := interp || scriptRunner(base) // a bare word named like a script is one
	scriptDone := !interp
	dirRead := false // what follows a directory option is read there once
	for i := 1; i < len(words); i++ {
		w := words[i]
		if v, ok := r.interpWord(words, i); ok && !interp {
			// A runner's command (env A=1 python3 -c ..., uv run --with x
			// python -m srv, npx -y tsx srv.ts, timeout 5 bash -c ...,
			// exec "$INSTALL_PYTHON" -mpre_commit): read as a command of
			// its own, whatever the runner's options.
			r.command(append([]string{v}, words[i+1:]...), depth, evaluated)
			return
		}
		if !interp {
			// make -C tools, uv --directory weather run weather.py, npm
			// --prefix web start: what follows is read there too.
			// Only the first such option is read from here: what follows
			// it, read there, reads the next one (a chain, to maxDirHops).
			if v, n := dirOption(words, i); n > 0 {
				r.word(v, evalsOutput, false) // the directory too, as any word
				if d := r.dirPath(v); d != "" && !dirRead && r.dirHops < maxDirHops && *r.reads > 0 {
					dirRead = true
					saved := r.dir
					r.dir = d
					r.dirHops++
					r.command(append([]string{prog}, words[i+n:]...), depth, evaluated)
					r.dirHops--
					r.dir = saved
				}
				i += n - 1
				continue
			}
		}
		switch {
		case interp && w == "-c" && i+1 < len(words):
			r.codeOption(it, name, words, i, depth, evaluated)
			i++
			scriptDone = true
		case interp && (name == "python" || name == "pypy" || name == "ipython") && pythonModule(w, it.valued) >= 0:
			mod := w[pythonModule(w, it.valued)+1:] // -m mod, -mmod, -um mod
			if mod == "" && i+1 < len(words) {
				i++
				mod = words[i]
			}
			r.module(mod)
			r.pythonTop(words[1 : i+1])
			scriptDone = true
		case interp && !scriptDone && i == 1 && scriptVerb(name+" "+w):
			// deno run main.ts: the verb before the script is none.
		case interp && len(w) == 2 && w[0] == '-' && strings.IndexByte(it.valued, w[1]) >= 0 && i+1 < len(words):
			i++ // python3 -W ignore serve: the option's value is no script
		case interp && codeText(w) && i+1 < len(words):
			i++ // node --eval CODE: code, no script
			scriptDone = true
		case interp && slices.Contains(it.codeLong, w) && !codeText(w) && i+1 < len(words):
			i++ // node --env-file .env.mcp, --require hook.js: a file it loads
			for _, p := range r.pathsOf(words[i]) {
				r.script(p)
			}
		case interp && strings.HasPrefix(w, "--") && strings.Contains(w, "=") && slices.Contains(it.codeLong, w[:strings.IndexByte(w, '=')]) && !codeText(w[:strings.IndexByte(w, '=')]):
			for _, p := range r.pathsOf(w[strings.IndexByte(w, '=')+1:]) {
				r.script(p) // node --env-file=.env.mcp
			}
		case strings.ContainsAny(w, " \t"):
			r.read(w, depth+1, evaluated) // a quoted command
		case strings.HasPrefix(w, "-"):
			r.optionValue(w)
		case !scriptDone:
			for _, p := range r.pathsOf(w) {
				r.script(p) // the interpreter's script, there or not
				if (name == "node" || name == "nodejs" || name == "bun") && filepath.Ext(p) == "" {
					for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", "/index.js"} {
						r.add(p + ext) // node server: server.js, server/index.js
					}
					if main := packageMain(p); main != "" {
						r.add(filepath.Join(p, main)) // node .: package.json's main
					}
				}
			}
			scriptDone = true
		default:
			r.word(w, evalsOutput, scripts)
		}
	}
}

// codeText: an interpreter's long option whose value is code or a word,
// not a file it loads.
func codeText(option string) bool {
	switch option {
	case "--eval", "--print", "--input-type", "--interactive", "--expression":
		return true
	}
	return false
}

// scriptRunner: a program that runs a script named as its argument (uv
// run server.py) without being an interpreter loopguard knows.
func scriptRunner(name string) bool {
	switch name {
	case "uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "conda":
		return true
	}
	return false
}

// dirOptions are the options that name the directory a program runs in,
// with their value next or after "=": make -C, git -C, env -C, uv
// --directory, npm --prefix, yarn --cwd, pnpm --dir.
var dirOptions = []string{"-C", "--directory", "--cwd", "--prefix", "--dir", "--chdir", "--project", "--working-directory"}

// dirOption is the value of words[i] where it is an option that names the
// directory its program runs in, and how many words it takes (0: none is
// such an option).
func dirOption(words []string, i int) (string, int) {
	w := words[i]
	for _, o := range dirOptions {
		switch {
		case w == o && i+1 < len(words):
			return words[i+1], 2
		case o == "-C" && len(w) > 2 && strings.HasPrefix(w, "-C"):
			return w[2:], 1 // make -Cweb
		case strings.HasPrefix(w, o+"=") && strings.HasPrefix(o, "--"):
			return w[len(o)+1:], 1
		}
	}
	return "", 0
}

// dirPath is the directory a word names, below base, or "".
func (r *cmdReader) dirPath(w string) string {
	p := r.pathOf(w)
	if p == "" || p != r.base && !strings.HasPrefix(p, r.base+"/") {
		return ""
	}
	return filepath.Clean(p)
}

// maxCds bounds the directories one text's cds are followed to.
const maxCds = 8

// segments are text's commands: split at ; & | and newlines outside
// quotes (sh -c 'cd web && python3 check.py' is one command, whose text is
// read as its own: the forty-ninth attack run's).
func segments(text string) []string {
	var out []string
	start, quote := 0, byte(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			i++ // outside quotes, in "...", and in $'...'
		case quote == '"' || quote == '$':
			if c == '"' && quote == '"' || c == '\'' && quote == '$' {
				quote = 0
			}
		case c == '\'' && i > 0 && text[i-1] == '$':
			quote = '$' // $'...': a backslash escapes its quote
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '&' || c == '|' || c == '\n':
			if i > start {
				out = append(out, text[start:i])
			}
			start = i + 1
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// cdTo: whether words are a cd (or pushd), and the directory it moves to
// from the last of cds (start before one), "" where it leaves the
// project or no reader can tell where (cd -, popd: back to a directory
// already among them; cd "$D" is not followed).
func (r *cmdReader) cdTo(words []string, start string, cds []string) (string, bool) {
	from := start
	if len(cds) > 0 {
		from = cds[len(cds)-1]
	}
	for len(words) > 0 && shellKeywords[words[0]] {
		words = words[1:]
	}
	if len(words) == 0 {
		return "", false
	}
	switch strings.TrimLeft(words[0], "({") {
	case "cd", "pushd", "popd":
	default:
		return "", false
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+") {
			continue
		}
		saved := r.dir
		r.dir = from
		defer func() { r.dir = saved }()
		return r.dirPath(strings.TrimRight(w, ")}")), true
	}
	return "", true
}

// pythonModule is the index of the m in python's short options w that
// name a module (-m, -um, -Im: flags that take no value before it), or -1.
func pythonModule(w, valued string) int {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return -1
	}
	for i := 1; i < len(w); i++ {
		switch {
		case w[i] == 'm':
			return i
		case w[i] == 'c' || strings.IndexByte(valued, w[i]) >= 0 || w[i] < 'A' || w[i] > 'z':
			return -1
		}
	}
	return -1
}

// codeOption reads an interpreter's -c, words[i], and its text: a
// shell's text as commands, and python's top (pythonTop: python3 -c
// 'import nbstripout; ...' imports from the directory it runs in).
func (r *cmdReader) codeOption(it interp, name string, words []string, i, depth int, evaluated bool) {
	if it.code == shells.code && it.valued == shells.valued {
		r.read(words[i+1], depth+1, evaluated) // a shell's -c text
	}
	if name == "python" || name == "pypy" {
		r.pythonTop(words[1:i])
	}
}

// interpWord is the interpreter words[i] names, the program of a
// command (i 0) or a runner's (exec, env, timeout: i past 0): the word
// itself; where it is a variable of the text's own, a value it was given
// that names one (pre-commit's hook script assigns
// INSTALL_PYTHON=/usr/bin/python3, then runs exec "$INSTALL_PYTHON"
// -mpre_commit: the ninety-third attack run's pre_commit.py and
// logging.py at the top ran on the user's git commit); where it is a
// variable of no value known here and python's -m follows it, python.
func (r *cmdReader) interpWord(words []string, i int) (string, bool) {
	w := words[i]
	if _, _, ok := interpName(filepath.Base(w)); ok {
		return w, true
	}
	if !strings.HasPrefix(w, "$") {
		return "", false
	}
	for _, v := range r.varWords(w) {
		if _, _, ok := interpName(filepath.Base(v)); ok {
			return v, true
		}
	}
	if (i == 0 || i == 1) && i+1 < len(words) && pythonModule(words[i+1], interps()["python"].valued) >= 0 {
		return "python3", true
	}
	return "", false
}

// pythonTop adds, where python runs a module (-m) or code (-c) in r.dir
// and so puts that directory first on sys.path (opts, its options, hold
// no -P or -I, which leave it off), the names there that python would
// import in place of its standard library's: NAME.py and the package
// NAME/ of each of pythonStdlib (the ninety-third attack run's
// argparse.py, logging.py; a sourceless NAME.pyc and an extension module
// NAME.so, which no file tool writes, the launcher's sweep holds by
// name). Kept without a stat each: 610 of them.
func (r *cmdReader) pythonTop(opts []string) {
	for _, o := range opts {
		if len(o) > 1 && o[0] == '-' && o[1] != '-' && strings.ContainsAny(o[1:], "IP") {
			return
		}
	}
	if r.dir != r.base && !strings.HasPrefix(r.dir, r.base+"/") {
		return
	}
	for _, n := range pythonStdlib {
		for _, p := range []string{filepath.Join(r.dir, n+".py"), filepath.Join(r.dir, n)} {
			if !r.paths.in[p] && !r.paths.add(p) {
				return
			}
		}
	}
}

// module adds python's -m module mod: its file, its package directory,
// its directory and the __init__.py of each package above it.
func (r *cmdReader) module(mod string) {
	if mod == "" || strings.ContainsAny(mod, "/$`") {
		return
	}
	p := filepath.Join(r.dir, strings.ReplaceAll(mod, ".", "/"))
	r.add(p + ".py")
	r.add(p)
	// Its directory (its neighbours, which it imports), and each
	// package's __init__.py on the way, which the import runs: not the
	// top package whole (python -m app.tools.lint in a pre-commit hook
	// made all of app/ read-only: the forty-ninth attack run's).
	if d := filepath.Dir(p); d != r.dir {
		r.add(d)
		for ; d != r.dir && strings.HasPrefix(d, r.dir+"/"); d = filepath.Dir(d) {
			r.add(filepath.Join(d, "__init__.py"))
		}
	}
}

// loaded adds a file a loader names (there or not), or a glob's
// directory; not an option, nor a path in another's home.
func (r *cmdReader) loaded(w string) {
	if e := r.varWords(w); len(e) > 0 {
		for _, v := range e {
			r.loadedWord(v) // ${STAGE:-dev}: each value the text gave STAGE, and dev
		}
		return
	}
	r.loadedWord(w)
}

// loadedWord is loaded of one word.
func (r *cmdReader) loadedWord(w string) {
	w = defaults(w)
	switch {
	case w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~"):
	case strings.ContainsAny(w, "*?["):
		r.word(w, false, false)
	default:
		p := r.pathOf(w)
		if p == "" {
			return
		}
		if _, dir, known := r.lstat(p); known && dir {
			p = filepath.Join(p, ".envrc") // source_env ../shared: its .envrc, not the directory
		}
		r.add(p)
	}
}

// defaults is w with each ${NAME:-word} (and ${NAME-word}, ${NAME:=word},
// ${NAME=word}) made its word, the file loaded when NAME is unset, as in
// a .envrc's dotenv_if_exists .env.${STAGE:-dev}.
func defaults(w string) string {
	if !strings.Contains(w, "${") {
		return w
	}
	var b strings.Builder
	for {
		i := strings.Index(w, "${")
		if i < 0 {
			return b.String() + w
		}
		j := strings.IndexByte(w[i:], '}')
		if j < 0 {
			return b.String() + w
		}
		inner := w[i+2 : i+j]
		def := ""
		if k := strings.IndexAny(inner, ":-="); k >= 0 {
			def = strings.TrimLeft(inner[k:], ":")
		}
		b.WriteString(w[:i])
		if def != "" && (def[0] == '-' || def[0] == '=') && !strings.ContainsAny(def[1:], "${}") {
			b.WriteString(def[1:])
		} else {
			b.WriteString(w[i : i+j+1]) // as written: no path a reader can tell
		}
		w = w[i+j+1:]
	}
}

// optionValue adds an option's value that names a path (--extcmd=./dt.sh).
func (r *cmdReader) optionValue(w string) {
	if _, v, ok := strings.Cut(w, "="); ok && strings.Contains(v, "/") && !strings.ContainsAny(v, "*?[") {
		if p := r.pathOf(v); p != "" {
			r.add(p)
		}
	}
}

// word adds another word of a command: a glob's directory, a path with a
// / in it (the file alone), and a name that is there only where the
// command's output becomes code or variables (evalsOutput).
func (r *cmdReader) word(w string, evalsOutput, scripts bool) {
	if i := strings.IndexAny(w, "*?["); i >= 0 {
		if j := strings.LastIndexByte(w[:i], '/'); j > 0 {
			if p := r.pathOf(w[:j]); p != "" {
				r.add(p)
			}
		}
		return
	}
	if e := r.varWords(w); len(e) > 0 {
		for _, v := range e {
			r.word(v, evalsOutput, scripts) // each word it may be
		}
		return
	}
	if strings.ContainsAny(w, "~%=") || strings.HasPrefix(w, "@") || strings.Contains(w, "...") {
		return // a home's path, git's %f, an assignment (export A=b/c), an npm package (@scope/name), go's ./...
	}
	p := r.pathOf(w)
	switch {
	case p == "":
	case strings.Contains(w, "/"), scripts && isScriptName(w):
		r.add(p) // uv run server.py, deno run -A main.ts, node -r ./pre.js srv.js
	case evalsOutput:
		if there, _, known := r.lstat(p); !known || there {
			r.add(p) // read into code or variables: export $(grep ... .env.shared)
		}
	}
}

// uncommented is text without its comments: from a # that begins a word
// (at the start, after a blank or an operator), outside quotes and not
// escaped, to the end of its line, as bash reads them. A path named in a
// comment is no path a command takes.
func uncommented(text string) string {
	if !strings.Contains(text, "#") {
		return text
	}
	var b strings.Builder
	var quote byte
	start := true // the next byte begins a word
	for i := 0; i < len(text); i++ {
		c := text[i]
		begins := start
		start = false
		switch {
		case quote == '\'':
			if c == quote {
				quote = 0
			}
		case c == '\\' && i+1 < len(text):
			b.WriteByte(c)
			i++
			c = text[i]
		case quote == 0 && c == '$' && i+1 < len(text) && text[i+1] == '\'':
			// bash's $'...', whose backslash escapes a quote.
			j := i + 2
			for ; j < len(text) && text[j] != '\''; j++ {
				if text[j] == '\\' {
					j++
				}
			}
			end := min(j+1, len(text))
			b.WriteString(text[i:end])
			i = end - 1
			continue
		case c == '$' && i+1 < len(text) && text[i+1] == '(' || c == '`':
			// A substitution, whatever quotes it is in, is copied whole:
			// its text has quotes and comments of its own, which read
			// judges when it reads the substitution's commands.
			end, _ := substitutionEnd(text, i)
			b.WriteString(text[i:end])
			i = end - 1
			continue
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && begins:
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j
			c = '\n'
			start = true
		case strings.IndexByte(" \t\n;&|()<>", c) >= 0:
			start = true
		}
		b.WriteByte(c)
	}
	return b.String()
}

// substitutionEnd is the end of the substitution ($(...) or `...`) that
// starts at i in text, and whether it is closed (len(text) where it is
// not): substitutions' and uncommented's one reading of where it ends.
func substitutionEnd(text string, i int) (end int, closed bool) {
	if text[i] == '`' {
		if j := strings.IndexByte(text[i+1:], '`'); j >= 0 {
			return i + j + 2, true
		}
		return len(text), false
	}
	depth := 0
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return len(text), false
}

// joinContinued joins each line that ends in a backslash with the next.
func joinContinued(s string) string {
	return strings.ReplaceAll(s, "\\\n", " ")
}

// substitutions splits text into what is left with each command
// substitution ($(...) and `...`) made a word "$S", and the commands
// inside them (a $(( arithmetic )) too, harmlessly).
func substitutions(text string) (string, []string) {
	var outer strings.Builder
	var inner []string
	for i := 0; i < len(text); i++ {
		open := 2 // $(
		switch {
		case text[i] == '`':
			open = 1
		case !strings.HasPrefix(text[i:], "$("):
			outer.WriteByte(text[i])
			continue
		}
		end, closed := substitutionEnd(text, i)
		body := text[i+open : end]
		if closed {
			body = body[:len(body)-1]
		}
		inner = append(inner, body)
		outer.WriteString("$S")
		i = end - 1
	}
	return outer.String(), inner
}

// scriptVerb: an interpreter's verb that comes before its script (a
// switch, not a map: the hook's start-up allocates no table it may not use).
func scriptVerb(interpVerb string) bool {
	switch interpVerb {
	case "deno run", "deno serve", "deno test", "bun run", "bun test", "tsx watch":
		return true
	}
	return false
}

// scriptExtensions are the endings of a script's name that a runner takes
// as its program (uv run server.py, bun run dev.ts, deno run main.ts): a
// bare word so named is a path, there or not.
var scriptExtensions = []string{".py", ".pyw", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx",
	".sh", ".bash", ".zsh", ".rb", ".pl", ".pm", ".php", ".lua", ".jl", ".exs", ".groovy", ".kts", ".tcl", ".r", ".R"}

// isScriptName is whether w, a word with no / in it, names a script by its
// ending (and is not the ending alone).
func isScriptName(w string) bool {
	ext := filepath.Ext(w)
	return ext != "" && ext != w && slices.Contains(scriptExtensions, ext)
}
