package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Sketch is what a command string does, as written, whatever its shape:
// every simple command wherever it is nested (a subshell, a function, a
// substitution, a chain), its words after the one quote removal (unquote:
// the words the analysis reads, each expansion written as "$"), and the
// pipelines that connect them. It
// judges nothing; it is for warnings and displays (the danger lines,
// loopguard check). Analyze alone decides.
type Sketch struct {
	Calls [][]string
	// Pipelines are the indexes in Calls of the commands each pipeline
	// connects, left to right.
	Pipelines [][]int
}

// SketchOf sketches command; ok is false when bash could not parse it.
func SketchOf(command string) (s Sketch, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = Sketch{}, false
		}
	}()
	if len(command) > MaxCommandLen {
		return Sketch{}, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Sketch{}, false
	}
	return sketchFile(f), true
}

// sketchFile sketches a parsed command.
func sketchFile(f *syntax.File) (s Sketch) {
	var calls []*syntax.CallExpr
	pipes := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				calls = append(calls, n)
				ws := make([]string, len(n.Args))
				for i, w := range n.Args {
					ws[i], _ = unquote(w.Parts)
				}
				s.Calls = append(s.Calls, ws)
			}
		case *syntax.BinaryCmd:
			pipes = pipes || n.Op == syntax.Pipe || n.Op == syntax.PipeAll
		}
		return true
	})
	if !pipes {
		return s
	}
	index := make(map[*syntax.CallExpr]int, len(calls))
	for i, c := range calls {
		index[c] = i
	}
	// A pipeline is a tree of | and |& nodes: its leaves, left to right,
	// each a statement whose first simple command is the one that reads
	// or writes the pipe.
	var leaves func(st *syntax.Stmt) []*syntax.Stmt
	leaves = func(st *syntax.Stmt) []*syntax.Stmt {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			return append(leaves(b.X), leaves(b.Y)...)
		}
		return []*syntax.Stmt{st}
	}
	seen := map[*syntax.BinaryCmd]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) || seen[b] {
			return true
		}
		var line []int
		for _, leaf := range leaves(st) {
			if c := firstCall(leaf); c != nil {
				line = append(line, index[c])
			}
		}
		markPipes(st, seen)
		if len(line) > 1 {
			s.Pipelines = append(s.Pipelines, line)
		}
		return true
	})
	return s
}

// markPipes marks the pipe nodes of one pipeline, so that its inner nodes
// do not make pipelines of their own.
func markPipes(st *syntax.Stmt, seen map[*syntax.BinaryCmd]bool) {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		seen[b] = true
		markPipes(b.X, seen)
		markPipes(b.Y, seen)
	}
}

// firstCall is the first simple command of n, wherever it is nested.
func firstCall(n syntax.Node) *syntax.CallExpr {
	var found *syntax.CallExpr
	syntax.Walk(n, func(x syntax.Node) bool {
		if found != nil {
			return false
		}
		if c, ok := x.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			found = c
			return false
		}
		return true
	})
	return found
}
