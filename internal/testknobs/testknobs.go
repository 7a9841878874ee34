// Package testknobs turns off one layer of the guard at a time, so that a
// test can show each layer holding on its own (and, with it off, the attack
// getting through: the test can fail). The knobs exist only in a binary
// built with the lgtest build tag, read from LOOPGUARD_TEST_KNOBS
// (comma-separated names); in every other build On is always false.
package testknobs

// Knob names.
const (
	// LegacyBraceEscape: shellparse keeps $'\x{..}' as written, as the
	// decoder did before bash's \x{HH} was known.
	LegacyBraceEscape = "legacy-brace-escape"
	// NoRewrite: an allowed scoped Bash call runs the model's own text.
	NoRewrite = "no-rewrite"
	// NoRuleset: the launcher execs the program without confining it.
	NoRuleset = "no-ruleset"
	// LooseAnalysis: a scoped Bash rule covers any simple command of its
	// program, no path of a Bash call is judged protected, and no DANGER
	// line keeps a grant from covering a Bash call.
	LooseAnalysis = "loose-analysis"
)
