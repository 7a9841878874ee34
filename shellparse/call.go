package shellparse

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call checks one simple command with its statement's redirections.
func (a *analyzer) call(ce *syntax.CallExpr, redirs []*syntax.Redirect) (*simpleCmd, error) {
	sc := &simpleCmd{}
	// Dangerous names first, whatever their value is made of.
	for _, as := range ce.Assigns {
		if inertVars[as.Name.Value] {
			continue
		}
		if why, ok := shadowingVar(as.Name.Value); ok {
			return nil, deny(PathShadowed, as.Pos(), "assignment to %s %s", as.Name.Value, why)
		}
	}
	if len(ce.Args) == 0 {
		return nil, deny(Indirect, ce.Pos(), "assignment without a command sets shell variables")
	}
	for _, as := range ce.Assigns {
		name := as.Name.Value
		switch {
		case as.Index != nil || as.Array != nil:
			return nil, deny(Indirect, as.Pos(), "array assignment to %s evaluates subscripts", name)
		case as.Naked:
			return nil, deny(Unparseable, as.Pos(), "assignment without =")
		case !inertVars[name] && !strings.HasPrefix(name, "LC_"):
			return nil, deny(Indirect, as.Pos(), "assignment to %s may change what the command runs; only inert variables such as LANG or CGO_ENABLED can prefix a simple command", name)
		}
		if as.Append {
			return nil, deny(Indirect, as.Pos(), "+= appends to the current value of %s", name)
		}
		val, err := assignValue(as.Value)
		if err != nil {
			return nil, err
		}
		sc.assigns = append(sc.assigns, Assign{Name: name, Value: val})
	}

	budget := maxWords
	var pos []syntax.Pos
	for i, w := range ce.Args {
		wpos := w.Pos() // before brace expansion rewrites the word
		words, braced, err := a.expandWord(w, &budget)
		if err != nil {
			return nil, err
		}
		if i == 0 && braced {
			return nil, deny(Indirect, wpos, "brace expansion builds the command name")
		}
		for range words {
			pos = append(pos, wpos)
		}
		sc.argv = append(sc.argv, words...)
	}
	if len(sc.argv) == 0 {
		return nil, deny(Unparseable, ce.Pos(), "the command expands to no words")
	}
	if sc.argv[0].Glob {
		return sc, deny(Indirect, pos[0], "the command name %q is a glob pattern", sc.argv[0].Value)
	}
	if err := a.expandGlobs(sc, pos); err != nil {
		return nil, err
	}

	for _, r := range redirs {
		rd, err := a.redirect(r)
		if err != nil {
			return nil, err
		}
		sc.redirects = append(sc.redirects, rd)
	}

	args := make([]string, len(sc.argv))
	for i, w := range sc.argv {
		args[i] = w.Value
	}
	name := args[0]
	if name == "" {
		return sc, deny(PathShadowed, pos[0], "empty command name")
	}
	if err := indirectByName(filepath.Base(name), args, pos); err != nil {
		return sc, err
	}
	exe, builtin, err := a.resolveCommand(name, pos[0])
	if err != nil {
		return sc, err
	}
	// The resolved name catches aliases by symlink (sh -> dash, x -> bash),
	// except multi-call binaries, which run the applet they are called as.
	if base := filepath.Base(exe); exe != "" && base != filepath.Base(name) && base != "busybox" && base != "toybox" {
		if err := indirectByName(base, args, pos); err != nil {
			return sc, err
		}
	}
	sc.executable, sc.builtin = exe, builtin
	sc.plain = plainCall(ce, redirs)
	return sc, nil
}

// expandGlobs replaces every argument with glob characters by the files
// it matches (glob.go); one that matches none stays, marked Glob.
func (a *analyzer) expandGlobs(sc *simpleCmd, pos []syntax.Pos) error {
	var out []Word
	for i, w := range sc.argv {
		if !w.Glob || w.Pattern == "" {
			out = append(out, w)
			continue
		}
		names, err := a.expandGlob(w.Pattern, pos[i])
		if err != nil {
			return err
		}
		if names == nil {
			out = append(out, w)
			continue
		}
		for _, n := range names {
			out = append(out, Word{Value: n, Pattern: w.Pattern})
		}
		if len(out) > maxWords {
			return deny(Unparseable, pos[i], "more than %d words after filename expansion", maxWords)
		}
	}
	sc.argv = out
	return nil
}

