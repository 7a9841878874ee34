package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loopguard/loopguard/fsx"
)

// EscapeText keeps printable ASCII (and the space) and escapes everything
// else visibly (\t, \x1b, \u{200b}, a backslash as \\), so nothing
// invisible, look-alike or terminal-driving reaches a person. Every CLI
// output of a string the agent chose goes through it.
func EscapeText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\u{%04x}`, r)
		}
		i += size
	}
	return b.String()
}

// EscapeJSON escapes a raw JSON line for a terminal and keeps it valid
// JSON when it was: non-ASCII runes become \uXXXX (surrogate pairs above
// the BMP), raw control bytes too (they are invalid in JSON anyway), and a
// byte that is not UTF-8 \ufffd.
func EscapeJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
		i += size
	}
	return b.String()
}

// QuoteText is EscapeText in double quotes, with '"' escaped too: each
// backslash on screen stands for exactly one escape.
func QuoteText(s string) string {
	return `"` + strings.ReplaceAll(EscapeText(s), `"`, `\"`) + `"`
}

// QuoteName shows a name a program chose (a path, a command) as it is
// when Go's quoting leaves it so, non-ASCII letters included, else in
// double quotes with Go's escapes: control, format and space characters
// but the space (strconv.Quote), and each rune that renders as nothing or
// as a blank (hidden) as \uXXXX. Go's quoting lets the Hangul fillers
// through as printable letters: a file named "main.go\u3164" showed as
// main.go (an attack run on undo).
func QuoteName(s string) string {
	var b strings.Builder
	start := 0
	quote := func(end int) {
		q := strconv.Quote(s[start:end])
		b.WriteString(q[1 : len(q)-1])
	}
	for i, r := range s {
		if !hidden(r) {
			continue
		}
		quote(i)
		if r <= 0xffff {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		start = i + utf8.RuneLen(r)
	}
	quote(len(s))
	if b.String() == s {
		return s
	}
	return `"` + b.String() + `"`
}

// hidden reports whether r renders as nothing or as a blank although Go
// counts it printable (strconv.IsPrint): what Unicode says is default
// ignorable beyond the format characters (Other_Default_Ignorable_Code_Point,
// among them the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, and
// Variation_Selector), and two symbols whose glyph has no ink: U+2800
// BRAILLE PATTERN BLANK (a cell with no dots) and U+1D159 MUSICAL SYMBOL
// NULL NOTEHEAD.
func hidden(r rune) bool { return fsx.HiddenRune(r) }

// Word is one word (an argument, a path) as a person reads it: as it is
// when it is printable ASCII with no blank, quote or backslash, else
// QuoteText's form, so its edges and every escape are plain ("" is the
// empty word).
func Word(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return QuoteText(s)
		}
	}
	return s
}

// MaxReasonLen keeps every string sent to an agent's host under Claude
// Code's 10,000 character cap on hook output strings.
const MaxReasonLen = 9000

// Clip makes s safe to send and bounds it. The engine escapes every
// agent-chosen string it puts in a message (EscapeText, as the CLI does);
// Clip is the net under it: any control, invisible or non-ASCII character
// left (ESC, BEL, bidi...) is escaped the same way, line by line. It leaves
// backslashes alone, so text escaped once is not escaped twice.
func Clip(s string) string {
	s = escapeLines(s)
	if len(s) <= MaxReasonLen {
		return s
	}
	return s[:MaxReasonLen] + "\n(cut at " + fmt.Sprint(MaxReasonLen) + " bytes; the full call is in `loopguard show`)"
}

// escapeLines escapes what EscapeText escapes in each line of s, but the
// backslash, keeping the line breaks.
func escapeLines(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, part := range strings.SplitAfter(l, `\`) {
			b.WriteString(strings.ReplaceAll(EscapeText(part), `\\`, `\`))
		}
	}
	return b.String()
}

// FormatTime is the one format of a time shown to people, by the CLI and
// in the hook's messages: RFC 3339 in local time with its offset, to the
// second (2026-11-30T13:04:05+01:00): sortable, greppable and unambiguous.
func FormatTime(t time.Time) string { return t.Local().Truncate(time.Second).Format(time.RFC3339) }
