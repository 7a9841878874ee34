package shellparse

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/loopguard/loopguard/internal/testknobs"
	"github.com/loopguard/loopguard/policy"
)

// checkParts rejects word parts whose value is only known at run time.
// Command and process substitution were rejected before (Chained).
func checkParts(parts []syntax.WordPart) error {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if p.Dollar {
				return deny(Indirect, p.Pos(), `$"..." is translated through the locale at run time`)
			}
			if err := checkParts(p.Parts); err != nil {
				return err
			}
		case *syntax.ParamExp:
			name := ""
			if p.Param != nil {
				name = p.Param.Value
			}
			return deny(Indirect, p.Pos(), "parameter expansion of %q cannot be resolved to a literal", "$"+name)
		case *syntax.ArithmExp:
			return deny(Indirect, p.Pos(), "arithmetic expansion $(( )) cannot be resolved to a literal and can run code")
		case *syntax.ExtGlob:
			return deny(Indirect, p.Pos(), "extended glob pattern")
		case *syntax.CmdSubst:
			return deny(Chained, p.Pos(), "command substitution runs another command")
		case *syntax.ProcSubst:
			return deny(Chained, p.Pos(), "process substitution runs another command")
		default:
			return deny(Unparseable, p.Pos(), "unrecognised word part %T", p)
		}
	}
	return nil
}

// plainLiteral returns the value of a word made only of literal and quoted
// parts, without brace, tilde or glob handling; ok is false otherwise.
func plainLiteral(w *syntax.Word) (string, bool) {
	if checkParts(w.Parts) != nil {
		return "", false
	}
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
		return "", false
	}
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if syntax.SplitBraces(cp) {
		// The command name is the first word brace expansion yields.
		for bw, err := range expand.BracesSeq(nil, cp) {
			if err != nil {
				return "", false
			}
			v, ok := unquote(mergeLits(bw.Parts))
			if !ok {
				return "", false
			}
			if v != "" {
				return v, true
			}
		}
		return "", false
	}
	return unquote(w.Parts)
}

// unquote is the value of a word's parts after bash's quote removal, the
// package's one: the analysis, the sketch (and so the danger lines), the
// shape and the rules all read words with it. Outside quotes a backslash
// quotes the next character (backslash-newline is a line continuation);
// '...' is its text; in "..." a backslash quotes only $ ` " \ and a
// newline; $'...' is decoded as bash decodes it. It expands nothing: a
// tilde, braces and glob characters stay as they are written (the analysis
// expands them on top of it), as mvdan.cc/sh's expand.Literal reads a
// literal word.
//
// literal is false when a part is not text known before the command runs:
// a parameter, command, arithmetic or process substitution, an extended
// glob (each written "$"), $"..." (translated at run time; its text is
// written), or a $'...' escape not decoded exactly (\c, \x{...}, NUL or an
// invalid code point; written "$").
func unquote(parts []syntax.WordPart) (value string, literal bool) {
	var sb strings.Builder
	literal = appendUnquoted(&sb, parts, false)
	return sb.String(), literal
}

// appendUnquoted is unquote writing into sb.
func appendUnquoted(sb *strings.Builder, parts []syntax.WordPart, inDouble bool) bool {
	literal := true
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if inDouble {
				unescapeDouble(sb, p.Value)
			} else {
				unescapeBare(sb, p.Value)
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				sb.WriteString(p.Value)
				continue
			}
			s, ok := decodeANSIC(p.Value)
			if !ok {
				sb.WriteByte('$')
				literal = false
				continue
			}
			sb.WriteString(s)
		case *syntax.DblQuoted:
			if !appendUnquoted(sb, p.Parts, true) || p.Dollar {
				literal = false
			}
		default:
			sb.WriteByte('$')
			literal = false
		}
	}
	return literal
}

// appendPattern writes parts as a glob pattern for bash's filename
// expansion: unquoted literals as written (their backslashes quote the next
// character), quoted text with every pattern character escaped. Only called
// after appendUnquoted accepted the same parts.
func appendPattern(sb *strings.Builder, parts []syntax.WordPart, inDouble bool) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if inDouble {
				var t strings.Builder
				unescapeDouble(&t, p.Value)
				escapeGlob(sb, t.String())
			} else {
				rawPattern(sb, p.Value)
			}
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v, _ = decodeANSIC(v)
			}
			escapeGlob(sb, v)
		case *syntax.DblQuoted:
			appendPattern(sb, p.Parts, true)
		}
	}
}

