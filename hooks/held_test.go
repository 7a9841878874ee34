package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// The first line of the model's message says the call is held for a human
// and what the human runs; Claude Code hides the lines after it.
func TestHeldFirstLine(t *testing.T) {
	h := newHarness(t)
	d := h.decide(h.fixture("pretooluse-bash.json"))
	expect(t, "no grant", d, Deny, ReasonNoGrant)
	first, rest, _ := strings.Cut(d.Message, "\n")
	for _, want := range []string{"loopguard: no_grant: held for a human", "loopguard review", "loopguard approve " + d.Pending, "retry the identical call"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line lacks %q: %q", want, first)
		}
	}
	if !strings.HasPrefix(rest, "Why: no approval covers this call.") {
		t.Errorf("the second line does not say why: %q", d.Message)
	}
	p, err := h.Store.GetPending(d.Pending)
	if err != nil || !p.HeldUntil.IsZero() {
		t.Errorf("a call no hook waits for is recorded as held: %v %v", err, p)
	}
}

// A held call is recorded as held (until when, by which process); when the
// wait ends with no decision the model is told not to retry at once.
func TestWaitEnded(t *testing.T) {
	h := newHarness(t)
	e := h.eng()
	e.Wait = 300 * time.Millisecond
	e.PollInterval = 10 * time.Millisecond
	seen := make(chan *state.Pending, 1)
	go func() {
		for {
			if list, _ := h.Store.ListPending(); len(list) > 0 {
				seen <- list[0]
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	d := e.Decide(context.Background(), h.call(h.fixture("pretooluse-bash.json")))
	expect(t, "wait ended", d, Deny, ReasonNoGrant)
	first, _, _ := strings.Cut(d.Message, "\n")
	for _, want := range []string{"loopguard: no_grant: held for a human's approval for", "nobody decided", "Do not retry it at once", "loopguard review"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line lacks %q: %q", want, first)
		}
	}
	p := <-seen
	if p.HolderPID == 0 || p.HeldUntil.Before(start) || p.HeldUntil.After(start.Add(time.Second)) {
		t.Errorf("the held record: pid %d, until %v (start %v)", p.HolderPID, p.HeldUntil, start)
	}
	if !strings.Contains(first, "once they approve it there, retry the identical call") {
		t.Errorf("the model is not told to retry once approved: %q", first)
	}
	// The wait ran its course: the record says the agent was told, so
	// review keeps it for the retry.
	if p, err := h.Store.GetPending(d.Pending); err != nil || !h.Store.WaitEnded(p) {
		t.Errorf("the call whose wait ran out is not marked as told: %v %+v", err, p)
	}
	// Control: without a wait the record is not held.
	d = h.decide(h.fixture("pretooluse-write.json"))
	if p, _ := h.Store.GetPending(d.Pending); p == nil || !p.HeldUntil.IsZero() || h.Store.WaitEnded(p) {
		t.Errorf("an unheld call recorded as held: %+v", p)
	}
}

// The agent's client stops waiting (Claude Code signals the hook on Esc):
// the held call is let go at once, recorded as held_abandoned in the audit
// log, and not marked as told (it leaves review's queue). A later hold of
// the same call is not taken for an ended one either.
func TestHeldAbandoned(t *testing.T) {
	h := newHarness(t)
	e := h.eng()
	e.Wait = 30 * time.Second
	e.PollInterval = 10 * time.Millisecond
	sig := make(chan os.Signal, 1)
	e.Abandoned = sig
	e.OnHeld = func(*state.Pending) { sig <- syscall.SIGTERM }
	start := time.Now()
	d := e.Decide(context.Background(), h.call(h.fixture("pretooluse-bash.json")))
	expect(t, "abandoned", d, Deny, ReasonAbandoned)
	if time.Since(start) > 10*time.Second {
		t.Errorf("the abandoned hold took %v", time.Since(start))
	}
	p, err := h.Store.GetPending(d.Pending)
	if err != nil || p.Status != state.StatusOpen || h.Store.WaitEnded(p) {
		t.Errorf("the abandoned call's record: %v %+v", err, p)
	}
	var last audit.Entry
	_ = audit.Open(filepath.Join(h.Store.Dir, "audit")).Read(func(_ []byte, e audit.Entry) error { last = e; return nil })
	if last.Reason != ReasonAbandoned || last.Pending != d.Pending || last.Summary == "" {
		t.Errorf("the audit entry of the abandoned call: %+v", last)
	}

	// Its wait runs out this time: marked. Then held again (a retry) and
	// abandoned: the old mark names the old hold, not this one.
	e.OnHeld = nil
	e.Wait = 200 * time.Millisecond
	d = e.Decide(context.Background(), h.call(h.fixture("pretooluse-bash.json")))
	expect(t, "wait ended", d, Deny, ReasonNoGrant)
	if p, _ := h.Store.GetPending(d.Pending); p == nil || !h.Store.WaitEnded(p) {
		t.Fatalf("not marked after its wait ran out: %+v", p)
	}
	e.Wait = 30 * time.Second
	e.OnHeld = func(*state.Pending) { sig <- syscall.SIGTERM }
	d = e.Decide(context.Background(), h.call(h.fixture("pretooluse-bash.json")))
	expect(t, "abandoned again", d, Deny, ReasonAbandoned)
	if p, _ := h.Store.GetPending(d.Pending); p == nil || h.Store.WaitEnded(p) {
		t.Errorf("a later hold, abandoned, is taken for an ended one: %+v", p)
	}
}

// The human's refusal note reaches the model escaped and bounded; without a
// note the refusal says only that.
func TestRefusalNote(t *testing.T) {
	h := newHarness(t)
	call := h.fixture("pretooluse-bash.json")
	d := h.decide(call)
	note := "use make test\x1b[2J instead" + strings.Repeat("x", 2*MaxNote)
	if err := h.Store.Refuse(d.Pending, "alice", note, time.Now()); err != nil {
		t.Fatal(err)
	}
	d = h.decide(call)
	expect(t, "refused", d, Deny, ReasonDeniedByHuman)
	if !strings.Contains(d.Message, `saying: "use make test\x1b[2J instead`) || strings.Contains(d.Message, "\x1b") || len(d.Message) > 2*MaxNote {
		t.Errorf("the note as the model sees it: %q", d.Message)
	}
	d2 := h.decide(h.fixture("pretooluse-write.json"))
	if err := h.Store.Refuse(d2.Pending, "alice", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if d2 = h.decide(h.fixture("pretooluse-write.json")); strings.Contains(d2.Message, "saying") || !strings.Contains(d2.Message, "Do not retry it") {
		t.Errorf("a refusal without a note: %q", d2.Message)
	}
}

// Each hook decision in the audit log carries the call in one escaped line
// and the pending id: the log answers "what ran?".
func TestAuditSummary(t *testing.T) {
	h := newHarness(t)
	call := withInput(h.fixture("pretooluse-bash.json"), "command", "echo \x1b[31mred > out.txt")
	d := h.decide(call)
	var got []audit.Entry
	if err := audit.Open(filepath.Join(h.Store.Dir, "audit")).Read(func(_ []byte, e audit.Entry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	if last.Summary != `Bash echo \x1b[31mred > out.txt` || last.Pending != d.Pending || d.Pending == "" {
		t.Errorf("audit entry: summary %q, pending %q (want %q)", last.Summary, last.Pending, d.Pending)
	}
}

// The hook writes the summary from the call's decoded input; the CLI lists
// a pending record's from its canonical bytes (Summary). They agree, for
// every tool shape, odd characters included.
func TestSummaryFromInputMatchesRecord(t *testing.T) {
	h := newHarness(t)
	odd := "x \x1b[31m\u2028 \"q\" \\ <&> \t" + strings.Repeat("long ", 30)
	for _, tc := range []struct {
		fixture, field string
	}{
		{"pretooluse-bash.json", "command"},
		{"pretooluse-write.json", "file_path"},
		{"pretooluse-edit.json", "file_path"},
		{"pretooluse-webfetch.json", "url"},
		{"pretooluse-mcp.json", ""},
	} {
		call := with(h.fixture(tc.fixture), func(m map[string]any) {
			if tc.field != "" {
				input(m)[tc.field] = input(m)[tc.field].(string) + odd
			}
		})
		d := h.decide(call)
		if d.Pending == "" {
			t.Fatalf("%s: no pending record (%s %s)", tc.fixture, d.Behavior, d.Reason)
		}
		var last audit.Entry
		if err := audit.Open(filepath.Join(h.Store.Dir, "audit")).Read(func(_ []byte, e audit.Entry) error {
			last = e
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		p, err := h.Store.GetPending(d.Pending)
		if err != nil {
			t.Fatal(err)
		}
		if want := present.Summary(p); last.Summary != want || want == "" {
			t.Errorf("%s: hook summary %q, record summary %q", tc.fixture, last.Summary, want)
		}
	}
}

// approved_call_changed names the call that was approved.
func TestCallChangedNamesTheApproved(t *testing.T) {
	h := newHarness(t)
	call := withInput(h.fixture("pretooluse-bash.json"), "command", "echo one")
	d := h.decide(call)
	h.approve(d)
	changed := withInput(call, "command", "echo two")
	got := h.decide(changed)
	expect(t, "changed", got, Deny, ReasonCallChanged)
	if !strings.Contains(got.Message, "(Bash echo one, pending "+d.Pending+")") {
		t.Errorf("the approved call is not named: %q", got.Message)
	}
}

// TestOnHeldOnlyWhenHeld: the notification hook runs only when a call is
// held for a human: not on an allow, a protected deny or a deny without a
// wait.
func TestOnHeldOnlyWhenHeld(t *testing.T) {
	h := newHarness(t)
	var held []*state.Pending
	run := func(wait time.Duration, payload map[string]any) Decision {
		e := h.eng()
		e.Wait, e.PollInterval = wait, 10*time.Millisecond
		e.OnHeld = func(p *state.Pending) { held = append(held, p) }
		return e.Decide(context.Background(), h.call(payload))
	}
	bash := h.fixture("pretooluse-bash.json")
	cmd := func(c string) map[string]any { return withInput(bash, "command", c) }
	h.grantScope("Bash(ls *)", token.Any, token.MainAgent)
	expect(t, "allowed", run(200*time.Millisecond, cmd("ls -la")), Allow, ReasonScopedGrant)
	expect(t, "protected", run(200*time.Millisecond, cmd("cat "+filepath.Join(h.Store.Dir, "audit"))), Deny, ReasonProtected)
	expect(t, "no wait", run(0, cmd("echo hi")), Deny, ReasonNoGrant)
	if len(held) != 0 {
		t.Fatalf("OnHeld ran for a call nobody holds: %+v", held)
	}
	d := run(100*time.Millisecond, cmd("echo held"))
	expect(t, "held", d, Deny, ReasonNoGrant)
	if len(held) != 1 || held[0].ID != d.Pending || held[0].HeldUntil.IsZero() {
		t.Fatalf("OnHeld: %+v, want the held call %s", held, d.Pending)
	}
}

// The audit log says what ran: a tool without a command, path or URL (an
// MCP tool) is summarised by its arguments, so a transfer of 2000 to an
// attacker reads as such; long summaries are cut on a character boundary
// and escaped. Controls: a command and a path are summarised as before.
func TestSummaryNamesArguments(t *testing.T) {
	for _, c := range []struct {
		tool string
		in   map[string]any
		want string
	}{
		{"mcp__bank__transfer", map[string]any{"to": "attacker-sink", "amount": json.Number("2000")}, "mcp__bank__transfer amount=2000 to=attacker-sink"},
		{"mcp__x__y", map[string]any{"memo": "pay rent", "opts": map[string]any{"a": 1}, "ids": []any{1}, "n": nil}, `mcp__x__y ids=[...] memo="pay rent" n=null opts={...}`},
		{"Bash", map[string]any{"command": "go test ./...", "description": "run tests"}, "Bash go test ./..."},
		{"Write", map[string]any{"file_path": "/p/a.go", "content": "x"}, "Write /p/a.go"},
	} {
		if got := present.SummaryOfInput(c.tool, c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
	long := present.SummaryOfInput("mcp__x__y", map[string]any{"n": strings.Repeat("é", 60), "z": "\x1b[2J"})
	// Cut on a character boundary: no half of an é escaped as a byte.
	if !strings.HasSuffix(long, "...") || !utf8.ValidString(long) || strings.ContainsRune(long, 0x1b) || strings.Contains(long, `\xc3`) {
		t.Errorf("long summary: %q", long)
	}
}
