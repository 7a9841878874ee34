package shellparse

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The words of a scope's Bash rule (Bash(go test *)) are read with the same
// model of the language as the commands they cover: this parser, and the
// one $'...' decoder. Package scope gives the words their meaning.

// RuleWord is one word of a rule: literal pieces separated by the rule's
// wildcard, an unquoted *. A literal word has one piece; the whole-word
// wildcard has two empty pieces.
type RuleWord struct {
	Lits []string
	Off  int // byte offset in the rule's text
}

// RuleRedirect is a redirection a rule names: the operator, the descriptor
// as written ("" when none) and a literal target.
type RuleRedirect struct {
	Op, Fd, Target string
	Off            int
}

// RuleAssign is a NAME=value prefix of a rule, its value literal.
type RuleAssign struct {
	Name, Value string
	Off         int
}

// RuleCommand is a rule's text read as one simple command.
type RuleCommand struct {
	Assigns   []RuleAssign
	Words     []RuleWord
	Redirects []RuleRedirect
}

// RuleError says why a rule's text is not one simple command of literal
// words and wildcards, and where.
type RuleError struct {
	Off int
	Msg string
}

func (e *RuleError) Error() string { return e.Msg }

func ruleErr(off int, format string, args ...any) *RuleError {
	return &RuleError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// ruleRedirOps are the redirections a rule may name.
var ruleRedirOps = map[syntax.RedirOperator]string{
	syntax.RdrOut: ">", syntax.AppOut: ">>", syntax.RdrIn: "<", syntax.RdrInOut: "<>", syntax.DplIn: "<&",
	syntax.DplOut: ">&", syntax.RdrClob: ">|", syntax.RdrAll: "&>", syntax.AppAll: "&>>",
}

// ParseRuleCommand reads text, a rule's specifier, as one simple command
// with bash's own quoting: quote removal as bash does it, $'...' decoded
// as the analysis decodes it, an unquoted * a wildcard, and every other
// expansion (parameters, commands, arithmetic, braces, tilde, other glob
// characters, extended globs), comment, list, pipe or compound command
// refused.
func ParseRuleCommand(text string) (RuleCommand, *RuleError) {
	f, err := parse(text)
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return RuleCommand{}, ruleErr(int(pe.Pos.Offset()), "shell syntax: %s", pe.Text)
		}
		return RuleCommand{}, ruleErr(0, "shell syntax: %v", err)
	}
	if len(f.Last) > 0 {
		return RuleCommand{}, ruleErr(int(f.Last[0].Hash.Offset()), "comments are not allowed in a rule")
	}
	if len(f.Stmts) != 1 {
		if len(f.Stmts) == 0 {
			return RuleCommand{}, ruleErr(0, "no command")
		}
		pos := f.Stmts[1].Pos()
		if f.Stmts[0].Semicolon.IsValid() {
			pos = f.Stmts[0].Semicolon
		}
		return RuleCommand{}, ruleErr(int(pos.Offset()), "a rule is one simple command; chained commands need exact approvals")
	}
	st := f.Stmts[0]
	switch {
	case len(st.Comments) > 0:
		return RuleCommand{}, ruleErr(int(st.Comments[0].Hash.Offset()), "comments are not allowed in a rule")
	case st.Negated:
		return RuleCommand{}, ruleErr(int(st.Pos().Offset()), "negated commands (!) are not allowed in a rule")
	case st.Background || st.Coprocess || st.Disown:
		return RuleCommand{}, ruleErr(int(st.Semicolon.Offset()), "background commands are not allowed in a rule")
	case st.Semicolon.IsValid():
		return RuleCommand{}, ruleErr(int(st.Semicolon.Offset()), "a rule is one simple command; remove the operator")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Cmd == nil {
		return RuleCommand{}, ruleErr(int(st.Pos().Offset()), "a rule is one simple command (no pipes, lists, subshells, groups, loops or keywords)")
	}
	var rc RuleCommand
	for _, as := range call.Assigns {
		off := int(as.Pos().Offset())
		if as.Append || as.Naked || as.Index != nil || as.Array != nil {
			return RuleCommand{}, ruleErr(off, "only plain NAME=value assignments are allowed in a rule")
		}
		val := RuleWord{Lits: []string{""}}
		if as.Value != nil {
			v, re := ruleWord(as.Value)
			if re != nil {
				return RuleCommand{}, re
			}
			val = v
		}
		if len(val.Lits) != 1 {
			return RuleCommand{}, ruleErr(off, "an assignment value in a rule must be literal")
		}
		rc.Assigns = append(rc.Assigns, RuleAssign{Name: as.Name.Value, Value: val.Lits[0], Off: off})
	}
	for _, w := range call.Args {
		rw, re := ruleWord(w)
		if re != nil {
			return RuleCommand{}, re
		}
		rc.Words = append(rc.Words, rw)
	}
	for _, rd := range st.Redirs {
		r, re := ruleRedirect(rd)
		if re != nil {
			return RuleCommand{}, re
		}
		rc.Redirects = append(rc.Redirects, r)
	}
	return rc, nil
}