// rawPattern writes an unquoted literal as a pattern: as written, without
// its line continuations (backslash-newline).
func rawPattern(sb *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] != '\n' {
				sb.WriteByte('\\')
				sb.WriteByte(s[i+1])
			}
			i++
			continue
		}
		sb.WriteByte(s[i])
	}
}

// escapeGlob writes s as a pattern that matches s itself.
func escapeGlob(sb *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
}

// unescapeBare removes the quoting backslashes of an unquoted literal.
func unescapeBare(sb *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			sb.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			sb.WriteByte('\\')
			continue
		}
		i++
		if s[i] != '\n' { // backslash-newline is a line continuation
			sb.WriteByte(s[i])
		}
	}
}

// unescapeDouble removes the backslashes that quote inside "...".
func unescapeDouble(sb *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
}

// decodeANSIC decodes the body of $'...' as bash does. It reports false for
// escapes whose result it does not reproduce exactly (\c, \x{...}, NUL,
// values that are not a Unicode scalar).
func decodeANSIC(s string) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '\\', '\'', '"', '?':
			sb.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			if n == 0 || n > 0xff {
				return "", false
			}
			sb.WriteByte(byte(n))
			i = j - 1
		case 'x', 'u', 'U':
			if e == 'x' && i+1 < len(s) && s[i+1] == '{' && !testknobs.On(testknobs.LegacyBraceEscape) {
				// bash 5.2 reads \x{HH...}: any number of hex digits,
				// the low byte kept, a NUL cutting the word. Refused
				// rather than reproduced (TestANSICBraceEscape).
				return "", false
			}
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+maxDigits && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 { // no digits: bash keeps the escape as written
				sb.WriteByte('\\')
				sb.WriteByte(e)
				continue
			}
			if n == 0 {
				return "", false
			}
			if e == 'x' {
				sb.WriteByte(byte(n))
			} else {
				if n > utf8.MaxRune || (n >= 0xd800 && n <= 0xdfff) {
					return "", false
				}
				sb.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			return "", false
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	return sb.String(), true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}

// unquotedAny reports whether an unquoted literal of parts has a character
// of chars that no backslash quotes.
func unquotedAny(parts []syntax.WordPart, chars string) bool {
	for _, p := range parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		for i := 0; i < len(lit.Value); i++ {
			switch c := lit.Value[i]; {
			case c == '\\':
				i++
			case strings.IndexByte(chars, c) >= 0:
				return true
			}
		}
	}
	return false
}

