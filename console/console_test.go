package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopguard/loopguard/audit"
	"github.com/loopguard/loopguard/state"
)

// fakeBackend holds calls in memory and records what was decided, with
// its proof: the console's own checks are under test, not the minting.
type fakeBackend struct {
	mu      sync.Mutex
	open    map[string]*state.Pending
	decided []decided
}

type decided struct {
	id    string
	d     Decision
	proof Proof
	// plantedAt is the time the decision covers the project as of
	// (Call.Pending.PlantedAt, as the server hands it to Decide).
	plantedAt time.Time
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (f *fakeBackend) add(id, command string) *state.Pending {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open == nil {
		f.open = map[string]*state.Pending{}
	}
	p := &state.Pending{ID: id, Tool: "Bash", Digest: digestOf(command), Seen: time.Now(), Status: state.StatusOpen,
		HeldUntil: time.Now().Add(time.Minute), Descriptor: []byte(command)}
	f.open[id] = p
	return p
}

// change replaces call id's content (and so its digest) in place.
func (f *fakeBackend) change(id, command string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open[id].Digest, f.open[id].Descriptor = digestOf(command), []byte(command)
}

// plant sets call id's warning of what changed in the project (as
// hooks.RefreshPlanted does): its rendering changes, its digest does not.
func (f *fakeBackend) plant(id, warning string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := *f.open[id]
	p.Warnings = slices.Clone(p.Warnings)
	p.SetPlanted(warning)
	f.open[id] = &p
}

// viewNow is the view of call id as the page would get it now.
func (tc *testConsole) viewNow(t *testing.T, id string) string {
	t.Helper()
	// As the page gets it: the live queue (which notes when the server
	// first gave the page this view).
	for _, v := range tc.srv.queueView(t.Context()).Calls {
		if v.ID == id {
			return v.View
		}
	}
	t.Fatalf("%s is not in the queue", id)
	return ""
}

func (f *fakeBackend) decisions() []decided {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]decided(nil), f.decided...)
}

func (f *fakeBackend) Queue(context.Context) ([]Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, p := range f.open {
		cp := *p
		out = append(out, Call{Pending: &cp, Status: "held", Held: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pending.ID < out[j].Pending.ID })
	return out, nil
}

func (f *fakeBackend) Get(_ context.Context, id string) (Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.open[id]
	if !ok {
		return Call{}, ErrNotOpen
	}
	cp := *p
	return Call{Pending: &cp, Status: "held", Held: true}, nil
}

func (f *fakeBackend) Render(c Call) ([]Line, []Line) {
	cmd := string(c.Pending.Descriptor)
	head := []Line{{Text: "pending " + c.Pending.ID + " (held)", Kind: "title"}, {Text: "call:    Bash " + cmd}}
	if strings.Contains(cmd, "rm -rf") {
		head = append(head, Line{Text: "!!! DANGER: rm deletes recursively outside the project", Kind: "danger"})
	}
	for _, w := range c.Pending.Warnings {
		head = append(head, Line{Text: "warning: " + w, Kind: "warn"})
	}
	head = append(head, Line{Text: "digest: " + c.Pending.Digest, Kind: "digest"})
	// A line of the command that begins as a diff's (+ or -) is drawn
	// first as that line of a diff, as review's changes are.
	var body []Line
	for _, l := range strings.Split(cmd, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			body = append(body, Line{Text: l, Kind: "add"})
		case strings.HasPrefix(l, "-"):
			body = append(body, Line{Text: l, Kind: "del"})
		}
	}
	body = append(body, Line{Text: "The exact call:"}, Line{Text: "tool: \"Bash\""}, Line{Text: "input:"}, Line{Text: "  command: |"})
	for _, l := range strings.Split(cmd, "\n") { // every line, as review's full rendering
		body = append(body, Line{Text: "    " + l})
	}
	return head, body
}

func (f *fakeBackend) Rule(c Call) (string, error) {
	return "Bash(" + string(c.Pending.Descriptor) + ")", nil
}

