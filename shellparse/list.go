package shellparse

import "mvdan.cc/sh/v3/syntax"

// maxListCommands bounds the commands List reads.
const maxListCommands = 16

// List reads text as simple commands of literal words (quote removal as
// bash does it, $'...' decoded) joined by ;, newlines, &&, ||, | or |&:
// each command's words, in order, and the operator after each but the
// last. ok is false for anything else: an expansion, a glob, an
// assignment, a redirection, a subshell or group, a background job, a
// comment. It reads loopguard's own hook command lines back (package
// register); it is not the analysis of an agent's command (Analyze).
func List(text string) (cmds [][]string, ops []string, ok bool) {
	defer func() {
		if recover() != nil {
			cmds, ops, ok = nil, nil, false
		}
	}()
	f, err := parse(text)
	if err != nil || len(f.Last) > 0 || len(f.Stmts) == 0 {
		return nil, nil, false
	}
	// read takes a statement apart at its operators into commands.
	var read func(st *syntax.Stmt) bool
	read = func(st *syntax.Stmt) bool {
		if st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Comments) > 0 || len(st.Redirs) > 0 {
			return false
		}
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if !read(c.X) {
				return false
			}
			ops = append(ops, c.Op.String())
			return read(c.Y)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 || len(cmds) == maxListCommands {
				return false
			}
			var words []string
			for _, w := range c.Args {
				rw, rerr := ruleWord(w)
				if rerr != nil || len(rw.Lits) != 1 { // not literal, or an unquoted *
					return false
				}
				words = append(words, rw.Lits[0])
			}
			cmds = append(cmds, words)
			return true
		}
		return false
	}
	for i, st := range f.Stmts {
		if i > 0 {
			ops = append(ops, ";")
		}
		if !read(st) {
			return nil, nil, false
		}
	}
	return cmds, ops, true
}
