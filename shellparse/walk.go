package shellparse

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
)

// walk is the package's one walk of a syntax tree: syntax.Walk's order and
// contract (f(node); when it returns true, the children, then f(nil)), but
// without the defer syntax.Walk runs for every statement, which makes its
// cost grow faster than the tree on a deep one (a 4,001-part pipeline took
// twenty times as long as a 1,001-part one). Every node costs one call, so
// a walk is linear in the tree.
func walk(node syntax.Node, f func(syntax.Node) bool) {
	if testWalkVisit != nil {
		testWalkVisit()
	}
	if !f(node) {
		return
	}
	if !walkCommand(node, f) && !walkWordPart(node, f) && !walkExpr(node, f) {
		panic(fmt.Sprintf("shellparse: walk: unexpected node type %T", node))
	}
	f(nil)
}

// walkCommand walks the children of a file, statement or command node
// (and of their assignments, redirections and case items), and reports
// whether node is one.
//
//go:noinline
func walkCommand(node syntax.Node, f func(syntax.Node) bool) bool {
	switch n := node.(type) {
	case *syntax.File:
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
	case *syntax.Comment:
	case *syntax.Stmt:
		// The comments before the statement's end, the command, its
		// redirections, then the comments after it.
		trailing := len(n.Comments)
		for i, c := range n.Comments {
			if !n.End().After(c.Pos()) {
				trailing = i
				break
			}
		}
		walkComments(n.Comments[:trailing], f)
		if n.Cmd != nil {
			walk(n.Cmd, f)
		}
		walkList(n.Redirs, f)
		walkComments(n.Comments[trailing:], f)
	case *syntax.Assign:
		walkNilable(n.Name, f)
		walkNilable(n.Value, f)
		walkNilable(n.Index, f)
		walkNilable(n.Array, f)
	case *syntax.Redirect:
		walkNilable(n.N, f)
		walk(n.Word, f)
		walkNilable(n.Hdoc, f)
	case *syntax.CallExpr:
		walkList(n.Assigns, f)
		walkList(n.Args, f)
	case *syntax.Subshell:
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
	case *syntax.Block:
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
	case *syntax.IfClause:
		walkList(n.Cond, f)
		walkComments(n.CondLast, f)
		walkList(n.Then, f)
		walkComments(n.ThenLast, f)
		walkComments(n.Last, f)
		walkNilable(n.Else, f)
	case *syntax.WhileClause:
		walkList(n.Cond, f)
		walkComments(n.CondLast, f)
		walkList(n.Do, f)
		walkComments(n.DoLast, f)
	case *syntax.ForClause:
		walk(n.Loop, f)
		walkList(n.Do, f)
		walkComments(n.DoLast, f)
	case *syntax.WordIter:
		walk(n.Name, f)
		walkList(n.Items, f)
	case *syntax.CStyleLoop:
		walkNilable(n.Init, f)
		walkNilable(n.Cond, f)
		walkNilable(n.Post, f)
	case *syntax.BinaryCmd:
		walk(n.X, f)
		walk(n.Y, f)
	case *syntax.FuncDecl:
		walkNilable(n.Name, f)
		walkList(n.Names, f)
		walk(n.Body, f)
	case *syntax.CaseClause:
		walk(n.Word, f)
		walkList(n.Items, f)
		walkComments(n.Last, f)
	case *syntax.CaseItem:
		leading := 0
		for leading < len(n.Comments) && !n.Comments[leading].Pos().After(n.Pos()) {
			leading++
		}
		walkComments(n.Comments[:leading], f)
		walkList(n.Patterns, f)
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
		walkComments(n.Comments[leading:], f)
	case *syntax.DeclClause:
		walkList(n.Args, f)
	case *syntax.TimeClause:
		walkNilable(n.Stmt, f)
	case *syntax.CoprocClause:
		walkNilable(n.Name, f)
		walk(n.Stmt, f)
	case *syntax.TestDecl:
		walk(n.Description, f)
		walk(n.Body, f)
	default:
		return false
	}
	return true
}