func ruleRedirect(rd *syntax.Redirect) (RuleRedirect, *RuleError) {
	off := int(rd.Pos().Offset())
	op, ok := ruleRedirOps[rd.Op]
	if !ok || rd.Hdoc != nil {
		return RuleRedirect{}, ruleErr(off, "redirection %q is not allowed in a rule", rd.Op.String())
	}
	fd := ""
	if rd.N != nil {
		fd = rd.N.Value
		if fd == "" || strings.Trim(fd, "0123456789") != "" {
			return RuleRedirect{}, ruleErr(off, "redirection to a named descriptor is not allowed in a rule")
		}
	}
	w, re := ruleWord(rd.Word)
	if re != nil {
		return RuleRedirect{}, re
	}
	if len(w.Lits) != 1 || w.Lits[0] == "" {
		return RuleRedirect{}, ruleErr(int(rd.Word.Pos().Offset()), "a redirection target in a rule must be a literal, non-empty word")
	}
	return RuleRedirect{Op: op, Fd: fd, Target: w.Lits[0], Off: off}, nil
}

// ruleWord turns a parsed word into literal pieces and wildcards: the word
// cut at each unquoted *, each piece read by the one quote removal
// (unquote).
func ruleWord(w *syntax.Word) (RuleWord, *RuleError) {
	var piece []syntax.WordPart // the parts of the piece being read
	var lits []string
	for _, part := range w.Parts {
		off := int(part.Pos().Offset())
		switch x := part.(type) {
		case *syntax.Lit:
			v, from := x.Value, 0
			for j := 0; j < len(v); j++ {
				switch c := v[j]; c {
				case '\\':
					if j+1 == len(v) {
						return RuleWord{}, ruleErr(off+j, "trailing backslash")
					}
					j++
				case '*':
					piece = append(piece, &syntax.Lit{Value: v[from:j]})
					s, _ := unquote(piece)
					lits = append(lits, s)
					piece, from = nil, j+1
				case '?', '[', ']', '{', '}':
					return RuleWord{}, ruleErr(off+j, "unquoted %q: only * is a wildcard in a rule; quote it to mean the character", c)
				case '~':
					if j == 0 && x == w.Parts[0] || j > 0 && (v[j-1] == '=' || v[j-1] == ':') {
						return RuleWord{}, ruleErr(off+j, "tilde expansion is not allowed in a rule; quote ~ or write the path")
					}
				}
			}
			piece = append(piece, &syntax.Lit{Value: v[from:]})
		case *syntax.SglQuoted:
			if s, literal := unquote([]syntax.WordPart{x}); !literal || strings.IndexByte(s, 0) >= 0 {
				return RuleWord{}, ruleErr(off, "invalid $'...' string (\\c, \\x{...}, NUL or an invalid code point: write the character itself)")
			}
			piece = append(piece, x)
		case *syntax.DblQuoted:
			if x.Dollar {
				return RuleWord{}, ruleErr(off, "$\"...\" strings are not allowed in a rule")
			}
			for _, dp := range x.Parts {
				if _, ok := dp.(*syntax.Lit); !ok {
					return RuleWord{}, ruleErr(int(dp.Pos().Offset()), "expansions are not allowed in a rule; rules match literal words")
				}
			}
			piece = append(piece, x)
		default:
			return RuleWord{}, ruleErr(off, "expansions are not allowed in a rule; rules match literal words")
		}
	}
	s, _ := unquote(piece)
	return RuleWord{Lits: append(lits, s), Off: int(w.Pos().Offset())}, nil
}
