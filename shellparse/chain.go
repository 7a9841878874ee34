package shellparse

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxParts bounds the parts of a chain that are analysed one by one.
const maxParts = 64

// chain analyses a list of simple commands joined by ;, newlines, &&, ||,
// | and |&: each part as a simple command of its own, judged in the cwd an
// earlier cd of the chain moved to. It returns nil for any other shape
// (subshells, groups, functions, substitutions, background jobs, negation,
// comments) or when a part is not simple. A cd part must name one existing
// directory and be followed by && (or end the chain), never sit in a
// pipeline: a cd that failed would leave the later parts in another
// directory than the one they were judged in.
//
// When it returns no parts, the error says why, for the person and the
// model reading the refusal: the part, or the shape, that keeps the chain
// from being judged part by part.
//
// Each statement is visited once: the tree found the substitutions, once
// per command, so a long pipeline is judged in time linear in its length.
func (a *analyzer) chain() ([]Result, []string, error) {
	if c := a.t.comment; c != nil {
		return nil, nil, deny(Unparseable, c.Hash, "a comment (#)")
	}
	var leaves []*syntax.Stmt
	var ops []string
	// cut splits a statement at its &&, ||, | and |& into its parts
	// (leaves), each statement once; it reads the tree's statements, not
	// every node (that is walk's job, done once in newTree).
	var cut func(st *syntax.Stmt) error
	cut = func(st *syntax.Stmt) error {
		if testChainVisit != nil {
			testChainVisit()
		}
		if c, ok := st.Cmd.(*syntax.BinaryCmd); ok && !st.Negated && !st.Background && !st.Coprocess && !st.Disown {
			switch c.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
			default:
				return deny(Chained, c.OpPos, "%s joins two commands", c.Op)
			}
			if len(st.Redirs) > 0 {
				return deny(Chained, st.Redirs[0].OpPos, "a redirection of a whole list")
			}
			if err := cut(c.X); err != nil {
				return err
			}
			ops = append(ops, c.Op.String())
			return cut(c.Y)
		}
		if _, ok := st.Cmd.(*syntax.CallExpr); !ok || st.Negated || st.Background || st.Coprocess || st.Disown {
			// What a.stmt says of the statement alone: a subshell, a
			// group, a loop, a background job, a negation.
			_, err := a.stmt(st)
			if err == nil {
				err = deny(Chained, st.Pos(), "a statement that is not a simple command")
			}
			return err
		}
		leaves = append(leaves, st)
		if len(leaves) > maxParts {
			return deny(Chained, st.Pos(), "more than %d commands", maxParts)
		}
		return nil
	}
	for i, st := range a.t.file.Stmts {
		if i > 0 {
			ops = append(ops, ";")
		}
		// A substitution anywhere in the statement is a second command,
		// whatever else the statement is.
		if s := a.t.substs[i]; s != nil {
			return nil, nil, substError(s)
		}
		if err := cut(st); err != nil {
			return nil, nil, err
		}
	}
	saved := a.env.Cwd
	defer func() { a.env.Cwd = saved }()
	cwd := saved
	parts := make([]Result, 0, len(leaves))
	for i, st := range leaves {
		a.env.Cwd = cwd
		call := st.Cmd.(*syntax.CallExpr)
		sc, err := a.call(call, st.Redirs)
		if err != nil {
			return nil, nil, partError(a.src, st, err)
		}
		if sc == nil {
			return nil, nil, deny(Chained, st.Pos(), "the part `%s` is not a command", partText(a.src, st))
		}
		p := Result{Verdict: Simple, Argv: sc.argv, Executable: sc.executable, Builtin: sc.builtin,
			Assigns: sc.assigns, Redirects: sc.redirects, Plain: sc.plain, Cwd: cwd}
		if sc.builtin && !chainBuiltin(sc.argv) {
			return nil, nil, deny(Chained, st.Pos(), "the builtin %s changes what the later parts depend on", sc.argv[0].Value)
		}
		if sc.builtin && sc.argv[0].Value == "cd" {
			if err := a.chainCd(st, sc, ops, i, &cwd); err != nil {
				return nil, nil, err
			}
			p.Chdir = cwd
		}
		parts = append(parts, p)
	}
	return parts, ops, nil
}

