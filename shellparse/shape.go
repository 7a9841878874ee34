package shellparse

import (
	"bytes"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shape names, in the order Shape lists them.
const (
	ShapeCompound    = "compound"    // more than one command, or any construct below but cd/redirect/assign
	ShapeList        = "list"        // ; or a newline between commands
	ShapeAnd         = "and"         // &&
	ShapeOr          = "or"          // ||
	ShapePipe        = "pipe"        // | or |&
	ShapeBackground  = "background"  // &
	ShapeCd          = "cd"          // a cd, pushd or popd anywhere
	ShapeRedirect    = "redirect"    // any redirection but a here-document
	ShapeHeredoc     = "heredoc"     // << or <<< (here-document or here-string)
	ShapeSubst       = "subst"       // $(...), `...`, <(...) or >(...)
	ShapeSubshell    = "subshell"    // ( ... )
	ShapeBlock       = "block"       // { ...; }
	ShapeControl     = "control"     // if, for, while, until, case, [[ ]], (( ))
	ShapeFunction    = "function"    // f() { ...; }
	ShapeAssign      = "assign"      // NAME=value before a command, or alone
	ShapeMultiline   = "multiline"   // the text has a newline (also inside quotes)
	ShapeUnparseable = "unparseable" // bash's grammar (mvdan.cc/sh) refuses it
)

// The shape of a command, and its cut into simple parts, are descriptions
// for measurement and displays (the decision counter, the corpus tools);
// they judge nothing. Analyze alone decides.

// shapeTree parses cmd as bash.
func shapeTree(cmd string) (*tree, error) {
	if len(cmd) > MaxCommandLen {
		return nil, errorString("longer than the analysis reads")
	}
	return newTree(cmd)
}

// Shape lists what cmd is made of, sorted.
func Shape(cmd string) []string {
	set := map[string]bool{}
	if strings.Contains(cmd, "\n") {
		set[ShapeMultiline] = true
	}
	t, err := shapeTree(cmd)
	if err != nil {
		set[ShapeUnparseable] = true
		return shapeKeys(set)
	}
	if len(t.file.Stmts) > 1 {
		set[ShapeList] = true
	}
	calls := 0
	walk(t.file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess {
				set[ShapeBackground] = true
			}
		case *syntax.BinaryCmd:
			switch n.Op {
			case syntax.AndStmt:
				set[ShapeAnd] = true
			case syntax.OrStmt:
				set[ShapeOr] = true
			case syntax.Pipe, syntax.PipeAll:
				set[ShapePipe] = true
			}
		case *syntax.CallExpr:
			if len(n.Assigns) > 0 {
				set[ShapeAssign] = true
			}
			if len(n.Args) > 0 {
				calls++
				switch shapeLiteral(n.Args[0]) {
				case "cd", "pushd", "popd":
					set[ShapeCd] = true
				}
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
				set[ShapeHeredoc] = true
			default:
				set[ShapeRedirect] = true
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			set[ShapeSubst] = true
		case *syntax.Subshell:
			set[ShapeSubshell] = true
		case *syntax.Block:
			set[ShapeBlock] = true
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause,
			*syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
			set[ShapeControl] = true
		case *syntax.FuncDecl:
			set[ShapeFunction] = true
		}
		return true
	})
	for _, s := range []string{ShapeList, ShapeAnd, ShapeOr, ShapePipe, ShapeBackground, ShapeSubst,
		ShapeSubshell, ShapeBlock, ShapeControl, ShapeFunction} {
		if set[s] {
			set[ShapeCompound] = true
		}
	}
	if calls > 1 {
		set[ShapeCompound] = true
	}
	return shapeKeys(set)
}

func shapeKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ShapePart is one simple command of a compound command, as SplitShape cuts it.
type ShapePart struct {
	// Cmd is the part printed on its own (mvdan.cc/sh's printer), with
	// the redirections SplitShape drops left out.
	Cmd string
	// Cd is the directory when the part is `cd DIR` with a literal DIR;
	// Bare is set for a cd without an argument or with one that is not a
	// literal (cd "$X", cd -).
	Cd     string
	CdBare bool
	// Dropped counts the redirections left out (2>&1, >/dev/null, ...).
	Dropped int
}

