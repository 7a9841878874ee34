package present

import (
	"strings"
	"testing"
	"unicode"
)

// Word leaves a plain word as it is and quotes anything else in
// QuoteText's form; the control of each case is the plain word.
func TestWord(t *testing.T) {
	for in, want := range map[string]string{
		"ls":         "ls",
		"--output=x": "--output=x",
		"":           `""`,
		"a b":        `"a b"`,
		`a"b`:        `"a\"b"`,
		`a\b`:        `"a\\b"`,
		"\u202eabc":  `"\u{202e}abc"`,
		"x\x1b[2J":   `"x\x1b[2J"`,
		"\xff":       `"\xff"`,
		"caf\u00e9":  `"caf\u{00e9}"`,
		"tab\there":  `"tab\there"`,
	} {
		if got := Word(in); got != want {
			t.Errorf("Word(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestEscapeJSON: what a terminal could act on is escaped and the line
// stays the JSON it was; plain ASCII is left alone (control).
func TestEscapeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"tool":"Bash"}`:       `{"tool":"Bash"}`,
		`{"tool":"😀"}`:          `{"tool":"\ud83d\ude00"}`,
		"{\"t\":\"a\x1b[2Jb\"}": `{"t":"a\u001b[2Jb"}`,
		"{\"t\":\"\u200b\"}":    `{"t":"\u200b"}`,
		"{\"t\":\"\xff\"}":      `{"t":"\ufffd"}`,
	} {
		if got := EscapeJSON(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestQuoteNameHidden: a name ending in a rune that renders as nothing
// or as a blank was shown as the name without it (Go's %q lets the
// Hangul fillers and the blank Braille cell through as printable): each
// is escaped, as is every rune of Other_Default_Ignorable_Code_Point and
// Variation_Selector, where EscapeText (show, review) already escaped
// them. Controls: a plain name, and non-ASCII names shown as they are.
func TestQuoteNameHidden(t *testing.T) {
	for in, want := range map[string]string{
		"main.go\u3164":        `"main.go\u3164"`,
		"main.go\u115f":        `"main.go\u115f"`,
		"main.go\u1160":        `"main.go\u1160"`,
		"main.go\uffa0":        `"main.go\uffa0"`,
		"main.go\u2800":        `"main.go\u2800"`,
		"main.go\U0001d159":    `"main.go\U0001d159"`,
		"main.go\u034f":        `"main.go\u034f"`,
		"main.go\ufe0f":        `"main.go\ufe0f"`,
		"main.go\U000e0100":    `"main.go\U000e0100"`,
		"a\u3164\x1b[2J\u3164": `"a\u3164\x1b[2J\u3164"`,
		"\u200bx":              `"\u200bx"`,
		"x\xff\u3164":          `"x\xff\u3164"`,
		`a"b`:                  `"a\"b"`,
		// Controls.
		"main.go":    "main.go",
		"café.txt":   "café.txt",
		"日本.md":      "日本.md",
		"naïve/ö.go": "naïve/ö.go",
	} {
		if got := QuoteName(in); got != want {
			t.Errorf("QuoteName(%q) = %s, want %s", in, got, want)
		}
	}
	seen := 0
	for _, table := range []*unicode.RangeTable{unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector} {
		for _, rs := range [][]rune{runes16(table), runes32(table)} {
			for _, r := range rs {
				seen++
				name := "main.go" + string(r)
				if got := QuoteName(name); strings.ContainsRune(got, r) {
					t.Errorf("QuoteName(%q) = %s: U+%04X is shown raw", name, got, r)
				}
				if got := EscapeText(name); strings.ContainsRune(got, r) {
					t.Errorf("EscapeText(%q) = %s: U+%04X is shown raw", name, got, r)
				}
			}
		}
	}
	if seen < 1000 {
		t.Errorf("%d runes in the tables: the loop tried too few", seen)
	}
}

func runes16(t *unicode.RangeTable) (out []rune) {
	for _, r := range t.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, c)
		}
	}
	return out
}

func runes32(t *unicode.RangeTable) (out []rune) {
	for _, r := range t.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			out = append(out, c)
		}
	}
	return out
}