// hasGlob reports whether an unquoted literal has an unescaped glob
// character. A lone "[" (the test command) is not a pattern.
func hasGlob(s string) bool {
	if s == "[" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// assignLike reports whether s starts like an assignment (policy.Assignment;
// TestAssignLikeMatchesRegexp holds it to ^[A-Za-z_][A-Za-z0-9_]*\+?=).
func assignLike(s string) bool {
	_, _, ok := policy.Assignment(s)
	return ok
}

// expandWord performs what bash does to a literal word: brace expansion,
// tilde expansion, quote removal. It returns zero or more words. It expands
// a copy: the tree stays as parsed for the other views.
func (a *analyzer) expandWord(w *syntax.Word, budget *int) ([]Word, bool, error) {
	if err := checkParts(w.Parts); err != nil {
		return nil, false, err
	}
	wpos := w.Pos()
	cp := *w
	w = &cp
	braced := syntax.SplitBraces(w)
	if strayBrace(w.Parts) {
		return nil, braced, deny(Unparseable, wpos, "a literal } followed by a comma: bash may read it as text inside a larger brace expansion ({0},} is one word to the parser, the word 0} to bash); quote the braces")
	}
	if !braced {
		*budget--
		if *budget < 0 {
			return nil, false, deny(Unparseable, wpos, "more than %d words after brace expansion", maxWords)
		}
		word, keep, err := a.expandOne(w.Parts, wpos)
		if err != nil || !keep {
			return nil, false, err
		}
		return []Word{word}, false, nil
	}
	if err := checkCharRanges(w.Parts, wpos); err != nil {
		return nil, true, err
	}
	// Bound the expansion before generating it: the generator's cost grows
	// with the number of brace expressions times the number of words.
	nodes := 0
	if n := braceCount(w.Parts, &nodes); n > *budget || nodes > maxBraceNodes {
		return nil, true, deny(Unparseable, wpos, "brace expansion is too large (%d brace expressions)", nodes)
	}
	var out []Word
	var failure error
	for bw, err := range expand.BracesSeq(nil, w) {
		if err != nil {
			return nil, braced, deny(Unparseable, wpos, "brace expansion is too large: %v", err)
		}
		*budget--
		if *budget < 0 {
			return nil, braced, deny(Unparseable, wpos, "more than %d words after brace expansion", maxWords)
		}
		word, _, err := a.expandOne(mergeLits(bw.Parts), wpos)
		if err != nil {
			failure = err
			break
		}
		if word.Value == "" {
			// bash drops some empty results and keeps others ({,} vs {,,}).
			failure = deny(Unparseable, wpos, "brace expansion yields an empty word, which bash keeps or drops case by case")
			break
		}
		out = append(out, word)
	}
	return out, braced, failure
}

// strayBrace reports an unquoted, unescaped } left literal by the
// parser's brace splitting and followed, later in the word, by an unquoted
// comma: bash then takes the } as text inside a larger brace expression
// ("{0},}" is the words "0}" and "" to bash, one word "{0},}" to the
// parser). A lone literal pair (HEAD@{1}, find's {}) is read alike.
func strayBrace(parts []syntax.WordPart) bool {
	closed, found := false, false
	var scan func(parts []syntax.WordPart)
	scan = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch x := p.(type) {
			case *syntax.Lit:
				for i := 0; i < len(x.Value) && !found; i++ {
					switch x.Value[i] {
					case '\\':
						i++
					case '}':
						closed = true
					case ',':
						found = found || closed
					}
				}
			case *syntax.BraceExp:
				for _, e := range x.Elems {
					scan(e.Parts)
				}
			}
		}
	}
	scan(parts)
	return found
}

// maxBraceNodes bounds the brace expressions in one word.
const maxBraceNodes = 64

// braceCount is the number of words brace expansion yields, saturated
// above maxWords; nodes counts the brace expressions seen.
func braceCount(parts []syntax.WordPart, nodes *int) int {
	total := 1
	for _, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		*nodes++
		if *nodes > maxBraceNodes {
			return maxWords + 1
		}
		n := 0
		if br.Sequence {
			n = seqLen(br)
		} else {
			for _, e := range br.Elems {
				n += braceCount(e.Parts, nodes)
				if n > maxWords {
					break
				}
			}
		}
		total *= max(n, 1)
		if total > maxWords {
			return maxWords + 1
		}
	}
	return total
}

// seqLen is the length of a {x..y[..step]} sequence, saturated.
func seqLen(br *syntax.BraceExp) int {
	if len(br.Elems) < 2 {
		return 1
	}
	from, to := br.Elems[0].Lit(), br.Elems[1].Lit()
	var a, b int64
	if isInteger(from) && isInteger(to) {
		var err1, err2 error
		a, err1 = strconv.ParseInt(from, 10, 64)
		b, err2 = strconv.ParseInt(to, 10, 64)
		if err1 != nil || err2 != nil {
			return maxWords + 1
		}
	} else if len(from) == 1 && len(to) == 1 {
		a, b = int64(from[0]), int64(to[0])
	} else {
		return 1
	}
	step := int64(1)
	if len(br.Elems) > 2 {
		if n, err := strconv.ParseInt(strings.TrimPrefix(br.Elems[2].Lit(), "-"), 10, 64); err == nil && n != 0 {
			step = n
		}
	}
	d := a - b
	if b > a {
		d = b - a
	}
	if d < 0 || d/step >= maxWords { // d < 0: the difference overflowed
		return maxWords + 1
	}
	return int(d/step) + 1
}

// checkCharRanges refuses character sequences such as {a..Z} that run
// through punctuation: bash quote-removes a generated backslash.
func checkCharRanges(parts []syntax.WordPart, pos syntax.Pos) error {
	for _, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		for _, e := range br.Elems {
			if err := checkCharRanges(e.Parts, pos); err != nil {
				return err
			}
		}
		if !br.Sequence || len(br.Elems) < 2 {
			continue
		}
		from, to := br.Elems[0].Lit(), br.Elems[1].Lit()
		if isInteger(from) && isInteger(to) {
			continue
		}
		if len(from) != 1 || len(to) != 1 || !sameLetterCase(from[0], to[0]) {
			return deny(Unparseable, pos, "character range {%s..%s} is not reproduced exactly", from, to)
		}
	}
	return nil
}

