package shellparse

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/loopguard/loopguard/policy"
	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandLen bounds the command string; longer input is Unparseable.
const MaxCommandLen = 64 << 10

const (
	// maxWords bounds the argv of a simple command after brace expansion.
	maxWords = 4096
	// maxNames bounds the distinct command names resolved for Executables.
	maxNames = 512
)

// verdictError carries a non-Simple verdict out of the walker.
type verdictError struct {
	verdict Verdict
	pos     syntax.Pos
	reason  string
}

func (e *verdictError) Error() string { return string(e.verdict) + ": " + e.reason }

func deny(v Verdict, pos syntax.Pos, format string, args ...any) *verdictError {
	return &verdictError{verdict: v, pos: pos, reason: fmt.Sprintf(format, args...)}
}

// Analyze classifies command, resolving command names against env. It never
// panics; any internal failure is Unparseable.
func Analyze(command string, env Env) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{
				Verdict:  Unparseable,
				Reason:   fmt.Sprintf("internal error in the analysis: %v", r),
				Warnings: res.Warnings,
			}
		}
	}()
	if len(command) > MaxCommandLen {
		return Result{Verdict: Unparseable, Reason: fmt.Sprintf("command is %d bytes, over the %d byte limit", len(command), MaxCommandLen)}
	}
	res.Warnings = scanChars(command)
	if !utf8.ValidString(command) {
		res.Verdict, res.Reason = Unparseable, "command is not valid UTF-8"
		return res
	}
	if i := strings.IndexByte(command, 0); i >= 0 {
		res.Verdict, res.Reason = Unparseable, fmt.Sprintf("command contains a NUL byte at offset %d", i)
		return res
	}
	if pos, why := controlChar(command); why != "" {
		res.Verdict, res.Reason, res.Pos = Unparseable, why, pos
		return res
	}
	if trail := len(command) - len(strings.TrimRight(command, `\`)); trail%2 == 1 {
		// The parser keeps it as a literal backslash; bash drops it.
		res.Verdict, res.Reason = Unparseable, "a backslash at the very end of the command: bash drops it, the parser keeps it"
		return res
	}
	a := newAnalyzer(env)
	warnings := res.Warnings
	res, res.Sketch = a.analyze(command)
	res.Warnings = warnings
	res.parsed = a.t
	return res
}

type analyzer struct {
	src      string // the command, for the few checks the tree cannot answer
	t        *tree
	env      Env
	trusted  []string // cleaned trusted dirs
	names    map[string]string
	resolved map[string]resolution
	// globDirs and globEntries count what filename expansion read.
	globDirs, globEntries int
}

func newAnalyzer(env Env) *analyzer {
	trusted := env.Trusted
	if trusted == nil {
		trusted = policy.DefaultTrusted
	}
	a := &analyzer{env: env, names: map[string]string{}, resolved: map[string]resolution{}}
	for _, d := range trusted {
		if d != "" && isAbs(d) {
			a.trusted = append(a.trusted, cleanPath(d))
		}
	}
	return a
}

// analyze analyses command and sketches it from the same parse (the
// sketch is nil when bash cannot parse it).
func (a *analyzer) analyze(command string) (Result, *Sketch) {
	a.src = command
	t, err := newTree(command)
	if err != nil {
		res := Result{Verdict: Unparseable, Reason: "bash syntax: " + err.Error()}
		var pe syntax.ParseError
		var le syntax.LangError
		var he *heredocError
		switch {
		case errors.As(err, &he):
			res.Reason = he.Error()
			res.Pos = posString(he.pos)
		case errors.As(err, &pe):
			res.Reason = "bash syntax: " + pe.Text
			res.Pos = posString(pe.Pos)
		case errors.As(err, &le):
			res.Pos = posString(le.Pos)
		}
		return res, nil
	}
	a.t = t
	sk := t.sketch()
	var res Result
	if err := a.collectNames(); err != nil {
		return a.fromError(err), &sk
	}
	sc, err := a.file()
	if err != nil {
		res = a.fromError(err)
		if sc != nil {
			res.Argv = sc.argv
		}
		if res.Verdict == Chained {
			var why error
			res.Parts, res.Ops, why = a.chain()
			if why != nil {
				// The operator alone is not why no grant can cover the
				// chain: say what keeps it from being judged part by part.
				if w := a.fromError(why).Reason; w != res.Reason {
					res.Reason += ", and the chain cannot be judged part by part: " + w
				}
			}
		}
		return res, &sk
	}
	// The name as expanded (a ~ prefix, say) maps to what runs.
	a.names[sc.argv[0].Value] = sc.executable
	res = Result{
		Verdict:    Simple,
		Argv:       sc.argv,
		Executable: sc.executable,
		Builtin:    sc.builtin,
		Assigns:    sc.assigns,
		Redirects:  sc.redirects,
		Plain:      sc.plain,
		Cwd:        a.env.Cwd,
	}
	res.Executables = a.names
	return res, &sk
}

func (a *analyzer) fromError(err error) Result {
	res := Result{Verdict: Unparseable, Reason: err.Error()}
	var ve *verdictError
	if errors.As(err, &ve) {
		res.Verdict, res.Reason = ve.verdict, ve.reason
		res.Pos = posString(ve.pos)
	}
	if len(a.names) > 0 {
		res.Executables = a.names
	}
	return res
}

func posString(p syntax.Pos) string {
	if !p.IsValid() {
		return ""
	}
	return fmt.Sprintf("%d:%d", p.Line(), p.Col())
}

// simpleCmd is the walker's result for one simple command.
type simpleCmd struct {
	argv       []Word
	executable string
	builtin    bool
	assigns    []Assign
	redirects  []Redirect
	plain      bool
}

// file checks that the tree is exactly one statement that is one call.
func (a *analyzer) file() (*simpleCmd, error) {
	f := a.t.file
	switch len(f.Stmts) {
	case 0:
		return nil, deny(Unparseable, syntax.Pos{}, "no command")
	case 1:
	default:
		return nil, deny(Chained, f.Stmts[1].Pos(), "more than one command (a list or several lines)")
	}
	if c := a.t.comment; c != nil {
		return nil, deny(Unparseable, c.Hash, "a comment (#): the parser and bash may end it in different places (the parser continues a comment ending in a backslash onto the next line, bash does not); remove it")
	}
	// Command and process substitution anywhere in the statement is a second
	// command, whatever else the statement is.
	if s := a.t.substs[0]; s != nil {
		return nil, substError(s)
	}
	return a.stmt(f.Stmts[0])
}

// stmt judges one statement of a command: a call is analysed, every other
// shape gets the verdict that says what it is. The statement holds no
// comment and no substitution (the caller checked).
func (a *analyzer) stmt(st *syntax.Stmt) (*simpleCmd, error) {
	switch {
	case st.Negated:
		return nil, deny(Chained, st.Pos(), "a pipeline negated with !")
	case st.Background:
		return nil, deny(Chained, st.Semicolon, "& runs the command in the background and goes on")
	case st.Coprocess || st.Disown:
		return nil, deny(Unparseable, st.Semicolon, "operator not supported in bash")
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		return a.call(cmd, st.Redirs)
	case *syntax.BinaryCmd:
		return nil, deny(Chained, cmd.OpPos, "%s joins two commands", cmd.Op)
	case *syntax.Subshell:
		return nil, deny(Chained, cmd.Pos(), "subshell ( ... )")
	case *syntax.Block:
		return nil, deny(Chained, cmd.Pos(), "command group { ...; }")
	case *syntax.IfClause:
		return nil, deny(Chained, cmd.Pos(), "if clause")
	case *syntax.WhileClause:
		return nil, deny(Chained, cmd.Pos(), "while or until loop")
	case *syntax.ForClause:
		return nil, deny(Chained, cmd.Pos(), "for or select loop")
	case *syntax.CaseClause:
		return nil, deny(Chained, cmd.Pos(), "case clause")
	case *syntax.FuncDecl:
		return nil, deny(Chained, cmd.Pos(), "function definition")
	case *syntax.CoprocClause:
		return nil, deny(Chained, cmd.Pos(), "coproc runs a command in the background")
	case *syntax.ArithmCmd:
		return nil, deny(Indirect, cmd.Pos(), "arithmetic command (( )) can run code through array subscripts")
	case *syntax.LetClause:
		return nil, deny(Indirect, cmd.Pos(), "let evaluates arithmetic that can run code through array subscripts")
	case *syntax.TestClause:
		return nil, deny(Indirect, cmd.Pos(), "[[ ]] evaluates arithmetic and -v subscripts that can run code")
	case *syntax.DeclClause:
		return nil, deny(Indirect, cmd.Pos(), "%s sets shell variables or attributes", cmd.Variant.Value)
	case *syntax.TimeClause:
		return nil, deny(Indirect, cmd.Pos(), "time runs another command")
	case nil:
		return nil, deny(Indirect, st.Pos(), "redirection without a command")
	default:
		return nil, deny(Unparseable, st.Pos(), "unrecognised command node %T", cmd)
	}
}

// controlChar finds the first C0 control character other than tab and
// newline, or DEL, and says why it makes the command unparseable: bash and
// mvdan.cc/sh disagree on some of them (a carriage return is a blank to the
// parser and a word character to bash, so "git status\r#; id" is one
// command to the parser and two words and a comment... to bash), and no
// everyday command needs one written raw ($'\r' spells it).
func controlChar(s string) (pos, why string) {
	line, col := 1, 1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			line, col = line+1, 1
			continue
		case c == '\t' || (c >= 0x20 && c != 0x7f):
		default:
			name := controlNames[c]
			if name == "" {
				name = "control character"
			}
			return fmt.Sprintf("%d:%d", line, col), fmt.Sprintf("a raw control character U+%04X (%s): bash and the parser may read it differently (a carriage return is a blank to the parser, a word character to bash); write it as $'\\x%02x' if it is meant", c, name, c)
		}
		col++
	}
	return "", ""
}

var controlNames = map[byte]string{'\r': "carriage return", '\v': "vertical tab", '\f': "form feed",
	0x1b: "escape", 0x08: "backspace", 0x7f: "delete", 0x07: "bell"}

// substError is the Chained verdict for a command or process
// substitution (the tree found the first of each statement, once).
func substError(n syntax.Node) error {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		if n.Backquotes {
			return deny(Chained, n.Pos(), "backtick command substitution runs another command")
		}
		return deny(Chained, n.Pos(), "command substitution $( ) runs another command")
	default:
		return deny(Chained, n.Pos(), "process substitution runs another command")
	}
}

// collectNames records every literal command name in the tree, with its
// resolution, for Result.Executables.
func (a *analyzer) collectNames() error {
	var err error
	add := func(name string) {
		if _, ok := a.names[name]; ok || err != nil {
			return
		}
		if len(a.names) >= maxNames {
			err = deny(Unparseable, syntax.Pos{}, "more than %d distinct command names", maxNames)
			return
		}
		a.names[name] = a.resolveForRecord(name)
	}
	for _, n := range a.t.named {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if s, ok := plainLiteral(n.Args[0]); ok && s != "" {
				add(s)
			}
		case *syntax.DeclClause:
			add(n.Variant.Value)
		case *syntax.LetClause:
			add("let")
		case *syntax.TimeClause:
			add("time")
		}
		if err != nil {
			break
		}
	}
	return err
}

// resolveForRecord resolves name the way bash would, for the record only:
// builtins and names that do not resolve map to "".
func (a *analyzer) resolveForRecord(name string) string {
	if !strings.Contains(name, "/") {
		if bashBuiltins[name] {
			return ""
		}
		r := a.lookPath(name)
		return r.resolved
	}
	p := name
	if !isAbs(p) {
		if a.env.Cwd == "" {
			return ""
		}
		p = joinPath(a.env.Cwd, p)
	}
	if !isExecutableFile(p) {
		return ""
	}
	return evalSymlinks(p)
}
