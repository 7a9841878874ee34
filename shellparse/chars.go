package shellparse

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxWarnings bounds the warnings of one command; the last one says how
// many more there were.
const maxWarnings = 64

// scanChars reports invisible, bidi, control, space-like and confusable
// characters, and invalid UTF-8, as "line:col: U+XXXX kind" (col in bytes,
// 1-based, as the parser counts).
func scanChars(s string) []string {
	var out []string
	extra := 0
	line, lineStart := 1, 0
	for i := 0; i < len(s); {
		// Fast path: printable ASCII and tabs need no decoding.
		if c := s[i]; (c >= 0x20 && c < 0x7f) || c == '\t' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var kind string
		switch {
		case r == utf8.RuneError && size == 1:
			kind = fmt.Sprintf("invalid UTF-8 byte 0x%02X", s[i])
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f:
			kind = "control character"
		case r < 0x80:
		case r >= 0x80 && r <= 0x9f:
			kind = "C1 control character"
		case isBidi(r):
			kind = "bidi control character"
		case isInvisible(r):
			kind = "invisible character"
		case r == 0x2028 || r == 0x2029:
			kind = "line or paragraph separator"
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			kind = "combining mark"
		case unicode.Is(unicode.Zs, r):
			kind = "non-ASCII space (bash treats it as part of a word)"
		case isConfusable(r):
			kind = "confusable character (looks like ASCII)"
		}
		if kind != "" {
			if len(out) < maxWarnings {
				if r == utf8.RuneError && size == 1 {
					out = append(out, fmt.Sprintf("%d:%d: %s", line, i-lineStart+1, kind))
				} else {
					out = append(out, fmt.Sprintf("%d:%d: U+%04X %s", line, i-lineStart+1, r, kind))
				}
			} else {
				extra++
			}
		}
		if r == '\n' {
			line, lineStart = line+1, i+1
		}
		i += size
	}
	if extra > 0 {
		out = append(out, fmt.Sprintf("%d more suspicious characters", extra))
	}
	return out
}

func isBidi(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func isInvisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x180E, r == 0x3164, r == 0xFEFF, r == 0xFFA0, r == 0x2800:
		return true
	case r >= 0x200B && r <= 0x200D, r >= 0x2060 && r <= 0x2064, r >= 0x206A && r <= 0x206F,
		r >= 0xFE00 && r <= 0xFE0F, r >= 0xFFF9 && r <= 0xFFFB, r >= 0x1D173 && r <= 0x1D17A,
		r >= 0xE0000 && r <= 0xE007F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) ||
		(unicode.Is(unicode.Cn, r) && r > 0x7f)
}

// confusables are single letters and digits outside ASCII that render like
// ASCII ones (Cyrillic, Greek, Armenian, Latin variants); whole blocks of
// fullwidth forms, mathematical alphanumerics, letterlike symbols, Roman
// numerals and Cherokee are added in isConfusable.
var confusables = sync.OnceValue(func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "аеорсухіјѕԁһӏԛԝьАВЕКМНОРСТХІЈЅҮӀЗԌԍ" + // Cyrillic
		"ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαινκρυχϲϳϵ" + // Greek
		"օսոհցզ" + // Armenian
		"ıȷɑɡɩʏℓ" + // Latin variants
		"ᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ" { // small capitals
		m[r] = true
	}
	return m
})

func isConfusable(r rune) bool {
	switch {
	case confusables()[r]:
		return true
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return true
	case r >= 0x1D400 && r <= 0x1D7FF: // mathematical alphanumerics
		return true
	case r >= 0x2100 && r <= 0x214F && unicode.IsLetter(r): // letterlike (K, Å, ℎ)
		return true
	case r >= 0x2160 && r <= 0x217F: // Roman numerals
		return true
	case r >= 0x13A0 && r <= 0x13F5: // Cherokee
		return true
	case r >= 0x24B6 && r <= 0x24E9: // circled letters
		return true
	}
	return false
}
