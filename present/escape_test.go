package present

import "testing"

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
