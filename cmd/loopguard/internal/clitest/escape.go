//go:build unix

package clitest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Hostile are strings an agent machine chooses to drive the reviewer's
// terminal: OSC 52 (set the clipboard), cursor up and erase line, a window
// title, a bare carriage return, bidi overrides and isolates, zero-width
// characters, letters and symbols that render as nothing or as a blank
// (the Hangul fillers, the blank Braille cell), NUL, DEL, C1 controls,
// invalid UTF-8.
var Hostile = []string{
	"\x1b]52;c;cm0gLXJmIH4=\a\x1b[1A\x1b[2K",
	"\x1b]2;owned\x07",
	"\x1b[2J\x1b[H",
	"ok\rDANGER gone",
	"\u202etxt.exe\u202c",
	"\u2066isolate\u2069",
	"zero\u200bwidth\u200d\ufeff",
	"filler\u3164\u115f\u1160\uffa0blank\u2800",
	"nul\x00del\x7f",
	"c1\u009b31m",
	"bad\xff\xfe",
}

// Attack is one string holding every Hostile sequence; CallAttack the same
// without invalid UTF-8, which a descriptor refuses.
var (
	Attack     = strings.Join(Hostile, "|")
	CallAttack = strings.Join(Hostile[:len(Hostile)-1], "|")
)

// SetStrings sets every string (and []string) field of the struct v points
// to, to s: a field added later is covered without touching this test.
func SetStrings(t *testing.T, v any, s string) int {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	n := 0
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Kind() == reflect.String:
			f.SetString(s)
			n++
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{s, s}))
			n++
		}
	}
	return n
}

// TerminalSafe fails t for any byte of out that is not printable ASCII or
// a newline, naming where it is.
func TerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if out == "" {
		t.Errorf("%s: no output (the test would pass by printing nothing)", what)
	}
	for i := 0; i < len(out); i++ {
		if b := out[i]; b != '\n' && (b < 0x20 || b >= 0x7f) {
			lo, hi := max(i-30, 0), min(i+30, len(out))
			t.Errorf("%s: raw byte %#02x at %d: %q", what, b, i, out[lo:hi])
			return
		}
	}
}

// HostileDescriptors are calls whose every string (keys included) is
// Hostile: a Bash command, a Write with a target, an MCP tool.
func HostileDescriptors(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, d := range []token.Descriptor{
		{Tool: "Bash", Cwd: "/p/" + CallAttack, Input: map[string]any{"command": "rm -rf ~/" + CallAttack + "\n" + CallAttack, CallAttack: CallAttack},
			Executables: map[string]string{"rm": "/usr/bin/" + CallAttack}},
		{Tool: "Write", Cwd: "/p", Input: map[string]any{"file_path": "/p/.cursor/" + CallAttack, "content": strings.Repeat(CallAttack+"\n", 3)},
			Target: &token.Target{Path: "/p/.cursor/" + CallAttack, SHA256: token.Absent, Resolved: "/p/.git/" + CallAttack}},
		{Tool: "mcp__" + CallAttack, Cwd: "/p", Input: map[string]any{CallAttack: []any{CallAttack, map[string]any{CallAttack: CallAttack}}}},
	} {
		c, _, err := d.Encodings()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// HostilePending is one hostile call for a rendering test (HostilePendings).
type HostilePending struct {
	P *state.Pending
	// What names a rendering of it in a failure.
	What func(rendering string) string
}

// HostilePendings are pending records, one over each of
// HostileDescriptors, every string field set to Attack, created, seen and
// held at now (held a minute on).
func HostilePendings(t *testing.T, now time.Time) []HostilePending {
	t.Helper()
	var out []HostilePending
	for i, desc := range HostileDescriptors(t) {
		p := &state.Pending{}
		if n := SetStrings(t, p, Attack); n < 15 {
			t.Fatalf("only %d string fields of state.Pending set", n)
		}
		p.Descriptor, p.Created, p.Seen, p.HeldUntil = desc, now, now, now.Add(time.Minute)
		name := "hostile call " + string(rune('A'+i))
		out = append(out, HostilePending{P: p, What: func(s string) string { return s + " of " + name }})
	}
	return out
}

// HostileTeamPending is p as TeamGet returns another machine's call, at
// now: its key, machine and every field of what the machine says set to
// Attack too, held a minute on.
func HostileTeamPending(t *testing.T, p *state.Pending, now time.Time) *vault.TeamPending {
	t.Helper()
	tp := &vault.TeamPending{Key: Attack + "/" + Attack, Machine: Attack, MachineName: Attack, Written: now, Pending: p}
	if n := SetStrings(t, &tp.Says, Attack); n < 5 {
		t.Fatalf("only %d string fields of vault.AgentSays set", n)
	}
	tp.Says.HeldUntil = now.Add(time.Minute)
	return tp
}
