package token

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// TestDecodeStringsMatchJSON: strings with and without escapes, runs of
// plain bytes between them of every length, decode to what encoding/json
// decodes; the malformed pieces (raw control characters, invalid UTF-8,
// lone surrogates, bad escapes, no closing quote) are refused wherever
// they sit in the string.
func TestDecodeStringsMatchJSON(t *testing.T) {
	good := []string{"a", "0123456789abcdef", "é", "𝄞", `\n`, `\"`, `\\`, `\/`, `\t`, `\b`, `\f`, `\r`,
		`\u00e9`, `\u2028`, `\ud834\udd1e`, `\u0000`, " ", "<&>", "\x7f"}
	bad := []string{"\x01", "\n", "\xff", "\xed\xa0\x80", `\ud834`, `\udd1e`, `\x`, `\u12g`, `\ud834\u0041`}
	r := rand.New(rand.NewSource(16))
	piece := func(set []string) string {
		var b strings.Builder
		for range r.Intn(6) {
			b.WriteString(set[r.Intn(len(set))])
			if r.Intn(3) == 0 {
				b.WriteString(strings.Repeat("x", r.Intn(40)))
			}
		}
		return b.String()
	}
	for i := range 20000 {
		s := piece(good)
		in := `{"k":"` + s + `"}`
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var want map[string]string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: encoding/json: %v", in, err)
		}
		if got := v.(map[string]any)["k"]; got != want["k"] {
			t.Fatalf("%q: decoded %q, encoding/json %q", in, got, want["k"])
		}
		if i%2 == 0 {
			broken := `{"k":"` + s + bad[r.Intn(len(bad))] + piece(good) + `"}`
			if _, err := Decode([]byte(broken)); err == nil {
				t.Fatalf("%q decoded", broken)
			}
		} else if _, err := Decode([]byte(`{"k":"` + s)); err == nil {
			t.Fatalf("%q: an unterminated string decoded", `{"k":"`+s)
		}
	}
}