func (f *fakeBackend) Decide(_ context.Context, c Call, d Decision, p Proof) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.open[c.Pending.ID]; !ok {
		return "", ErrNotOpen
	}
	delete(f.open, c.Pending.ID)
	f.decided = append(f.decided, decided{id: c.Pending.ID, d: d, proof: p, plantedAt: c.Pending.PlantedAt})
	return fmt.Sprintf("Decided %s: %s", c.Pending.ID, d.Kind), nil
}

// testConsole is a console on 127.0.0.1, reached as http://localhost:PORT.
type testConsole struct {
	srv    *Server
	b      *fakeBackend
	store  *Store
	origin string
	addr   string
	// refused counts the requests answered 4xx, by path.
	mu      sync.Mutex
	refused map[string]int
}

func newTestConsole(t *testing.T) *testConsole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	tc := &testConsole{b: &fakeBackend{}, store: &Store{Dir: t.TempDir()}, origin: "http://localhost:" + port, addr: ln.Addr().String(),
		refused: map[string]int{}}
	tc.srv, err = New(Options{Origin: tc.origin, Backend: tc.b, Store: tc.store, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		tc.srv.ServeHTTP(rec, r)
		if rec.code >= 400 {
			tc.mu.Lock()
			tc.refused[r.URL.Path]++
			tc.mu.Unlock()
		}
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return tc
}

func (tc *testConsole) refusals(path string) int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.refused[path]
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) { r.code = code; r.ResponseWriter.WriteHeader(code) }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.ResponseWriter.Write(b)
}
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// request sends a request to the console as a client that sets any Host
// and Origin it likes (what a browser never lets a page do).
func (tc *testConsole) request(t *testing.T, method, path, host, origin, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+tc.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestStatementCanonical(t *testing.T) {
	s := Statement{V: statementVersion, Origin: "http://localhost:8377", Pending: "abc", Digest: digestOf("x"), View: digestOf("v"), Decision: Grant,
		Rule: "Bash(ls <a> & b)", Nonce: "n"}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseStatement(b); err != nil || got != s {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	// Another encoding of the same fields is refused: one statement, one
	// challenge.
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	other, _ := json.MarshalIndent(m, "", " ")
	if _, err := ParseStatement(other); err == nil {
		t.Error("a non-canonical encoding was accepted")
	}
	view := digestOf("v")
	for name, bad := range map[string]Statement{
		"approve with rule": {V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Approve, Rule: "r", Nonce: "n"},
		"grant no rule":     {V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Grant, Nonce: "n"},
		"note on approve":   {V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Approve, Note: digestOf("n"), Nonce: "n"},
		"no nonce":          {V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Deny},
		"short digest":      {V: statementVersion, Origin: "o", Pending: "p", Digest: "abc", View: view, Decision: Deny, Nonce: "n"},
		"version":           {V: "v0", Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Deny, Nonce: "n"},
		"long rule":         {V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: view, Decision: Grant, Rule: strings.Repeat("x", 3000), Nonce: "n"},
	} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// v1Fixture is testdata/decision-v1.json: a decision signed under v1,
// before the statement named the view.
func v1Fixture(t *testing.T) (Proof, []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/decision-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Passkey   string `json:"passkey"`
		PublicKey string `json:"public_key"`
		Signed    string `json:"signed"`
		Assertion string `json:"assertion"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	pub, err := b64.DecodeString(f.PublicKey)
	if err != nil || f.Signed == "" {
		t.Fatalf("the fixture: %v", err)
	}
	return Proof{Passkey: f.Passkey, Signed: f.Signed, Assertion: f.Assertion}, pub
}

// Statements of both versions: a v1 statement (no view; the audit log
// keeps them, signed) still parses and verifies, and its entry too; a v2
// statement names the view as a SHA-256, and a v1 statement names none.
// The server issues v2 only (TestDecisionRefusedWhenTheViewChanged).
func TestStatementVersions(t *testing.T) {
	p, pub := v1Fixture(t)
	s, err := VerifyProof(p, pub)
	if err != nil || s.V != statementV1 || s.View != "" || s.Decision != Approve {
		t.Fatalf("the v1 fixture: %+v %v", s, err)
	}
	e := p.Stamp(audit.Entry{Decision: "approve", Pending: s.Pending, Digest: s.Digest})
	if _, err := VerifyEntry(e, pub); err != nil {
		t.Errorf("the v1 fixture's audit entry: %v", err)
	}
	// Control of the verifier: the fixture's statement with one byte
	// changed is not what was signed.
	forged := p
	forged.Signed = strings.Replace(p.Signed, `"approve"`, `"deny"`, 1)
	if _, err := VerifyProof(forged, pub); err == nil || !strings.Contains(err.Error(), "another statement") {
		t.Errorf("the v1 fixture made a deny: %v", err)
	}

	v1 := Statement{V: statementV1, Origin: "o", Pending: "p", Digest: digestOf("x"), Decision: Approve, Nonce: "n"}
	b, err := v1.Encode()
	if err != nil || string(b) != `{"v":"loopguard.console.decision.v1","origin":"o","pending":"p","digest":"`+digestOf("x")+`","decision":"approve","rule":"","note":"","nonce":"n"}` {
		t.Errorf("a v1 statement encodes as %s (%v); want v1's encoding, without a view", b, err)
	}
	v2 := v1
	v2.V, v2.View = statementVersion, digestOf("v")
	if b, err := v2.Encode(); err != nil || !strings.Contains(string(b), `"digest":"`+digestOf("x")+`","view":"`+digestOf("v")+`","decision"`) {
		t.Errorf("control: a v2 statement encodes as %s (%v)", b, err)
	}
	for name, c := range map[string]struct {
		s    Statement
		want string
	}{
		"v2 without a view":      {Statement{V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), Decision: Approve, Nonce: "n"}, "view is not a SHA-256"},
		"v2, a short view":       {Statement{V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: "abc", Decision: Approve, Nonce: "n"}, "view is not a SHA-256"},
		"v2, an upper-case view": {Statement{V: statementVersion, Origin: "o", Pending: "p", Digest: digestOf("x"), View: strings.ToUpper(digestOf("v")), Decision: Approve, Nonce: "n"}, "view is not a SHA-256"},
		"v1 with a view":         {Statement{V: statementV1, Origin: "o", Pending: "p", Digest: digestOf("x"), View: digestOf("v"), Decision: Approve, Nonce: "n"}, "names no view"},
	} {
		if _, err := c.s.Encode(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", name, err, c.want)
		}
	}
	// The same refusals when parsed from bytes: v2 without its view, and
	// v1 with an empty view written out (not v1's canonical encoding).
	for name, raw := range map[string]string{
		"v2 without a view": strings.Replace(string(b), statementV1, statementVersion, 1),
		"v1, empty view":    strings.Replace(string(b), `","decision"`, `","view":"","decision"`, 1),
	} {
		if _, err := ParseStatement([]byte(raw)); err == nil {
			t.Errorf("%s: parsed %s", name, raw)
		}
	}
}

// The console answers only under its own name and only its own page's
// requests: a DNS-rebound name (foreign Host) and another site's request
// (foreign Origin, cross-site fetch metadata, no Origin on a POST, a
// non-JSON body) are refused before anything is routed; GET changes
// nothing. Each with its control.
func TestHostOriginAndMethods(t *testing.T) {
	tc := newTestConsole(t)
	host := strings.TrimPrefix(tc.origin, "http://")
	// Control: the page and its state, under the console's name.
	if code, body, h := tc.request(t, "GET", "/", host, "", ""); code != 200 || !strings.Contains(body, "/app.js") ||
		h.Get("Content-Security-Policy") != contentSecurityPolicy || h.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("control: GET / = %d %q %v", code, body, h)
	}
	for _, bad := range []string{"rebind.example:" + strings.Split(host, ":")[1], tc.addr, "localhost", "evil.localhost:" + strings.Split(host, ":")[1]} {
		if code, body, _ := tc.request(t, "GET", "/api/state", bad, "", ""); code != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d %s; want 421", bad, code, body)
		}
	}
	begin := `{"token":"` + strings.Repeat("A", 43) + `"}`
	// Control: the console's own Origin reaches the handler (which
	// refuses the unknown link: 403 with its own message).
	if code, body, _ := tc.request(t, "POST", "/api/enroll/begin", host, tc.origin, begin); code != 403 || !strings.Contains(body, "not valid") {
		t.Fatalf("control: own origin: %d %s", code, body)
	}
	for name, origin := range map[string]string{
		"another site":            "https://evil.example",
		"another port, same host": "http://localhost:1",
		"the IP":                  "http://127.0.0.1:" + strings.Split(host, ":")[1],
		"none":                    "",
		"null":                    "null",
	} {
		code, body, _ := tc.request(t, "POST", "/api/enroll/begin", host, origin, begin)
		if code != 403 || !strings.Contains(body, "refused") {
			t.Errorf("Origin %s (%q): %d %s; want 403 refused", name, origin, code, body)
		}
	}
	req, _ := http.NewRequest("POST", "http://"+tc.addr+"/api/login/begin", strings.NewReader(`{}`))
	req.Host, req.Header["Origin"] = host, []string{tc.origin}
	req.Header.Set("Content-Type", "text/plain") // a form or no-cors fetch could send this
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %v %v; want 415", resp.StatusCode, err)
	}
	req, _ = http.NewRequest("GET", "http://"+tc.addr+"/api/state", nil)
	req.Host = host
	req.Header.Set("Sec-Fetch-Site", "same-site") // a page on another port of localhost
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("same-site fetch of the API: %v %v; want 403", resp.StatusCode, err)
	}
	// No state change on GET: the decision and sign-in endpoints are POST only.
	for _, p := range []string{"/api/decision/finish", "/api/decision/begin", "/api/enroll/finish", "/api/login/finish", "/api/logout"} {
		if code, _, _ := tc.request(t, "GET", p, host, "", ""); code != http.StatusMethodNotAllowed {
			t.Errorf("GET %s = %d; want 405", p, code)
		}
	}
	// The queue needs a sign-in.
	if code, _, _ := tc.request(t, "GET", "/api/queue", host, "", ""); code != 401 {
		t.Errorf("GET /api/queue without a sign-in = %d; want 401", code)
	}
}

// No limit is the whole server's: made-up registration links and sign-ins
// are answered (refused on their merits, never 429) however many; a valid
// link's registrations are limited per link (6, then 429), and another
// link is untouched (the control).
func TestRateLimits(t *testing.T) {
	tc := newTestConsole(t)
	host := strings.TrimPrefix(tc.origin, "http://")
	bogus := `{"token":"` + strings.Repeat("A", 43) + `"}`
	for i := range 50 {
		if code, _, _ := tc.request(t, "POST", "/api/enroll/begin", host, tc.origin, bogus); code != 403 {
			t.Fatalf("made-up link %d: %d; want 403", i, code)
		}
		if code, _, _ := tc.request(t, "POST", "/api/login/begin", host, tc.origin, `{}`); code != 409 {
			t.Fatalf("sign-in %d: %d; want 409 (no passkey)", i, code)
		}
	}
	link := func() string {
		tok, _, err := tc.store.NewEnrollment("phone", time.Minute, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return `{"token":"` + tok + `"}`
	}
	worn, fresh := link(), link()
	var codes []int
	for range 8 {
		code, _, _ := tc.request(t, "POST", "/api/enroll/begin", host, tc.origin, worn)
		codes = append(codes, code)
	}
	if codes[0] != 200 || codes[5] != 200 || codes[6] != 429 || codes[7] != 429 {
		t.Errorf("one link's registrations %v; want 6 begun, then 429", codes)
	}
	if code, body, _ := tc.request(t, "POST", "/api/enroll/begin", host, tc.origin, fresh); code != 200 {
		t.Errorf("control: another link: %d %s", code, body)
	}
}

func TestProofEntryRequiresItsFields(t *testing.T) {
	e := audit.Entry{Decision: "approve", Pending: "p"}
	if _, ok := ProofOf(e); ok {
		t.Error("an unsigned entry has a proof")
	}
	if _, err := VerifyEntry(e, nil); err == nil {
		t.Error("an unsigned entry verified")
	}
}