// plainCall reports whether every word of the call is written plainly:
// unquoted literals without backslashes or glob, brace or tilde
// characters, and plain single or double quotes (Result.Plain).
func plainCall(ce *syntax.CallExpr, redirs []*syntax.Redirect) bool {
	for _, as := range ce.Assigns {
		if as.Value != nil && !plainParts(as.Value.Parts, false) {
			return false
		}
	}
	for _, w := range ce.Args {
		if !plainParts(w.Parts, false) {
			return false
		}
	}
	for _, r := range redirs {
		if r.Word != nil && !plainParts(r.Word.Parts, false) {
			return false
		}
	}
	return true
}

func plainParts(parts []syntax.WordPart, inDouble bool) bool {
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			bad := "\\$`"
			if !inDouble {
				bad += "*?[]{}"
				if i == 0 && strings.HasPrefix(p.Value, "~") {
					return false
				}
			}
			if strings.ContainsAny(p.Value, bad) {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if p.Dollar || !plainParts(p.Parts, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// redirect checks one redirection: literal target, no here-documents.
func (a *analyzer) redirect(r *syntax.Redirect) (Redirect, error) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		return Redirect{}, deny(Indirect, r.OpPos, "here-document feeds text to the command")
	case syntax.WordHdoc:
		return Redirect{}, deny(Indirect, r.OpPos, "here-string feeds text to the command")
	}
	rd := Redirect{Op: r.Op.String()}
	if r.N != nil {
		if strings.HasPrefix(r.N.Value, "{") {
			return rd, deny(Indirect, r.OpPos, "{var} redirection assigns a shell variable")
		}
		rd.Fd = r.N.Value
	}
	if r.Op == syntax.DplOut || r.Op == syntax.DplIn {
		// Bash expands the word of >& and <& in its own way (quotes inside
		// it are removed differently: 1>&2"$'"' opens "2$"); only a plain
		// word is read the same by both.
		if lit, ok := plainUnquoted(r.Word); !ok || lit == "" {
			return rd, deny(Unparseable, r.Word.Pos(), "the word after %s must be written plainly (digits, -, or a file name without quotes or escapes): bash and the parser read it differently", rd.Op)
		}
	}
	if end := int(r.Word.End().Offset()); end < len(a.src) && (a.src[end] == '<' || a.src[end] == '>') {
		// "cat <000<x": bash reads the digits (or {name}) before the next
		// operator as that redirection's descriptor and stops with a
		// syntax error; the parser makes them this one's target.
		if lit, ok := plainUnquoted(r.Word); !ok || strings.Trim(lit, "0123456789") == "" {
			return rd, deny(Unparseable, r.Word.Pos(), "the target of %s runs into the next redirection: bash and the parser split it differently; put a space between them", rd.Op)
		}
	}
	budget := 2
	words, braced, err := a.expandWord(r.Word, &budget)
	if err != nil {
		return rd, err
	}
	if braced || len(words) != 1 || words[0].Glob {
		return rd, deny(Indirect, r.OpPos, "redirection target must be one literal path")
	}
	rd.Target = words[0].Value
	if rd.Target == "" {
		return rd, deny(Unparseable, r.Word.Pos(), "empty redirection target")
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
		rd.Writes = true
	case syntax.RdrIn:
	case syntax.DplOut, syntax.DplIn:
		switch {
		case isFdWord(rd.Target):
		case r.Op == syntax.DplOut && r.N == nil:
			rd.Writes = true // >&file is &>file
		default:
			return rd, deny(Unparseable, r.Word.Pos(), "%s with a file name is an ambiguous redirect", rd.Op)
		}
	default:
		return rd, deny(Unparseable, r.OpPos, "unsupported redirection %s", rd.Op)
	}
	if strings.HasPrefix(rd.Target, "/dev/tcp/") || strings.HasPrefix(rd.Target, "/dev/udp/") {
		return rd, deny(Indirect, r.Word.Pos(), "bash opens a network connection for %s", rd.Target)
	}
	return rd, nil
}

// plainUnquoted returns the word's text when it is one literal part with
// no quotes, escapes or expansions.
func plainUnquoted(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(lit.Value, "\\'\"$`{}*?[]~") {
		return "", false
	}
	return lit.Value, true
}

// isFdWord reports a file descriptor operand of <& or >&: "2", "-", "3-".
func isFdWord(s string) bool {
	s = strings.TrimSuffix(s, "-")
	return s == "" || digits(s)
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// shadowingVar reports assignments that change how commands are found or
// what code they load.
func shadowingVar(name string) (string, bool) {
	if why, ok := shadowingExact[name]; ok {
		return why, true
	}
	for _, p := range shadowingPrefixes {
		if strings.HasPrefix(name, p) {
			return "changes what code programs load", true
		}
	}
	for _, s := range shadowingSuffixes {
		if strings.HasSuffix(name, s) {
			return "changes what code programs load", true
		}
	}
	return "", false
}

var shadowingExact = map[string]string{
	"PATH":           "changes where commands are found",
	"BASH_ENV":       "makes bash run a file at start",
	"ENV":            "makes sh run a file at start",
	"PROMPT_COMMAND": "runs a command",
	"PS4":            "is expanded, with command substitution, under set -x",
	"IFS":            "changes how words are split",
	"SHELLOPTS":      "changes shell options",
	"BASHOPTS":       "changes shell options",
	"GLOBIGNORE":     "changes globbing",
	"CDPATH":         "changes where cd goes",
	"HOME":           "changes which configuration files programs load",
	"SHELL":          "changes the shell programs run commands with",
	"PAGER":          "names a program to run",
	"EDITOR":         "names a program to run",
	"VISUAL":         "names a program to run",
	"LESSOPEN":       "names a program to run",
	"LESSCLOSE":      "names a program to run",
	"GCONV_PATH":     "loads shared objects",
	"LOCPATH":        "changes locale data",
	"NLSPATH":        "changes message catalogues",
	"HOSTALIASES":    "changes host name resolution",
	"PERL5LIB":       "changes where perl loads code",
	"PERLLIB":        "changes where perl loads code",
	"PERL5OPT":       "adds perl options and code",
	"RUBYLIB":        "changes where ruby loads code",
	"RUBYOPT":        "adds ruby options",
	"NODE_PATH":      "changes where node loads code",
	"CLASSPATH":      "changes where java loads code",
	"CC":             "names the compiler to run",
	"CXX":            "names the compiler to run",
	"LD":             "names the linker to run",
	"AR":             "names the archiver to run",
	"GOROOT":         "changes the Go toolchain",
	"GOPATH":         "changes where Go loads code",
	"GOTOOLCHAIN":    "downloads and runs another Go toolchain",
	"GOENV":          "loads Go settings, including GOFLAGS, from a file",
	"GOPROXY":        "changes where Go downloads code",
	"GOSUMDB":        "changes how Go verifies code",
	"GONOSUMDB":      "changes how Go verifies code",
	"GONOSUMCHECK":   "changes how Go verifies code",
	"GOINSECURE":     "changes how Go verifies code",
	"GOPRIVATE":      "changes how Go verifies code",
	"GONOPROXY":      "changes where Go downloads code",
	"GOWORK":         "changes which modules Go builds",
	"GOEXE":          "changes Go's executable suffix",
}

var shadowingPrefixes = []string{
	"LD_", "DYLD_", "BASH_FUNC_", "GIT_", "PYTHON", "NPM_CONFIG_", "npm_config_",
	"YARN_", "PNPM_", "CARGO_", "RUSTC", "GEM_", "BUNDLE_", "PIP_", "UV_",
	"DOCKER_", "KUBECONFIG", "SSH_", "SUDO_", "XDG_", "JAVA_", "MAVEN_", "GRADLE_",
	"MAKE", "TERMINFO", "OPENSSL_", "SSL_", "CURL_", "WGET",
}

var shadowingSuffixes = []string{
	"_OPTIONS", "OPTS", "FLAGS", "_COMMAND", "_CMD", "_PATH", "_HOME", "_EDITOR",
	"_PAGER", "_SHELL", "_ASKPASS", "_PROGRAM", "_WRAPPER", "_CONFIG", "_PRELOAD",
	"_LOADER", "_PLUGINS", "_HOOK", "_HOOKS", "_RC", "_STARTUP",
}

// inertVars may prefix a simple command: they change output and build
// targets, not what code runs. LC_* is accepted too.
var inertVars = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"COLORTERM": true, "COLUMNS": true, "LINES": true, "CI": true,
	"NODE_ENV": true, "RAILS_ENV": true, "RACK_ENV": true, "APP_ENV": true,
	"GOOS": true, "GOARCH": true, "GOARM": true, "GOAMD64": true, "GOARM64": true,
	"CGO_ENABLED": true, "GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true,
	"GOTRACEBACK": true, "GODEBUG": true,
	"RUST_BACKTRACE": true, "RUST_LOG": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONHASHSEED": true,
	"PYTHONIOENCODING": true, "PYTHONUTF8": true,
	"DEBIAN_FRONTEND": true, "VERBOSE": true,
}
