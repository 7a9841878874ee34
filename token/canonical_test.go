package token

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	// Each row: several encodings of one value, one canonical form.
	rows := []struct {
		in   []string
		want string
	}{
		{[]string{`{"b":1,"a":2}`, ` { "a" : 2 , "b" : 1 } `, "{\n\"a\":2,\n\t\"b\":1}"}, `{"a":2,"b":1}`},
		{[]string{`{"amount":20,"to":"vendor"}`, `{"to":"vendor","amount":20}`}, `{"amount":20,"to":"vendor"}`},
		{[]string{`"\u00e9"`, `"é"`}, `"é"`},
		{[]string{`"\ud83d\ude00"`, `"😀"`}, `"😀"`},
		{[]string{`"a\/b"`, `"a/b"`}, `"a/b"`},
		{[]string{`"\u0001\n\"\\"`}, `"\u0001\n\"\\"`},
		{[]string{`[1, 2.50, -0, 1e3, 1E+3]`}, `[1,2.50,-0,1e3,1E+3]`},
		{[]string{`{"z":{"y":[true,false,null]},"a":[]}`}, `{"a":[],"z":{"y":[true,false,null]}}`},
		// No normalisation: NFC and NFD spellings stay different.
		{[]string{`"\u00e9"`}, `"é"`},
		{[]string{`"e\u0301"`}, "\"e\u0301\""},
		// Zero-width and bidi characters are kept as given, so the digest covers them.
		{[]string{`"a\u200bb"`}, "\"a\u200bb\""},
	}
	for _, r := range rows {
		for _, in := range r.in {
			got, err := Canonical([]byte(in))
			if err != nil {
				t.Errorf("Canonical(%q): %v", in, err)
				continue
			}
			if string(got) != r.want {
				t.Errorf("Canonical(%q) = %q, want %q", in, got, r.want)
			}
		}
	}
}

func TestCanonicalDistinguishes(t *testing.T) {
	// Different calls never share a canonical form.
	pairs := [][2]string{
		{`{"amount":20}`, `{"amount":2000}`},
		{`{"amount":20}`, `{"amount":20.0}`},
		{`{"amount":20}`, `{"amount":"20"}`},
		{`{"to":"vendor"}`, `{"to":"vendor","memo":""}`},
		{`"\u00e9"`, `"e\u0301"`},
		{`"ab"`, `"a\u200bb"`},
		{`[1,2]`, `[2,1]`},
		{`{"a":null}`, `{}`},
	}
	for _, p := range pairs {
		a, err1 := Canonical([]byte(p[0]))
		b, err2 := Canonical([]byte(p[1]))
		if err1 != nil || err2 != nil {
			t.Fatalf("%v %v", err1, err2)
		}
		if string(a) == string(b) {
			t.Errorf("%s and %s share canonical form %s", p[0], p[1], a)
		}
	}
}

func TestCanonicalRejects(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth+2) + strings.Repeat("]", MaxJSONDepth+2)
	for name, in := range map[string]string{
		"duplicate key":      `{"a":1,"a":2}`,
		"duplicate nested":   `{"x":{"to":"vendor","to":"attacker"}}`,
		"invalid utf-8":      "\"\xff\"",
		"invalid utf-8 key":  "{\"\xc3\":1}",
		"lone high":          `"\ud83d"`,
		"lone low":           `"\ude00"`,
		"high then letter":   `"\ud83dx"`,
		"high then high":     `"\ud83d\ud83d"`,
		"too deep":           deep,
		"too many values":    "[" + strings.Repeat("{},", MaxJSONValues) + "{}]",
		"trailing":           `{} {}`,
		"trailing comma":     `[1,]`,
		"leading zero":       `01`,
		"bare dot":           `1.`,
		"plus":               `+1`,
		"nan":                `NaN`,
		"single quote":       `'a'`,
		"raw control":        "\"a\x01\"",
		"bad escape":         `"\x"`,
		"empty":              ``,
		"unterminated":       `"abc`,
		"comment":            `{} // x`,
		"object no colon":    `{"a" 1}`,
		"bad literal":        `tru`,
		"short unicode":      `"\u12"`,
		"unterminated array": `[1`,
	} {
		_, err := Canonical([]byte(in))
		var me *MalformedError
		if !errors.As(err, &me) || !errors.Is(err, ErrMalformedJSON) {
			t.Errorf("%s: Canonical(%q) = %v, want a MalformedError", name, in, err)
		}
	}
}

func TestCanonicalSizeBound(t *testing.T) {
	big := make([]byte, MaxJSONSize+1)
	if _, err := Canonical(big); !errors.Is(err, ErrMalformedJSON) {
		t.Fatalf("oversized input: %v", err)
	}
}

