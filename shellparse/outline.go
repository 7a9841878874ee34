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
	t, err := newTree(command)
	if err != nil {
		return nil, false
	}
	return t.outline(), true
}

// Outline is the outline of the command r analysed, from the parse the
// analysis read (Outline(command) without parsing again); ok is false when
// bash could not parse it.
func (r *Result) Outline() (lines []OutlineLine, ok bool) {
	defer func() {
		if recover() != nil {
			lines, ok = nil, false
		}
	}()
	if r.parsed == nil {
		return nil, false
	}
	return r.parsed.outline(), true
}

// outlinePrintBudget is how many times the command's length the outline
// prints before it cuts the rest from the text as written.
const outlinePrintBudget = 4

// outline is the tree's Outline, from one walk: the statements' lines as
// the walk meets them, then the substitutions' lines in the same order.
func (t *tree) outline() []OutlineLine {
	var lines, substs []OutlineLine
	line := func(to *[]OutlineLine, depth int, pos syntax.Pos, label string, source ...string) {
		*to = append(*to, OutlineLine{Depth: depth, Line: pos.Line(), Col: pos.Col(), Label: label, Source: source})
	}
	pr := syntax.NewPrinter()
	// A node's source is printed while what the outline has printed is
	// within a budget of a few times the command; past it, the node's
	// source is cut from the text as written. Each word and substitution
	// is printed whole, and nested substitutions hold one another: printed
	// each, $($($(...))) costs the square of its depth.
	budget := outlinePrintBudget * (len(t.src) + 1)
	src := func(n syntax.Node) string {
		from, to := n.Pos(), n.End()
		size := int(to.Offset()) - int(from.Offset())
		if from.IsValid() && to.IsValid() && size >= 0 && int(to.Offset()) <= len(t.src) {
			if budget -= size; budget < 0 {
				return t.src[from.Offset():to.Offset()]
			}
		}
		var sb strings.Builder
		if err := pr.Print(&sb, n); err != nil {
			return "?"
		}
		return sb.String()
	}
	// frame is what a node's children need to know of it: whether they
	// are statements or commands of the outline (a statement's command,
	// an operator's two sides, the statements of a subshell or group),
	// and the depth they are listed at.
	type frame struct {
		nested bool
		depth  int
	}
	root := frame{nested: true}
	if len(t.file.Stmts) > 1 {
		line(&lines, 0, t.file.Stmts[0].Pos(), fmt.Sprintf("list of %d statements", len(t.file.Stmts)))
		root.depth = 1
	}
	stack := []frame{root}
	walk(t.file, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		parent := stack[len(stack)-1]
		fr := frame{}
		switch n := n.(type) {
		case *syntax.File:
			fr = root
		case *syntax.CmdSubst:
			line(&substs, 0, n.Pos(), "command substitution:", src(n))
		case *syntax.ProcSubst:
			line(&substs, 0, n.Pos(), "process substitution:", src(n))
		}
		_, isStmt := n.(*syntax.Stmt)
		_, isCmd := n.(syntax.Command)
		if parent.nested && (isStmt || isCmd) {
			depth := parent.depth
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
					line(&lines, depth, n.Pos(), "redirections only "+strings.Join(flags, ", "))
					break
				}
				if len(flags) > 0 {
					line(&lines, depth, n.Pos(), "statement ("+strings.Join(flags, ", ")+")")
					depth++
				}
				fr = frame{nested: true, depth: depth}
			case *syntax.CallExpr:
				var words []string
				for _, a := range n.Assigns {
					words = append(words, src(a))
				}
				for _, w := range n.Args {
					words = append(words, src(w))
				}
				line(&lines, depth, n.Pos(), "command:", words...)
			case *syntax.BinaryCmd:
				line(&lines, depth, n.OpPos, n.Op.String())
				fr = frame{nested: true, depth: depth + 1}
			case *syntax.Subshell:
				line(&lines, depth, n.Pos(), "subshell ( )")
				fr = frame{nested: true, depth: depth + 1}
			case *syntax.Block:
				line(&lines, depth, n.Pos(), "group { }")
				fr = frame{nested: true, depth: depth + 1}
			default:
				line(&lines, depth, n.Pos(), strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax."))
			}
		}
		stack = append(stack, fr)
		return true
	})
	return append(lines, substs...)
}
