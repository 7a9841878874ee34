package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parse is where the package parses Bash (parseBash makes its one
// parser): the bash dialect, comments kept (the analysis refuses a command
// that has one; the views leave them out).
//
// A parse whose here-document bash may end elsewhere is an error too
// (joinedHeredoc): every view reads one parse, so none shows the parser's
// reading of it.
func parse(src string) (*syntax.File, error) {
	if testParse != nil {
		testParse()
	}
	f, err := parseBash(src)
	if err != nil {
		return nil, err
	}
	if err := joinedHeredoc(src, f); err != nil {
		return nil, err
	}
	return f, nil
}

// parseBash is mvdan.cc/sh's reading of src alone, which parse checks
// (the one place the package makes a parser).
func parseBash(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
}

// heredocError is a here-document bash and the parser end in different
// places.
type heredocError struct{ pos syntax.Pos }

func (e *heredocError) Error() string {
	return "a here-document line ends in a backslash: bash joins it with the next line before it looks for the delimiter, so where the document ends is not what it seems"
}

// joinedHeredoc finds a here-document with a line that ends in a
// backslash bash joins with the next one. In the body of a here-document
// whose delimiter is not quoted, bash removes each backslash-newline
// before it compares a line with the delimiter, so EO\<newline>F ends
// the document at EOF and abc\<newline>EOF does not; mvdan.cc/sh never
// ends it on a line that follows an escaped newline, and so reads on (or
// stops) where bash does not. A line ending in an even run of
// backslashes (an escaped backslash) is not joined, nor is any line of a
// document whose delimiter is quoted. Inside a backquoted substitution
// bash takes \\ to \ and removes backslash-newlines before the
// document is read, whatever its quoting: there any backslash at a line's
// end is refused.
func joinedHeredoc(src string, f *syntax.File) error {
	var found error
	var backquotes []bool // per node on the walk's path: a backquoted substitution
	inBackquotes := 0
	walk(f, func(n syntax.Node) bool {
		if found != nil {
			return false
		}
		if n == nil {
			if backquotes[len(backquotes)-1] {
				inBackquotes--
			}
			backquotes = backquotes[:len(backquotes)-1]
			return true
		}
		cs, ok := n.(*syntax.CmdSubst)
		bq := ok && cs.Backquotes
		if bq {
			inBackquotes++
		}
		backquotes = append(backquotes, bq)
		r, ok := n.(*syntax.Redirect)
		if !ok || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || r.Hdoc == nil {
			return true
		}
		if inBackquotes == 0 && quotedWord(r.Word) {
			return true
		}
		if lineEndsInBackslash(src, r.Hdoc, inBackquotes > 0) {
			found = &heredocError{pos: r.OpPos}
		}
		return true
	})
	return found
}

// quotedWord reports a here-document delimiter with a quote or a
// backslash in it: bash then leaves the body as written.
func quotedWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// lineEndsInBackslash reports a line of the body (from its start to the
// end of the line the parser ends it on, its delimiter's) that ends in an
// odd run of backslashes, or, when anyRun is true, in any backslash.
func lineEndsInBackslash(src string, body *syntax.Word, anyRun bool) bool {
	start, end := int(body.Pos().Offset()), int(body.End().Offset())
	if start > len(src) {
		return false
	}
	if end < start || end > len(src) {
		end = len(src)
	}
	if i := strings.IndexByte(src[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(src)
	}
	for i := start; i < end; i++ {
		if src[i] != '\n' {
			continue
		}
		run := 0
		for j := i - 1; j >= start && src[j] == '\\'; j-- {
			run++
		}
		if run%2 == 1 || (anyRun && run > 0) {
			return true
		}
	}
	return false
}

// testParse, when a test sets it, is called on every parse.
var testParse func()

// tree is one parse of a command string and what one walk of it found.
// Every view of a command (the analysis, the sketch the danger lines read,
// the shape, the split, the outline) is read from a tree, and every word
// in them goes through the one quote removal (unquote), so they cannot
// read the same text differently. Nothing changes the tree once it is
// built: the analysis expands copies of its words.
type tree struct {
	src  string
	file *syntax.File
	// comment is the first comment in walk order, nil when none.
	comment *syntax.Comment
	// substs holds, for each statement of the file, its first command or
	// process substitution in walk order (nil when it has none).
	substs []syntax.Node
	// calls are the simple commands with at least one word, wherever
	// nested, in walk order: the sketch's Calls.
	calls []*syntax.CallExpr
	// named are the nodes that name a command, in walk order: the calls,
	// declare and its variants, let and time.
	named []syntax.Node
	// pipelines are, for every pipeline not inside another one (in walk
	// order), the indexes in calls of the first call of each of its parts.
	pipelines [][]int
	// writes are the redirections that write a file, wherever nested, in
	// walk order: the sketch's Writes.
	writes []*syntax.Redirect
}

// newTree parses src and walks it once.
func newTree(src string) (*tree, error) {
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	t := &tree{src: src, file: f, substs: make([]syntax.Node, len(f.Stmts))}
	// frame is what a node's children need to know of it: the pipeline
	// it belongs to (-1 for none), whether it is a pipe operator (its
	// two statements are parts of that pipeline), or, for a part, how
	// many calls came before it.
	type frame struct {
		pipe    int
		pipeOp  bool
		part    bool
		callsAt int
	}
	stack := []frame{{pipe: -1}}
	top := 0
	visit := func(n syntax.Node) bool {
		if n == nil {
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if fr.part && len(t.calls) > fr.callsAt {
				t.pipelines[fr.pipe] = append(t.pipelines[fr.pipe], fr.callsAt)
			}
			return true
		}
		parent := stack[len(stack)-1]
		fr := frame{pipe: -1}
		switch n := n.(type) {
		case *syntax.Comment:
			if t.comment == nil {
				t.comment = n
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			if top < len(t.substs) && t.substs[top] == nil {
				t.substs[top] = n
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				t.calls = append(t.calls, n)
				t.named = append(t.named, n)
			}
		case *syntax.DeclClause, *syntax.LetClause, *syntax.TimeClause:
			t.named = append(t.named, n)
		case *syntax.Redirect:
			if writesFile(n) {
				t.writes = append(t.writes, n)
			}
		case *syntax.Stmt:
			p := -1
			if parent.pipeOp {
				p = parent.pipe
			}
			switch {
			case isPipe(n.Cmd):
				if p < 0 {
					p = len(t.pipelines)
					t.pipelines = append(t.pipelines, nil)
				}
				fr.pipe = p
			case p >= 0:
				fr = frame{pipe: p, part: true, callsAt: len(t.calls)}
			}
		case *syntax.BinaryCmd:
			if isPipe(n) {
				fr = frame{pipe: parent.pipe, pipeOp: true}
			}
		}
		stack = append(stack, fr)
		return true
	}
	for i, st := range f.Stmts {
		top = i
		walk(st, visit)
	}
	top = len(f.Stmts)
	walkComments(f.Last, visit)
	// A pipeline whose parts hold fewer than two calls connects nothing
	// the sketch lists.
	lines := t.pipelines[:0]
	for _, l := range t.pipelines {
		if len(l) > 1 {
			lines = append(lines, l)
		}
	}
	t.pipelines = nil
	if len(lines) > 0 {
		t.pipelines = lines
	}
	return t, nil
}

// writesFile reports a redirection that opens a file for writing: >, >>,
// >|, &>, &>>, <>, and >& with a word that is not a descriptor.
func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
		return true
	case syntax.DplOut:
		w, _ := unquote(r.Word.Parts)
		return r.N == nil && w != "-" && !digits(w)
	}
	return false
}

// isPipe reports a | or |& operator.
func isPipe(c syntax.Command) bool {
	b, ok := c.(*syntax.BinaryCmd)
	return ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll)
}

// subst is the first command or process substitution of the tree, nil when
// there is none.
func (t *tree) subst() syntax.Node {
	for _, s := range t.substs {
		if s != nil {
			return s
		}
	}
	return nil
}

// sketch is the tree's Sketch: every call's words after quote removal.
func (t *tree) sketch() Sketch {
	s := Sketch{Pipelines: t.pipelines}
	for _, c := range t.calls {
		ws := make([]string, len(c.Args))
		for i, w := range c.Args {
			ws[i], _ = unquote(w.Parts)
		}
		s.Calls = append(s.Calls, ws)
	}
	for _, r := range t.writes {
		w, _ := unquote(r.Word.Parts)
		s.Writes = append(s.Writes, w)
	}
	return s
}