// walkWordPart walks the children of a word or word part (arrays
// included), and reports whether node is one.
//
//go:noinline
func walkWordPart(node syntax.Node, f func(syntax.Node) bool) bool {
	switch n := node.(type) {
	case *syntax.Word:
		walkList(n.Parts, f)
	case *syntax.Lit, *syntax.SglQuoted:
	case *syntax.DblQuoted:
		walkList(n.Parts, f)
	case *syntax.CmdSubst:
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
	case *syntax.ParamExp:
		walkNilable(n.Flags, f)
		walkNilable(n.Param, f)
		walkNilable(n.NestedParam, f)
		walkNilable(n.Index, f)
		if n.Slice != nil {
			walkNilable(n.Slice.Offset, f)
			walkNilable(n.Slice.Length, f)
		}
		if n.Repl != nil {
			walkNilable(n.Repl.Orig, f)
			walkNilable(n.Repl.With, f)
		}
		if n.Exp != nil {
			walkNilable(n.Exp.Word, f)
		}
	case *syntax.ArrayExpr:
		walkList(n.Elems, f)
		walkComments(n.Last, f)
	case *syntax.ArrayElem:
		leading := 0
		for leading < len(n.Comments) && !n.Comments[leading].Pos().After(n.Pos()) {
			leading++
		}
		walkComments(n.Comments[:leading], f)
		walkNilable(n.Index, f)
		walkNilable(n.Value, f)
		walkComments(n.Comments[leading:], f)
	case *syntax.ExtGlob:
		walk(n.Pattern, f)
	case *syntax.ProcSubst:
		walkList(n.Stmts, f)
		walkComments(n.Last, f)
	default:
		return false
	}
	return true
}

// walkExpr walks the children of an arithmetic or test expression (and of
// the commands that are one: ((...)), [[...]], let), and reports whether
// node is one.
//
//go:noinline
func walkExpr(node syntax.Node, f func(syntax.Node) bool) bool {
	switch n := node.(type) {
	case *syntax.ArithmExp:
		walk(n.X, f)
	case *syntax.ArithmCmd:
		walk(n.X, f)
	case *syntax.BinaryArithm:
		walk(n.X, f)
		walk(n.Y, f)
	case *syntax.BinaryTest:
		walk(n.X, f)
		walk(n.Y, f)
	case *syntax.UnaryArithm:
		walk(n.X, f)
	case *syntax.UnaryTest:
		walk(n.X, f)
	case *syntax.ParenArithm:
		walk(n.X, f)
	case *syntax.FlagsArithm:
		walk(n.Flags, f)
		walkNilable(n.X, f)
	case *syntax.ParenTest:
		walk(n.X, f)
	case *syntax.TestClause:
		walk(n.X, f)
	case *syntax.LetClause:
		walkList(n.Exprs, f)
	default:
		return false
	}
	return true
}

// testWalkVisit, when a test sets it, is called for every node walk
// visits: a count that grows with the tree, not the clock.
var testWalkVisit func()

// walkList walks each node of list. It is never inlined into walk, nor
// are walkComments and walkNilable: inlined, their locals made walk's frame
// 1 KB, and a command nested 8,192 levels deep grew the stack to 17 MB,
// copied at each doubling (130 ms of its first walk, 2 ms after). Apart,
// walk's frame is 64 bytes, and walkCommand's, the largest of the
// three it dispatches to (each a node kind, so that no function holds
// every case), 120.
//
//go:noinline
func walkList[N syntax.Node](list []N, f func(syntax.Node) bool) {
	for _, n := range list {
		walk(n, f)
	}
}

//go:noinline
func walkComments(list []syntax.Comment, f func(syntax.Node) bool) {
	for i := range list {
		walk(&list[i], f)
	}
}

// walkNilable walks node unless it is a nil pointer (a typed nil in an
// interface, as syntax.Walk checks it).
//
//go:noinline
func walkNilable[N interface {
	comparable
	syntax.Node
}](node N, f func(syntax.Node) bool) {
	var zero N
	if node != zero {
		walk(node, f)
	}
}