// SplitShape cuts a command into the simple commands that && || ; | |& and
// newlines join, as issue 25's "compound commands of granted parts" would
// judge them: each part alone, in order. It leaves out of each part the
// redirections that send output to the terminal or nowhere (N>&1, N>&2,
// N>/dev/null, &>/dev/null, </dev/null), which the issue lets through
// without a rule. ok is false, with why, when the command has anything a
// part cannot stand for: a subshell, a block, control flow, a function, a
// substitution, a background job, or it does not parse. A command of one
// simple command splits into itself.
func SplitShape(cmd string) (parts []ShapePart, ok bool, why string) {
	t, err := shapeTree(cmd)
	if err != nil {
		return nil, false, ShapeUnparseable
	}
	if t.subst() != nil {
		return nil, false, ShapeSubst
	}
	var pr printers
	var walk func(s *syntax.Stmt) string
	walk = func(s *syntax.Stmt) string {
		if s.Background || s.Coprocess {
			return ShapeBackground
		}
		if s.Negated {
			return "negated"
		}
		switch c := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			if len(s.Redirs) > 0 {
				return "redirected group"
			}
			if w := walk(c.X); w != "" {
				return w
			}
			return walk(c.Y)
		case *syntax.CallExpr:
			parts = append(parts, shapePart(&pr, s, c))
			return ""
		case *syntax.Subshell:
			return ShapeSubshell
		case *syntax.Block:
			return ShapeBlock
		case *syntax.FuncDecl:
			return ShapeFunction
		case nil:
			return "redirection alone"
		default:
			return ShapeControl
		}
	}
	for _, s := range t.file.Stmts {
		if w := walk(s); w != "" {
			return nil, false, w
		}
	}
	if len(parts) == 0 {
		return nil, false, "empty"
	}
	return parts, true, ""
}

// printers are SplitShape's printers, made once for all its parts.
type printers struct{ line, lines *syntax.Printer }

// shapePart prints s, a simple command, without the redirections SplitShape drops.
func shapePart(pr *printers, s *syntax.Stmt, c *syntax.CallExpr) ShapePart {
	p := ShapePart{}
	kept := s.Redirs[:0:0]
	for _, r := range s.Redirs {
		if shapeDroppable(r) {
			p.Dropped++
			continue
		}
		kept = append(kept, r)
	}
	cp := *s
	cp.Redirs = kept
	cp.Comments = nil
	var b bytes.Buffer
	if pr.line == nil {
		pr.line = syntax.NewPrinter(syntax.SingleLine(true))
	}
	if err := pr.line.Print(&b, &cp); err != nil {
		// A heredoc does not fit on one line: print it as it comes.
		b.Reset()
		if pr.lines == nil {
			pr.lines = syntax.NewPrinter()
		}
		_ = pr.lines.Print(&b, &cp)
	}
	p.Cmd = strings.TrimRight(b.String(), "\n")
	if len(c.Args) > 0 && shapeLiteral(c.Args[0]) == "cd" && len(c.Assigns) == 0 {
		args := c.Args[1:]
		if len(args) > 0 && shapeLiteral(args[0]) == "--" {
			args = args[1:]
		}
		if len(args) == 1 && shapeLiteral(args[0]) != "" && shapeLiteral(args[0]) != "-" {
			p.Cd = shapeLiteral(args[0])
		} else {
			p.CdBare = true
		}
	}
	return p
}

// shapeLiteral is w after quote removal (unquote) when it has nothing to
// expand (no expansion, no unquoted glob, tilde or brace character), else "".
func shapeLiteral(w *syntax.Word) string {
	if unquotedAny(w.Parts, "*?[~{") {
		return ""
	}
	v, literal := unquote(w.Parts)
	if !literal {
		return ""
	}
	return v
}

// shapeDroppable: a redirection to the terminal's own streams or to nowhere.
func shapeDroppable(r *syntax.Redirect) bool {
	if r.Word == nil {
		return false
	}
	target := shapeLiteral(r.Word)
	switch r.Op {
	case syntax.DplOut:
		return target == "1" || target == "2"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrIn:
		return target == "/dev/null"
	}
	return false
}