// chainCd judges the cd that is part i of a chain and moves *cwd where it
// goes: one existing directory, named by a word the analysis reads, and
// followed by && (or the chain's end), so that a cd that failed stops the
// chain instead of leaving the later parts elsewhere.
func (a *analyzer) chainCd(st *syntax.Stmt, sc *simpleCmd, ops []string, i int, cwd *string) error {
	prev, next := "", ""
	if i > 0 {
		prev = ops[i-1]
	}
	if i < len(ops) {
		next = ops[i]
	}
	switch {
	case len(sc.argv) == 1:
		return deny(Chained, st.Pos(), "cd with no directory goes to the home directory")
	case len(sc.argv) > 2:
		return deny(Chained, st.Pos(), "cd with more than one word")
	case len(sc.assigns) > 0 || len(sc.redirects) > 0:
		return deny(Chained, st.Pos(), "cd with an assignment or a redirection")
	case prev == "|" || prev == "|&":
		return deny(Chained, st.Pos(), "cd in a pipeline runs in a subshell of its own")
	case next != "" && next != "&&":
		return deny(Chained, st.Pos(), "cd followed by %s: the later parts would run where cd left them even if it failed; join them with &&", next)
	}
	target := sc.argv[1].Value
	switch {
	case target == "":
		return deny(Chained, st.Pos(), "cd to an empty word")
	case target == "-":
		return deny(Chained, st.Pos(), "cd - goes to the previous directory, which the analysis cannot know")
	case target[0] == '-':
		return deny(Chained, st.Pos(), "cd with an option (%s)", target)
	}
	if !isAbs(target) {
		if *cwd == "" {
			return deny(Chained, st.Pos(), "cd to a relative directory from an unknown directory")
		}
		target = joinPath(*cwd, target)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return deny(Chained, st.Pos(), "cd %s: not an existing directory", sc.argv[1].Value)
	}
	d := evalSymlinks(target)
	if d == "" {
		return deny(Chained, st.Pos(), "cd %s: the directory cannot be resolved", sc.argv[1].Value)
	}
	*cwd = d
	return nil
}

// testChainVisit, when a test sets it, is called for every statement the
// chain walk visits.
var testChainVisit func()

// partError is why a part of a chain is not a simple command, naming the
// part.
func partError(src string, st *syntax.Stmt, err error) error {
	var ve *verdictError
	if !errors.As(err, &ve) {
		return err
	}
	return &verdictError{verdict: ve.verdict, pos: ve.pos, reason: fmt.Sprintf("the part `%s`: %s", partText(src, st), ve.reason)}
}

// partText is a part's text as written, shortened for a message.
func partText(src string, st *syntax.Stmt) string {
	from, to := int(st.Pos().Offset()), int(st.End().Offset())
	if from < 0 || to > len(src) || from >= to {
		return "?"
	}
	t := strings.Join(strings.Fields(src[from:to]), " ")
	if len(t) > 60 {
		t = t[:57] + "..."
	}
	return t
}

// CanonicalChain is the canonical form of a chain whose parts were all
// analysed: each part's canonical text (a cd by the absolute directory it
// moved to), joined by the chain's operators. part, when not nil, writes a
// part instead (the hook's launcher form); it is not called for a cd.
func (r *Result) CanonicalChain(part func(p *Result) (string, error)) (string, error) {
	if len(r.Parts) == 0 || len(r.Ops) != len(r.Parts)-1 {
		return "", errNotChain
	}
	var b []byte
	for i := range r.Parts {
		p := &r.Parts[i]
		if i > 0 {
			b = append(b, ' ')
			b = append(b, r.Ops[i-1]...)
			b = append(b, ' ')
		}
		var s string
		var err error
		switch {
		case p.Chdir != "":
			s = "cd " + Quote(p.Chdir)
		case part != nil:
			s, err = part(p)
		default:
			s, err = p.Canonical(p.Cwd)
		}
		if err != nil {
			return "", err
		}
		b = append(b, s...)
	}
	return string(b), nil
}

var errNotChain = errorString("not a chain of simple commands")

type errorString string

func (e errorString) Error() string { return string(e) }

// chainBuiltin reports the builtins a chain may hold: those that change
// nothing the later parts depend on (cd is judged apart). pushd and popd
// move the cwd, printf -v assigns a variable (PATH, for the later parts'
// programs), umask and ulimit change what the later parts create and may
// do, kill signals other processes.
func chainBuiltin(argv []Word) bool {
	switch argv[0].Value {
	case "cd", "echo", "true", "false", "test", "[", ":", "pwd":
		return true
	case "printf":
		for _, w := range argv[1:] {
			if w.Value == "--" || !strings.HasPrefix(w.Value, "-") {
				return true
			}
			if strings.Contains(w.Value, "v") {
				return false
			}
		}
		return true
	}
	return false
}
