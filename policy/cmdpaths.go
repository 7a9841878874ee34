package policy

import (
	"os"
	"path/filepath"
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

// interpreters run their first word that is no option as a script (and
// python, -m's module; sh, -c's text).
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true,
	"python": true, "python3": true, "python2": true, "pypy3": true, "node": true, "nodejs": true, "deno": true, "bun": true,
	"ruby": true, "perl": true, "php": true, "lua": true, "Rscript": true, "tclsh": true, "awk": true, "gawk": true,
}

// pathVariables are the variables an assignment before a command can
// point at the project's code with (PYTHONPATH=tools python3 -m conv).
var pathVariables = map[string]bool{
	"PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "RUBYLIB": true, "BASH_ENV": true, "ENV": true,
	"LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "PATH": true, "GEM_PATH": true, "PYTHONSTARTUP": true,
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
// Command text inside it is read too: $(...) and `...`, and sh -c's. Words
// of a search path or a watched file (skip, by command name) are not.
// What the code these name reaches by other ways (a top-level script's
// import of its neighbour, a path computed at run time) is not found.
func commandPaths(cmd, dir, base string, skip map[string]bool) []string {
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if p == base || !strings.HasPrefix(p, base+"/") {
			return
		}
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	// pathOf is a word's path below base, or "".
	pathOf := func(w string) string {
		switch {
		case strings.HasPrefix(w, "$"):
			_, rest, ok := strings.Cut(w, "/")
			if !ok || strings.ContainsAny(rest, "$`") {
				return ""
			}
			return filepath.Join(base, rest)
		case strings.ContainsAny(w, "$`"):
			return ""
		case filepath.IsAbs(w):
			return w
		}
		return filepath.Join(dir, w)
	}
	// script adds p, and the directory it is in where that is below base.
	script := func(p string) {
		if p == "" {
			return
		}
		add(p)
		if d := filepath.Dir(filepath.Clean(p)); d != base && strings.HasPrefix(d, base+"/") {
			if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
				add(d)
			}
		}
	}
	var read func(text string, depth int, evaluated bool)
	read = func(text string, depth int, evaluated bool) {
		if depth > maxCommandDepth {
			return
		}
		outer, inner := substitutions(text)
		for seg := range strings.FieldsFuncSeq(outer, func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' }) {
			words := commandWords(seg)
			for len(words) > 0 && shellKeywords[words[0]] {
				words = words[1:]
			}
			// for x in WORDS; do: the words are the loop's.
			if len(words) > 2 && words[0] == "for" && words[2] == "in" {
				words = append([]string{"for"}, words[3:]...)
			}
			// Assignments before the command.
			for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
				name, value, _ := strings.Cut(words[0], "=")
				if pathVariables[name] {
					for _, v := range strings.Split(value, ":") {
						if p := pathOf(v); p != "" && v != "" {
							add(p)
						}
					}
				}
				words = words[1:]
			}
			if len(words) == 0 || skip[words[0]] {
				continue
			}
			prog := words[0]
			evalsOutput := prog == "eval" || prog == "export" || prog == "source" || prog == "." || evaluated
			if strings.Contains(prog, "/") {
				script(pathOf(prog))
			}
			base := filepath.Base(prog)
			isInterp := interpreters[base] || strings.HasPrefix(base, "python3.")
			scriptDone := false
			for i := 1; i < len(words); i++ {
				w := words[i]
				switch {
				case isInterp && (w == "-c") && i+1 < len(words):
					if base == "sh" || base == "bash" || base == "dash" || base == "zsh" || base == "ksh" {
						read(words[i+1], depth+1, evaluated)
					}
					i++
					scriptDone = true
					continue
				case isInterp && strings.HasPrefix(w, "-m"):
					mod := strings.TrimPrefix(w, "-m")
					if mod == "" && i+1 < len(words) {
						i++
						mod = words[i]
					}
					if mod != "" && !strings.ContainsAny(mod, "/$`") {
						p := filepath.Join(dir, strings.ReplaceAll(mod, ".", "/"))
						add(p + ".py")
						add(p)
						if top, _, ok := strings.Cut(mod, "."); ok {
							add(filepath.Join(dir, top))
						}
					}
					scriptDone = true
					continue
				case strings.ContainsAny(w, " \t"):
					read(w, depth+1, evaluated) // a quoted command
					continue
				case strings.HasPrefix(w, "-"):
					// An option's value: --extcmd=./dt.sh.
					if _, v, ok := strings.Cut(w, "="); ok && strings.Contains(v, "/") {
						if p := pathOf(v); p != "" && !strings.ContainsAny(v, "*?[") {
							add(p)
						}
					}
					continue
				}
				if isInterp && !scriptDone {
					script(pathOf(w)) // the script, there or not
					scriptDone = true
					continue
				}
				if i := strings.IndexAny(w, "*?["); i >= 0 {
					// A glob: its directory.
					if j := strings.LastIndexByte(w[:i], '/'); j > 0 {
						if p := pathOf(w[:j]); p != "" {
							add(p)
						}
					}
					continue
				}
				if strings.ContainsAny(w, "~%=") {
					continue // a home's path, git's %f, an assignment (export A=b/c)
				}
				p := pathOf(w)
				if p == "" {
					continue
				}
				if strings.Contains(w, "/") {
					add(p)
					continue
				}
				if _, err := os.Lstat(p); err == nil && evalsOutput {
					add(p) // read into code or variables: export $(grep ... .env.shared)
				}
			}
		}
		for _, s := range inner {
			read(s, depth+1, evaluated || strings.Contains(outer, "eval ") || strings.Contains(outer, "export $S") || strings.HasPrefix(strings.TrimSpace(outer), "export $S"))
		}
	}
	read(joinContinued(cmd), 0, false)
	return out
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
		switch {
		case strings.HasPrefix(text[i:], "$("):
			depth, j := 0, i+1
			for ; j < len(text); j++ {
				if text[j] == '(' {
					depth++
				} else if text[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			inner = append(inner, text[i+2:min(j, len(text))])
			outer.WriteString("$S")
			i = j
		case text[i] == '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				j = len(text) - i - 1
			}
			inner = append(inner, text[i+1:i+1+j])
			outer.WriteString("$S")
			i += j + 1
		default:
			outer.WriteByte(text[i])
		}
	}
	return outer.String(), inner
}
