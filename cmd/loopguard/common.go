package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// is matches the line want, as typed.
func is(want string) func(string) bool { return func(line string) bool { return line == want } }

// printJSON writes v as indented JSON, without HTML escaping (the output is
// for people and programs, not for a web page), in ASCII: every character
// past it (bidi controls, zero-width spaces) and DEL as a \u escape, so a
// terminal shows what a program reads. encoding/json already escapes the
// other control characters.
func printJSON(out io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(out, asciiJSON(b.String()))
	return err
}

// asciiJSON escapes every rune of JSON text s that is not printable ASCII
// (outside strings JSON has none) as \uXXXX, in UTF-16 as JSON wants.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x7f:
			b.WriteString(`\u007f`)
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
