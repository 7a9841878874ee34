package console

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// call sends one of the page's requests, signed in with session (a GET
// when body is nil), and decodes the answer into out; it returns the
// status and the answer's error, if any.
func (tc *testConsole) call(t *testing.T, session, path string, body, out any) (int, string) {
	t.Helper()
	method, rd := "GET", io.Reader(nil)
	if body != nil {
		b, _ := json.Marshal(body)
		method, rd = "POST", bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+tc.addr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.TrimPrefix(tc.origin, "http://")
	req.Header.Set("Authorization", "Bearer "+session)
	if body != nil {
		req.Header.Set("Origin", tc.origin)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	_ = json.Unmarshal(b, &e)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode, e.Error
}

// shownNow is call id as the page reads it from the queue now.
func (tc *testConsole) shownNow(t *testing.T, session, id string) callView {
	t.Helper()
	var q queueView
	if code, msg := tc.call(t, session, "/api/queue", nil, &q); code != http.StatusOK {
		t.Fatalf("queue: %d %s", code, msg)
	}
	for _, c := range q.Calls {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("call %s is not in the queue", id)
	return callView{}
}

// decideWith signs decision req with k as the page does: begin, then
// between (if any), then k's assertion over the challenge begin gave,
// then finish. It returns the status and error of finish, or of begin
// when begin refused.
func (tc *testConsole) decideWith(t *testing.T, k *softKey, session string, req decisionRequest, between func()) (int, string) {
	t.Helper()
	var b struct {
		Nonce   string `json:"nonce"`
		Options struct {
			PublicKey struct {
				Challenge string `json:"challenge"`
			} `json:"publicKey"`
		} `json:"options"`
	}
	if code, msg := tc.call(t, session, "/api/decision/begin", req, &b); code != http.StatusOK {
		return code, msg
	}
	if between != nil {
		between()
	}
	challenge, err := b64.DecodeString(strings.TrimRight(b.Options.PublicKey.Challenge, "="))
	if err != nil {
		t.Fatal(err)
	}
	req.Nonce, req.Credential = b.Nonce, k.credential(t, tc.origin, challenge)
	return tc.call(t, session, "/api/decision/finish", req, nil)
}

// The page showed a call with one warning of what changed in the project;
// the warning changes (a jailed call wrote another file) with the digest
// unchanged, before the page redraws: a decision naming what the page
// showed is refused, whether the change lands before the decision begins
// or between its beginning and its signature. The statement signs the
// view. Control: the call as the page now shows it is approved, and an
// unchanged rendering is approved at once.
func TestDecisionRefusedWhenTheViewChanged(t *testing.T) {
	tc := newTestConsole(t)
	k := newSoftKey(t)
	pk := k.register(t, tc)
	session, err := tc.srv.newSession(pk.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := tc.b.add("aaaaaaaaaaaaaaaaaaaaaaaa", "make")
	tc.b.plant(p.ID, "jailed calls changed 1 file in the project since your last decision: notes.txt")
	const refused = "what the page showed of the call changed since"

	for _, when := range []string{"before begin", "between begin and finish"} {
		drawn := tc.shownNow(t, session, p.ID)
		req := decisionRequest{ID: drawn.ID, Digest: drawn.Digest, View: drawn.View, Decision: Approve}
		warning := "jailed calls changed 2 files in the project since your last decision: notes.txt, Makefile (" + when + ")"
		var code int
		var msg string
		if when == "before begin" {
			tc.b.plant(p.ID, warning)
			code, msg = tc.decideWith(t, k, session, req, nil)
		} else {
			code, msg = tc.decideWith(t, k, session, req, func() { tc.b.plant(p.ID, warning) })
		}
		if code != http.StatusConflict || !strings.Contains(msg, refused) {
			t.Errorf("%s: %d %q; want 409 %q", when, code, msg, refused)
		}
		now := tc.shownNow(t, session, p.ID)
		if now.Digest != drawn.Digest || now.View == drawn.View {
			t.Fatalf("%s: the test did not change the view alone: digest %.12s → %.12s, view %.12s → %.12s",
				when, drawn.Digest, now.Digest, drawn.View, now.View)
		}
	}
	if ds := tc.b.decisions(); len(ds) != 0 {
		t.Fatalf("decided on a view the page did not show: %+v", ds)
	}

	// Control: the call as the page shows it now.
	drawn := tc.shownNow(t, session, p.ID)
	req := decisionRequest{ID: drawn.ID, Digest: drawn.Digest, View: drawn.View, Decision: Approve}
	if code, msg := tc.decideWith(t, k, session, req, nil); code != http.StatusOK {
		t.Fatalf("control: the call as shown now: %d %s", code, msg)
	}
	// Control: another call, its rendering unchanged, granted.
	q := tc.b.add("bbbbbbbbbbbbbbbbbbbbbbbb", "ls")
	shownQ := tc.shownNow(t, session, q.ID)
	grant := decisionRequest{ID: shownQ.ID, Digest: shownQ.Digest, View: shownQ.View, Decision: Grant, Rule: shownQ.Rule}
	if code, msg := tc.decideWith(t, k, session, grant, func() {}); code != http.StatusOK {
		t.Fatalf("control: an unchanged call: %d %s", code, msg)
	}

	ds := tc.b.decisions()
	if len(ds) != 2 || ds[0].id != p.ID || ds[1].id != q.ID {
		t.Fatalf("decisions %+v; want the call as shown now, then the unchanged one", ds)
	}
	for i, view := range []string{drawn.View, shownQ.View} {
		s, err := VerifyProof(ds[i].proof, k.public(t))
		if err != nil || s.V != statementVersion || s.View != view {
			t.Errorf("decision %d signed %+v (%v); want a %s statement of view %.12s", i, s, err, statementVersion, view)
		}
	}
}

// The queue's view of a call is the one the server checks a decision
// against, and it changes with every part of what the page draws of the
// call (a line's text or kind, a line moved from head to body, the rule
// or why none is offered, the too-long notice), never with the call's
// status line.
func TestViewCoversWhatIsDrawn(t *testing.T) {
	base := callView{ID: "p", Digest: digestOf("x"), Status: "held, 1m left", Held: true,
		Head: []Line{{Text: "pending p", Kind: "title"}, {Text: "warning: a", Kind: "warn"}},
		Body: []Line{{Text: "input:"}}, Rule: "Bash(x)"}
	same := base
	same.Status, same.Bytes = "held, 59s left", 99
	if shown(same) != shown(base) {
		t.Error("control: the status line changed the view")
	}
	for name, change := range map[string]func(v *callView){
		"warning text":      func(v *callView) { v.Head = []Line{v.Head[0], {Text: "warning: b", Kind: "warn"}} },
		"line kind":         func(v *callView) { v.Head = []Line{v.Head[0], {Text: "warning: a", Kind: "danger"}} },
		"head line to body": func(v *callView) { v.Head, v.Body = v.Head[:1], []Line{v.Head[1], v.Body[0]} },
		"rule":              func(v *callView) { v.Rule = "Bash(x *)" },
		"no rule":           func(v *callView) { v.Rule, v.NoRule = "", "a DANGER line" },
		"too long":          func(v *callView) { v.Body, v.TooLong = nil, "too long" },
	} {
		v := base
		v.Head, v.Body = slices.Clone(base.Head), slices.Clone(base.Body)
		change(&v)
		if shown(v) == shown(base) {
			t.Errorf("%s: the view did not change", name)
		}
	}
}

// TestDecisionDatedWhenShown: a decision covers the project as of when
// the page was first given the view it decided on, not as of the click:
// a jailed rewrite of a Makefile the warning on the page named already
// changes no word of the view (the eighty-eighth attack run, through
// review). The backend gets that time (Call.Pending.PlantedAt); hooks'
// ApproveWith makes it the approval's. Control: a view the page is given
// again later keeps its first time; a new view gets its own.
func TestDecisionDatedWhenShown(t *testing.T) {
	tc := newTestConsole(t)
	k := newSoftKey(t)
	pk := k.register(t, tc)
	session, err := tc.srv.newSession(pk.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := tc.b.add("aaaaaaaaaaaaaaaaaaaaaaaa", "make")
	tc.b.plant(p.ID, "jailed calls changed 1 file in the project since your last decision: Makefile")
	before := time.Now()
	drawn := tc.shownNow(t, session, p.ID)
	first := time.Now()
	time.Sleep(30 * time.Millisecond)
	if again := tc.shownNow(t, session, p.ID); again.View != drawn.View {
		t.Fatalf("the view changed with nothing changed: %.12s, %.12s", drawn.View, again.View)
	}
	time.Sleep(30 * time.Millisecond)
	clicked := time.Now()
	req := decisionRequest{ID: drawn.ID, Digest: drawn.Digest, View: drawn.View, Decision: Approve}
	if code, msg := tc.decideWith(t, k, session, req, nil); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, msg)
	}
	ds := tc.b.decisions()
	if len(ds) != 1 || ds[0].plantedAt.Before(before) || ds[0].plantedAt.After(first) {
		t.Fatalf("the decision covers the project as of %v; want when the page was first given its view, between %v and %v (clicked %v)",
			ds[0].plantedAt, before, first, clicked)
	}
}
