package main

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopguard/loopguard/backend/vault"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/approve"
	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// hostile are strings an agent machine chooses to drive the reviewer's
// terminal: OSC 52 (set the clipboard), cursor up and erase line, a window
// title, a bare carriage return, bidi overrides and isolates, zero-width
// characters, NUL, DEL, C1 controls, invalid UTF-8.
var hostile = []string{
	"\x1b]52;c;cm0gLXJmIH4=\a\x1b[1A\x1b[2K",
	"\x1b]2;owned\x07",
	"\x1b[2J\x1b[H",
	"ok\rDANGER gone",
	"\u202etxt.exe\u202c",
	"\u2066isolate\u2069",
	"zero\u200bwidth\u200d\ufeff",
	"nul\x00del\x7f",
	"c1\u009b31m",
	"bad\xff\xfe",
}

// attack is one string holding every hostile sequence; callAttack the same
// without invalid UTF-8, which a descriptor refuses.
var (
	attack     = strings.Join(hostile, "|")
	callAttack = strings.Join(hostile[:len(hostile)-1], "|")
)

// setStrings sets every string (and []string) field of the struct v points
// to, to s: a field added later is covered without touching this test.
func setStrings(t *testing.T, v any, s string) int {
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

// terminalSafe fails t for any byte of out that is not printable ASCII or
// a newline, naming where it is.
func terminalSafe(t *testing.T, what, out string) {
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

// hostileDescriptors are calls whose every string (keys included) is
// hostile: a Bash command, a Write with a target, an MCP tool.
func hostileDescriptors(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	for _, d := range []token.Descriptor{
		{Tool: "Bash", Cwd: "/p/" + callAttack, Input: map[string]any{"command": "rm -rf ~/" + callAttack + "\n" + callAttack, callAttack: callAttack},
			Executables: map[string]string{"rm": "/usr/bin/" + callAttack}},
		{Tool: "Write", Cwd: "/p", Input: map[string]any{"file_path": "/p/.cursor/" + callAttack, "content": strings.Repeat(callAttack+"\n", 3)},
			Target: &token.Target{Path: "/p/.cursor/" + callAttack, SHA256: token.Absent, Resolved: "/p/.git/" + callAttack}},
		{Tool: "mcp__" + callAttack, Cwd: "/p", Input: map[string]any{callAttack: []any{callAttack, map[string]any{callAttack: callAttack}}}},
	} {
		c, _, err := d.Encodings()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// Every field of every rendering a reviewer's terminal gets (show,
// approve, review, pending, team pending, team approve, review --backend
// vault, the errors), filled with control bytes, OSC 52, bidi and
// zero-width characters, reaches the terminal escaped: not one raw byte.
func TestEveryRenderingEscapesEveryField(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	now := time.Now()
	for i, desc := range hostileDescriptors(t) {
		p := &state.Pending{}
		if n := setStrings(t, p, attack); n < 15 {
			t.Fatalf("only %d string fields of state.Pending set", n)
		}
		p.Descriptor, p.Created, p.Seen, p.HeldUntil = desc, now, now, now.Add(time.Minute)
		what := func(s string) string { return s + " of hostile call " + string(rune('A'+i)) }

		// show, approve, review: the one rendering, both lengths.
		terminalSafe(t, what("show"), renderPendingWith(nil, p, false))
		terminalSafe(t, what("show --full"), renderPendingWith(nil, p, true))

		// pending: the table and --json.
		dir := t.TempDir()
		os.Chmod(dir, 0o700)
		st, err := state.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		stored := *p
		stored.ID = state.PendingID(p.Session, p.Agent, p.Tool, p.Digest)
		stored.Status = state.StatusOpen
		if err := st.PutPending(&stored); err != nil {
			t.Fatal(err)
		}
		for _, asJSON := range []bool{false, true} {
			var out, errOut bytes.Buffer
			if err := pendingRun(&pendingOptions{out: &out, errOut: &errOut, store: st, now: func() time.Time { return now }, json: asJSON, all: true}); err != nil {
				t.Fatal(err)
			}
			terminalSafe(t, what("pending"), out.String()+errOut.String())
		}

		// The team: a record as TeamGet returns it, with every field of
		// what the machine says hostile too.
		tp := &vault.TeamPending{Key: attack + "/" + attack, Machine: attack, MachineName: attack, Written: now, Pending: p}
		if n := setStrings(t, &tp.Says, attack); n < 5 {
			t.Fatalf("only %d string fields of vault.AgentSays set", n)
		}
		tp.Says.HeldUntil = now.Add(time.Minute)
		head, says, body := teamParts(tp)
		terminalSafe(t, what("team approve"), head+says+"\n"+body)
		var tbl bytes.Buffer
		bad := vault.TeamPending{Key: attack, Err: errors.New(attack)}
		if err := teamTable(&tbl, []vault.TeamPending{*tp, bad}, now); err != nil {
			t.Fatal(err)
		}
		terminalSafe(t, what("team pending"), tbl.String())

		// The console: showParts on a terminal stand-in, the approval
		// line, an error.
		f, err := os.CreateTemp(t.TempDir(), "tty")
		if err != nil {
			t.Fatal(err)
		}
		c := &console{tty: f, fd: fdOf(f), pal: paletteFor(f)}
		showParts(c, p, head, says, body, true)
		g := token.Grant{Principal: attack, Session: attack, Agent: attack, Tool: attack, ArgHash: p.Digest, Scope: token.ScopeCall, Expiry: now}
		approve.Printed(f, attack, &g, "The waiting hook on "+approve.MachineName(tp)+" runs it once.")
		printError(f, cli.WithHint(errors.New(attack), attack))
		(&round{c: c, titles: true}).title(attack)
		f.Close()
		out, _ := os.ReadFile(f.Name())
		// The title's own OSC and BEL are loopguard's; what is inside them
		// is checked with the rest.
		title := regexp.MustCompile("\x1b\\]2;([^\a]*)\a")
		if !title.Match(out) {
			t.Fatal("no title was set")
		}
		terminalSafe(t, what("review --backend vault"), string(title.ReplaceAll(out, []byte("$1"))))
	}
}