func TestDescriptorDigest(t *testing.T) {
	in, err := Decode([]byte(`{"file_path":"/p/a.go","old_string":"a","new_string":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	d := Descriptor{Tool: "Edit", Input: in, Cwd: "/p", Target: &Target{Path: "/p/a.go", SHA256: Absent}}
	d1, _ := d.Digest()
	c1, _ := d.CallDigest()
	d.Target.SHA256 = DigestOf([]byte("v8"))
	d2, _ := d.Digest()
	c2, _ := d.CallDigest()
	if d1 == d2 {
		t.Error("target state does not change the digest")
	}
	if c1 != c2 {
		t.Error("target state changes the call digest")
	}
	d.Cwd = "/q"
	if d3, _ := d.Digest(); d3 == d2 {
		t.Error("cwd does not change the digest")
	}
}

func seeds(t testing.TB, dir string) []string {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func FuzzCanonical(f *testing.F) {
	s := seeds(f, "canonical-seeds")
	if len(s) == 0 {
		f.Fatal("no seeds in testdata/fuzz/canonical-seeds")
	}
	for _, x := range s {
		f.Add([]byte(x))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonical(in)
		if err != nil {
			return
		}
		// Whatever we accept, encoding/json accepts too (we are stricter).
		if !json.Valid(in) {
			t.Fatalf("accepted invalid json %q", in)
		}
		// Canonical output re-parses to itself.
		again, err := Canonical(out)
		if err != nil {
			t.Fatalf("canonical output %q does not re-parse: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

func FuzzParseToken(f *testing.F) {
	s := seeds(f, "token-seeds")
	if len(s) == 0 {
		f.Fatal("no seeds in testdata/fuzz/token-seeds")
	}
	for _, x := range s {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, in string) {
		g, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("parse error of another class: %v", err)
			}
			return
		}
		// Whatever parses re-encodes byte for byte: one token, one string.
		if g.String() != in {
			t.Fatalf("token %q re-encodes as %q", in, g.String())
		}
	})
}

// Encodings gives exactly the bytes of Canonical and of CallDigest, whatever
// the input holds (a member named like the descriptor's own, a tool name that
// needs escaping), with and without a target.
func TestEncodingsMatchSeparateEncodes(t *testing.T) {
	inputs := []string{
		`{"file_path":"/p/a.go","content":"x"}`,
		`{"command":"echo ,\"tool\":\"Write\",\"v\":\"loopguard.descriptor.v1\"}","tool":"Edit","v":1,"target":{"path":"/etc/passwd"}}`,
		`{}`,
		`{"a":[1,2,{"b":null}],"\u00e9":"\u2028"}`,
	}
	for _, tool := range []string{"Write", "Edit", "mcp__s__t", "T\"ool\u00e9", ""} {
		for _, raw := range inputs {
			in, err := Decode([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []*Target{nil, {Path: "/p/a.go", SHA256: Absent}, {Path: "/p/l", SHA256: DigestOf(nil), Resolved: "/q/\"r\""}} {
				for _, exe := range []map[string]string{nil, {"echo": "/bin/echo"}} {
					d := Descriptor{Tool: tool, Input: in, Cwd: "/p", Executables: exe, Target: target}
					canonical, call, err := d.Encodings()
					if err != nil {
						t.Fatal(err)
					}
					wantCanonical, err := d.Canonical()
					if err != nil {
						t.Fatal(err)
					}
					wantCall, err := Encode(d.value(false))
					if err != nil {
						t.Fatal(err)
					}
					cd, _ := d.CallDigest()
					if string(canonical) != string(wantCanonical) || string(call) != string(wantCall) || DigestOf(call) != cd {
						t.Errorf("tool %q input %s target %+v:\n got %s\nwant %s\n got call %s\nwant call %s", tool, raw, target, canonical, wantCanonical, call, wantCall)
					}
				}
			}
		}
	}
}

// TestIsDigest: only a digest as DigestOf writes it passes (the one check
// of the grant's argument hash, the audit log's hashes, a rule's content
// pin and the console's statement); upper case, a short one and a non-hex
// digit do not. The control is DigestOf's own output.
func TestIsDigest(t *testing.T) {
	d := DigestOf([]byte("x"))
	if !IsDigest(d) {
		t.Fatalf("DigestOf's %s refused", d)
	}
	for _, bad := range []string{"", d[:63], d + "0", strings.ToUpper(d), d[:63] + "g", " " + d[1:]} {
		if IsDigest(bad) {
			t.Errorf("%q passes", bad)
		}
	}
}

// The value bound leaves room for a tool's real inputs: a payload of
// MaxJSONValues values exactly (the array and its elements) decodes, one
// more is refused (TestCanonicalRejects).
func TestCanonicalValuesAtTheBound(t *testing.T) {
	in := "[" + strings.Repeat("1,", MaxJSONValues-2) + "1]"
	if _, err := Decode([]byte(in)); err != nil {
		t.Fatalf("%d values: %v", MaxJSONValues, err)
	}
	if _, err := Decode([]byte("[" + strings.Repeat("1,", MaxJSONValues-1) + "1]")); err == nil {
		t.Fatalf("%d values decoded", MaxJSONValues+1)
	}
}
