package fsx

import "unicode"

// HiddenRune reports whether r, in a name a program chose, prints as
// nothing or as a blank and is not escaped by Go's %q (which escapes the
// control and format characters): the rest of what Unicode marks default
// ignorable (Other_Default_Ignorable_Code_Point, among them the Hangul
// fillers U+115F, U+1160, U+3164 and U+FFA0, and Variation_Selector), and
// two symbols whose glyph has no ink: U+2800 BRAILLE PATTERN BLANK and
// U+1D159 MUSICAL SYMBOL NULL NOTEHEAD. A file named "main.go\u3164" was
// shown as main.go (an attack run). Every screen that shows such a name
// escapes these: present's and the launcher's lines.
func HiddenRune(r rune) bool {
	return r >= 0x80 && (unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || r == 0x2800 || r == 0x1d159)
}
