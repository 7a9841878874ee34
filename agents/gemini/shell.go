package gemini

import (
	"regexp"
	"strings"
	"sync"

	"github.com/loopguard/loopguard/agents"
	"github.com/loopguard/loopguard/shellparse"
)

// What Gemini CLI runs of a run_shell_command (0.61.0, packages/core's
// ShellToolInvocation.execute, checked against its bundle): not the
// model's command, but
//
//  1. stripShellWrapper(command): a leading `bash -c` (sh, zsh, by any
//     path; cmd.exe /c, powershell and pwsh -Command, even on Linux) is
//     taken off with the quotes around the rest, and the text is trimmed;
//  2. wrapCommandForBackgroundPIDs: a trailing backslash gains a space,
//     and the text runs inside a subshell on lines of its own,
//     _bgpids_file=…⏎(⏎  trap … EXIT⏎TEXT⏎)⏎__code=$?⏎exit $__code,
//     after `shopt -u promptvars nullglob extglob nocaseglob dotglob;`,
//     through bash -c.
//
// So `bash -c 'echo hi' 'x; id'` (bash: echo hi) runs `echo hi' 'x; id`,
// and `echo ok ) ; id ; ( :` (bash: a syntax error) runs id outside the
// subshell. The adapter judges, and shows, the text of step 2 in place of
// the model's: the engine's analysis is bash's of that text, and the
// jail's launch runs it with bash -c. It refuses a command that the
// subshell would not hold whole (shellparse.SubshellHolds), and one whose
// double quotes Gemini reads with its own parser (shell-quote) where that
// may differ from taking them off.

// jsSpace is JavaScript's \s (and what String.prototype.trim takes off).
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// wrapperPattern is stripShellWrapper's regular expression. Its /i folds
// ASCII letters only (a non-Unicode JavaScript pattern never matches an
// ASCII letter with another character, as Go's (?i) would: ſ, K).
var wrapperPattern = sync.OnceValue(func() *regexp.Regexp {
	s, ns := `[`+jsSpace+`]`, `[^`+jsSpace+`]`
	return regexp.MustCompile(`^` + s + `*(?:(?:(?:` + ns + `+/)?(?:` + ci("sh") + `|` + ci("bash") + `|` + ci("zsh") + `))` + s + `+` + ci("-c") +
		`|` + ci("cmd") + `\.` + ci("exe") + s + `+/` + ci("c") +
		`|` + ci("powershell") + `(?:\.` + ci("exe") + `)?` + s + `+(?:` + ci("-NoProfile") + s + `+)?` + ci("-Command") +
		`|` + ci("pwsh") + `(?:\.` + ci("exe") + `)?` + s + `+(?:` + ci("-NoProfile") + s + `+)?` + ci("-Command") + `)` + s + `+`)
})

// ci is s matching ASCII letters in either case.
func ci(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteString("[" + string(r) + string(r-'a'+'A') + "]")
		case r >= 'A' && r <= 'Z':
			b.WriteString("[" + string(r-'A'+'a') + string(r) + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return strings.ContainsRune(jsSpaces, r) })
}

var jsSpaces = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// stripShellWrapper is Gemini's. ok is false when Gemini reads the rest
// with shell-quote's parser (a POSIX -c with double quotes) and the text
// has a character that parser may read otherwise than by taking the
// quotes off (", \, $, `: checked on every other ASCII character).
func stripShellWrapper(command string) (string, bool) {
	m := wrapperPattern().FindString(command)
	if m == "" {
		return jsTrim(command), true
	}
	rest := jsTrim(command[len(m):])
	if len(rest) < 2 || !(rest[0] == '"' && rest[len(rest)-1] == '"' || rest[0] == '\'' && rest[len(rest)-1] == '\'') {
		return rest, true
	}
	inner := rest[1 : len(rest)-1]
	if strings.HasSuffix(jsTrim(m), "-c") && rest[0] == '"' && strings.ContainsAny(inner, "\"\\$`") {
		return "", false
	}
	return inner, true
}

// Subshell is the text of wrapCommandForBackgroundPIDs around the
// command (the temporary file's name stands for Gemini's, single-quoted
// as its escapeShellArg does), and the guard ensurePromptvarsDisabled
// puts first.
const (
	subshellBefore = "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file='/tmp/gemini-shell-XXXXXX/bgpids.tmp'\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"
	subshellAfter  = "\n)\n__code=$?\nexit $__code"
)

// Runs is the text bash reads as the command of a run_shell_command
// whose command is command, or a refusal.
func Runs(command string) (string, error) {
	text, ok := stripShellWrapper(command)
	if !ok {
		return "", agents.Errorf("Gemini CLI takes the `bash -c \"...\"` off this command with its own parser, which loopguard does not reproduce for \", \\, $ or ` inside the double quotes: send the command without the bash -c wrapper")
	}
	text = jsTrim(text)
	if strings.HasSuffix(text, `\`) {
		text += " "
	}
	if !shellparse.SubshellHolds(subshellBefore, text, subshellAfter) {
		return "", agents.Errorf("Gemini CLI runs a command inside a subshell, ( ... ), on lines of its own, and this one would not stay inside it whole (a parenthesis that closes it, or a quote or here-document left open): not run; send a command that bash parses on its own")
	}
	return text, nil
}
