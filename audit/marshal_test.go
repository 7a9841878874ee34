package audit

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"time"
)

// TestMarshalEntryMatchesJSON: the hand-written encoder writes what
// json.Marshal writes, byte for byte, for entries with every escape
// encoding/json makes (quotes, backslashes, control characters, HTML
// characters, DEL, U+2028, U+2029, invalid UTF-8, multi-byte runes), empty
// and omitted fields, and times in other zones; and fails where it fails.
func TestMarshalEntryMatchesJSON(t *testing.T) {
	pieces := []string{"", "a", "Z", " ", `"`, `\`, "/", "<", ">", "&", "\x00", "\x01", "\b", "\f", "\n", "\r", "\t",
		"\x1f", "\x7f", "é", "€", "𝄞", "\u2028", "\u2029", "\u2027", "\xff", "\xe2\x80", "\xed\xa0\x80", "\u00a0", "%", "{}"}
	r := rand.New(rand.NewSource(16))
	str := func() string {
		if r.Intn(4) == 0 {
			return ""
		}
		var b []byte
		for range r.Intn(8) {
			b = append(b, pieces[r.Intn(len(pieces))]...)
		}
		return string(b)
	}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -7*3600)}
	escaped := 0
	for i := range 5000 {
		e := Entry{Seq: r.Intn(1 << 20), Time: time.Unix(r.Int63n(4e9), r.Int63n(1e9)*int64(r.Intn(2))).In(zones[r.Intn(len(zones))]),
			Prev: str(), Event: str(), Session: str(), Agent: str(), AgentType: str(), Tool: str(), Digest: str(),
			Decision: str(), Reason: str(), Grant: str(), Pending: str(), Principal: str(), Mode: str(),
			Detail: str(), Summary: str(), Passkey: str(), Signed: str(), Assertion: str()}
		if i == 0 {
			e = Entry{}
		}
		want, werr := json.Marshal(e)
		got, gerr := marshalEntry(e)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("entry %d:\n got %s (%v)\nwant %s (%v)", i, got, gerr, want, werr)
		}
		if bytes.Contains(want, []byte(`\u`)) {
			escaped++
		}
	}
	if escaped < 1000 {
		t.Fatalf("only %d entries needed \\u escapes: the comparison proves little", escaped)
	}
	bad := Entry{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := marshalEntry(bad); err == nil {
		t.Fatal("a time json.Marshal refuses was encoded")
	}
}
