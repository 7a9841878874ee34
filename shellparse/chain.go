package shellparse

import (
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
func (a *analyzer) chain(f *syntax.File) ([]Result, []string) {
	if firstComment(f) != nil {
		return nil, nil
	}
	var leaves []*syntax.Stmt
	var ops []string
	var walk func(st *syntax.Stmt) bool
	walk = func(st *syntax.Stmt) bool {
		if st.Negated || st.Background || st.Coprocess || st.Disown || findSubst(st) != nil {
			return false
		}
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			leaves = append(leaves, st)
			return len(leaves) <= maxParts
		case *syntax.BinaryCmd:
			switch c.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
			default:
				return false
			}
			if len(st.Redirs) > 0 || !walk(c.X) {
				return false
			}
			ops = append(ops, c.Op.String())
			return walk(c.Y)
		}
		return false
	}
	for i, st := range f.Stmts {
		if i > 0 {
			ops = append(ops, ";")
		}
		if !walk(st) {
			return nil, nil
		}
	}
	saved := a.env.Cwd
	defer func() { a.env.Cwd = saved }()
	cwd := saved
	parts := make([]Result, 0, len(leaves))
	for i, st := range leaves {
		a.env.Cwd = cwd
		sc, err := a.call(st.Cmd.(*syntax.CallExpr), st.Redirs)
		if err != nil || sc == nil {
			return nil, nil
		}
		p := Result{Verdict: Simple, Argv: sc.argv, Executable: sc.executable, Builtin: sc.builtin,
			Assigns: sc.assigns, Redirects: sc.redirects, Plain: sc.plain, Cwd: cwd}
		if sc.builtin && !chainBuiltin(sc.argv) {
			return nil, nil
		}
		if sc.builtin && sc.argv[0].Value == "cd" {
			prev, next := "", ""
			if i > 0 {
				prev = ops[i-1]
			}
			if i < len(ops) {
				next = ops[i]
			}
			if len(sc.argv) != 2 || len(sc.assigns) > 0 || len(sc.redirects) > 0 || prev == "|" || prev == "|&" ||
				(next != "" && next != "&&") {
				return nil, nil
			}
			target := sc.argv[1].Value
			if target == "" || target == "-" || target[0] == '-' {
				return nil, nil
			}
			if !isAbs(target) {
				if cwd == "" {
					return nil, nil
				}
				target = joinPath(cwd, target)
			}
			fi, err := os.Stat(target)
			if err != nil || !fi.IsDir() {
				return nil, nil
			}
			p.Chdir = evalSymlinks(target)
			if p.Chdir == "" {
				return nil, nil
			}
			cwd = p.Chdir
		}
		parts = append(parts, p)
	}
	return parts, ops
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
