package shellparse

import (
	"errors"
	"path/filepath"
	"strings"
)

// Quote returns s as one bash word in single quotes, with nothing left for
// bash to expand: a single quote inside ends the quoting, is written
// escaped, and the quoting starts again.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Canonical is the command a Simple result stands for, written so that
// bash has nothing left to decide: the inert assignments, the program by
// its absolute resolved path (a builtin by its name), every argument
// single-quoted exactly as analysed (globs already expanded), and the
// redirections with absolute targets (relative ones taken against cwd).
// The agent's host runs this text in place of the model's (updatedInput):
// a word the analysis read wrongly then reaches the program as that wrong
// word, never as something bash re-reads.
func (r *Result) Canonical(cwd string) (string, error) {
	if err := r.canonicalizable(); err != nil {
		return "", err
	}
	var b strings.Builder
	r.writeAssigns(&b)
	if r.Builtin {
		b.WriteString(Quote(r.Argv[0].Value))
	} else {
		b.WriteString(Quote(r.Executable))
	}
	for _, w := range r.Argv[1:] {
		b.WriteByte(' ')
		b.WriteString(Quote(w.Value))
	}
	for _, rd := range r.Redirects {
		b.WriteByte(' ')
		b.WriteString(rd.Fd)
		b.WriteString(rd.Op)
		if (rd.Op == ">&" || rd.Op == "<&") && isFdWord(rd.Target) {
			b.WriteString(rd.Target)
		} else {
			b.WriteString(Quote(AbsTarget(cwd, rd.Target)))
		}
	}
	return b.String(), nil
}

// Launch is the command that runs the result through a launcher: the
// inert assignments, then the launcher's words (which name the program,
// its argv and its redirections themselves), each single-quoted.
func (r *Result) Launch(words []string) string {
	var b strings.Builder
	r.writeAssigns(&b)
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(w))
	}
	return b.String()
}

func (r *Result) canonicalizable() error {
	if r.Verdict != Simple || len(r.Argv) == 0 {
		return errors.New("only a simple command has a canonical form")
	}
	if !r.Builtin && !filepath.IsAbs(r.Executable) {
		return errors.New("the program was not resolved to an absolute path")
	}
	return nil
}

func (r *Result) writeAssigns(b *strings.Builder) {
	for _, as := range r.Assigns {
		b.WriteString(as.Name)
		b.WriteByte('=')
		b.WriteString(Quote(as.Value))
		b.WriteByte(' ')
	}
}

// AbsTarget is a redirection target made absolute against cwd.
func AbsTarget(cwd, target string) string {
	if filepath.IsAbs(target) || cwd == "" {
		return filepath.Clean(target)
	}
	return filepath.Join(cwd, target)
}