func isInteger(s string) bool { return digits(strings.TrimPrefix(s, "-")) }

func sameLetterCase(a, b byte) bool {
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	return (lower(a) && lower(b)) || (upper(a) && upper(b))
}

// mergeLits joins adjacent unquoted literals, which brace expansion splits.
func mergeLits(parts []syntax.WordPart) []syntax.WordPart {
	var out []syntax.WordPart
	for _, p := range parts {
		if lit, ok := p.(*syntax.Lit); ok && len(out) > 0 {
			if prev, ok := out[len(out)-1].(*syntax.Lit); ok {
				out[len(out)-1] = &syntax.Lit{ValuePos: prev.ValuePos, ValueEnd: lit.ValueEnd, Value: prev.Value + lit.Value}
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// expandOne expands one brace-free word. keep is false for a word that
// expands to nothing (an unquoted empty result of brace expansion).
func (a *analyzer) expandOne(parts []syntax.WordPart, pos syntax.Pos) (Word, bool, error) {
	var word Word
	if len(parts) == 0 {
		return word, false, nil
	}
	quoted := false
	for _, p := range parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			quoted = true
			continue
		}
		if hasGlob(lit.Value) {
			word.Glob = true
		}
	}
	tilde := "" // what a tilde prefix expands to
	if first, ok := parts[0].(*syntax.Lit); ok && strings.HasPrefix(first.Value, "~") {
		prefix, rest, hasSlash := strings.Cut(first.Value, "/")
		if hasSlash || len(parts) == 1 {
			switch name := prefix[1:]; name {
			case "":
				if a.env.Home == "" || !isAbs(a.env.Home) {
					return word, false, deny(Indirect, pos, "~ expands to $HOME, which is not known")
				}
				tilde = a.env.Home
			case "+":
				if a.env.Cwd == "" {
					return word, false, deny(Indirect, pos, "~+ expands to $PWD, which is not known")
				}
				tilde = a.env.Cwd
			default:
				return word, false, deny(Indirect, pos, "tilde expansion %q depends on the environment", prefix)
			}
			// The rest of the word, from the slash on, as written.
			parts = parts[1:]
			if hasSlash {
				parts = append([]syntax.WordPart{&syntax.Lit{ValuePos: first.ValuePos, ValueEnd: first.ValueEnd, Value: "/" + rest}}, parts...)
			}
		}
	}
	if len(parts) > 0 {
		if first, ok := parts[0].(*syntax.Lit); ok && assignLike(first.Value) {
			for _, p := range parts {
				if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, "~") {
					return word, false, deny(Indirect, pos, "bash expands ~ in an assignment-like argument")
				}
			}
		}
	}
	v, ok := unquote(parts)
	if !ok {
		return word, false, deny(Unparseable, pos, "$'...' escape that is not decoded exactly (\\c, \\x{...}, NUL or an invalid code point); write the character itself")
	}
	word.Value = tilde + v
	if !utf8.ValidString(word.Value) {
		return word, false, deny(Unparseable, pos, "word is not valid UTF-8 after expansion")
	}
	if word.Glob {
		var pat strings.Builder
		escapeGlob(&pat, tilde)
		appendPattern(&pat, parts, false)
		word.Pattern = pat.String()
	}
	if word.Value == "" && !quoted {
		return word, false, nil
	}
	return word, true, nil
}

// assignValue is the value of an assignment prefix: quote removal only (bash
// does no brace expansion, word splitting or globbing there). A tilde that
// bash would expand is refused.
func assignValue(w *syntax.Word) (string, error) {
	if w == nil {
		return "", nil
	}
	if err := checkParts(w.Parts); err != nil {
		return "", err
	}
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, "~") {
			return "", deny(Indirect, w.Pos(), "bash expands ~ in an assignment value")
		}
	}
	v, ok := unquote(w.Parts)
	if !ok {
		return "", deny(Unparseable, w.Pos(), "$'...' escape that is not decoded exactly")
	}
	if !utf8.ValidString(v) {
		return "", deny(Unparseable, w.Pos(), "assignment value is not valid UTF-8")
	}
	return v, nil
}
