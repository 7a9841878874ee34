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

// commandPaths are the paths below base (absolute, cleaned) that the
// command text cmd names, relative to dir (where it runs): each word with a
// / in it (one that begins with an expansion, "$(git rev-parse
// --show-toplevel)/tools/fmt.sh", from its first / on, relative to base);
// each word that names an entry of dir that is there (.env.shared, a
// directory: node tools), or could be a file's name (clean.py, there or
// not); python's -m module (tools.fsmon: tools/ and
// tools/fsmon.py); and, for each file named in a directory below base but
// not base itself, that directory (a script's neighbours, which it
// imports). Command text inside it is read too: $(...) and `...`, and a
// word that holds a blank (sh -c 'tools/clean.sh "$1"'). Words of a
// search path or a watched file (skip, by command name) are not.
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
	var read func(text string, depth int)
	read = func(text string, depth int) {
		if depth > maxCommandDepth {
			return
		}
		outer, inner := substitutions(text)
		for _, s := range inner {
			read(s, depth+1)
		}
		for seg := range strings.FieldsFuncSeq(outer, func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' }) {
			words := commandWords(seg)
			for len(words) > 0 && shellKeywords[words[0]] {
				words = words[1:]
			}
			if len(words) == 0 || skip[words[0]] {
				continue
			}
			for i, w := range words {
				if strings.ContainsAny(w, " \t") {
					read(w, depth+1) // sh -c '...', a quoted command
					continue
				}
				if i > 0 && words[i-1] == "-m" && !strings.ContainsAny(w, "/$`") {
					mod := filepath.Join(dir, strings.ReplaceAll(w, ".", "/"))
					add(mod + ".py")
					add(mod)
					if top, _, ok := strings.Cut(w, "."); ok {
						add(filepath.Join(dir, top))
					}
					continue
				}
				if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "`*?[~=%") {
					continue
				}
				var p string
				switch {
				case strings.HasPrefix(w, "$"):
					_, rest, ok := strings.Cut(w, "/")
					if !ok || strings.ContainsAny(rest, "$") {
						continue
					}
					p = filepath.Join(base, rest)
				case strings.Contains(w, "$"):
					continue
				case filepath.IsAbs(w):
					p = w
				case strings.Contains(w, "/"):
					p = filepath.Join(dir, w)
				default:
					p = filepath.Join(dir, w)
					if _, err := os.Lstat(p); err != nil && !strings.Contains(w, ".") {
						continue // a program on PATH, an option's value
					}
				}
				add(p)
				if d := filepath.Dir(filepath.Clean(p)); d != base && strings.HasPrefix(d, base+"/") {
					if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
						add(d)
					}
				}
			}
		}
	}
	read(joinContinued(cmd), 0)
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
