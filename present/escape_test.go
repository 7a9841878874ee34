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
