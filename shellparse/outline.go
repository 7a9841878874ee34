package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// OutlineLine is one node of a command's outline: what it is (Label),
// where it starts, how deep it is nested, and for a command or a
// substitution its source pieces as written (quotes, escapes and control
// characters untouched: a display escapes each).
type OutlineLine struct {
	Depth     int
	Line, Col uint
	Label     string
	Source    []string
}

// Outline lists a command's parsed statements, one node per line, nested
// as bash nests them, then its substitutions. It is for displays
// (loopguard check) and judges nothing; ok is false when bash could not
// parse the command.
func Outline(command string) (lines []OutlineLine, ok bool) {
	defer func() {
		if recover() != nil {
			lines, ok = nil, false
		}
	}()
	if len(command) > MaxCommandLen {
		return nil, false
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	line := func(depth int, pos syntax.Pos, label string, source ...string) {
		lines = append(lines, OutlineLine{Depth: depth, Line: pos.Line(), Col: pos.Col(), Label: label, Source: source})
	}
	src := func(n syntax.Node) string {
		var sb strings.Builder
		if err := syntax.NewPrinter().Print(&sb, n); err != nil {
			return "?"
		}
		return sb.String()
	}
	var stmts func(depth int, list []*syntax.Stmt)
	var node func(depth int, n syntax.Node)
	node = func(depth int, n syntax.Node) {
		switch n := n.(type) {
		case *syntax.Stmt:
			var flags []string
			if n.Negated {
				flags = append(flags, "negated")
			}
			if n.Background {
				flags = append(flags, "background")
			}
			if len(n.Redirs) > 0 {
				flags = append(flags, fmt.Sprintf("%d redirect(s)", len(n.Redirs)))
			}
			if n.Cmd == nil {
				line(depth, n.Pos(), "redirections only "+strings.Join(flags, ", "))
				return
			}
			if len(flags) > 0 {
				line(depth, n.Pos(), "statement ("+strings.Join(flags, ", ")+")")
				depth++
			}
			node(depth, n.Cmd)
		case *syntax.CallExpr:
			var words []string
			for _, a := range n.Assigns {
				words = append(words, src(a))
			}
			for _, w := range n.Args {
				words = append(words, src(w))
			}
			line(depth, n.Pos(), "command:", words...)
		case *syntax.BinaryCmd:
			line(depth, n.OpPos, n.Op.String())
			node(depth+1, n.X)
			node(depth+1, n.Y)
		case *syntax.Subshell:
			line(depth, n.Pos(), "subshell ( )")
			stmts(depth+1, n.Stmts)
		case *syntax.Block:
			line(depth, n.Pos(), "group { }")
			stmts(depth+1, n.Stmts)
		default:
			line(depth, n.Pos(), strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax."))
		}
	}
	stmts = func(depth int, list []*syntax.Stmt) {
		for _, s := range list {
			node(depth, s)
		}
	}
	if len(file.Stmts) > 1 {
		line(0, file.Stmts[0].Pos(), fmt.Sprintf("list of %d statements", len(file.Stmts)))
		stmts(1, file.Stmts)
	} else {
		stmts(0, file.Stmts)
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			line(0, n.Pos(), "command substitution:", src(n))
		case *syntax.ProcSubst:
			line(0, n.Pos(), "process substitution:", src(n))
		}
		return true
	})
	return lines, true
}
