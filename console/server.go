package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/loopguard/loopguard/state"
)

// Call is one call waiting for a decision, as the backend found it.
type Call struct {
	Pending *state.Pending
	Host    string // the machine it waits on (Vault backend); "" for this one
	Status  string // for people: "held, 1m52s left", "open"
	Held    bool   // a hook holds it now: it runs as soon as it is approved
}

// Line is one line of a rendering, with what it is for the page's colours:
// "title", "danger", "warn", "digest", "add", "del", "hunk", or "".
type Line struct {
	Text string `json:"t"`
	Kind string `json:"k,omitempty"`
}

// Decision is what the human decided, before it is signed.
type Decision struct {
	Kind string // Approve, Grant, Deny
	Rule string // Grant: the rule, as Backend.Rule offered it
	Note string // Deny: the note shown to the model
}

// Backend is where the calls wait and how a decision is carried out: on
// this machine (the state directory and the keyring) or across the team
// (Vault). cmd/loopguard provides both; the console renders nothing itself.
type Backend interface {
	// Queue lists the calls waiting now, newest first.
	Queue(ctx context.Context) ([]Call, error)
	// Get returns call id as it is now; ErrNotOpen when it was decided
	// or its hook is gone.
	Get(ctx context.Context, id string) (Call, error)
	// Render is the call as loopguard review shows it: head (the call
	// in one line, danger, where it lands, warnings, the digest), then
	// body (the diff and the exact call).
	Render(c Call) (head, body []Line)
	// Rule is the narrowest rule an approve-and-grant of c would grant.
	Rule(c Call) (string, error)
	// Decide carries out d on c, signed by proof, and says what follows.
	Decide(ctx context.Context, c Call, d Decision, proof Proof) (string, error)
}

// ErrNotOpen is a call that can no longer be decided.
var ErrNotOpen = errors.New("this call was decided already, or its wait ended")

// Options configure a Server. Origin, Backend and Store are required.
type Options struct {
	// Origin is where the console is reached: http://localhost:PORT on
	// loopback, or https://NAME:PORT. Passkeys are bound to its host.
	Origin  string
	Backend Backend
	Store   *Store
	// Poll is how often the live view reads the queue (500 ms).
	Poll time.Duration
	// Push, when set, is told of each newly held call.
	Push *Push
	// OnError hears what no request can answer (a failed push).
	OnError func(error)
	// OnRegistered hears of each passkey registered (for the audit log).
	OnRegistered func(*Passkey)
	// Now is the clock (time.Now).
	Now func() time.Time
	// Elsewhere is the command that approves call id at a terminal, for
	// a call too long for the page (loopguard approve ID).
	Elsewhere func(id string) string
}

// Lifetimes.
const (
	sessionTTL  = 12 * time.Hour  // a sign-in
	ceremonyTTL = 2 * time.Minute // a challenge, from the page's request to its signature
	maxBody     = 64 << 10
)

// Server is the console's HTTP handler.
type Server struct {
	o      Options
	wa     *webauthn.WebAuthn
	rpID   string
	host   string // the Host header every request must carry
	secure bool   // https: cookies are Secure

	mu        sync.Mutex
	verifyMu  sync.Mutex // verifyAssertion: a passkey's counter, read then written
	sessions  map[[32]byte]*session
	enrolls   map[string]ceremony
	decisions map[string]*decisionCeremony
	// loginKey seals the sign-in challenges the server hands out, so that
	// it keeps nothing for a sign-in until one succeeds (spent): no
	// process without a passkey can fill its memory or use up a limit.
	loginKey []byte
	spent    map[[32]byte]time.Time
	// enrollLimits are the registration limits, one per link, made only
	// for a link that is valid: only its holder spends them.
	enrollLimits map[string]*bucket
	// shown is when each call's view the page has now was first computed
	// (noteShown), keyed by id and view.
	shown map[string]time.Time

	mux *http.ServeMux
}

type session struct {
	expires time.Time
	passkey string
	limit   *bucket // this sign-in's decisions: no other client spends it
}

type ceremony struct {
	Data    webauthn.SessionData `json:"data"`
	Expires time.Time            `json:"expires"`
}

//go:embed assets
var assets embed.FS

// New builds a console for o.
func New(o Options) (*Server, error) {
	if o.Backend == nil || o.Store == nil {
		return nil, errors.New("console: a backend and a store are required")
	}
	u, err := url.Parse(o.Origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("console origin %q is not scheme://host[:port]", o.Origin)
	}
	if u.Scheme == "http" && u.Hostname() != "localhost" {
		return nil, fmt.Errorf("console origin %q: without TLS the console is reached as http://localhost:PORT only (a passkey needs a secure context)", o.Origin)
	}
	if net.ParseIP(u.Hostname()) != nil {
		return nil, fmt.Errorf("console origin %q: a passkey is bound to a name, not an IP address", o.Origin)
	}
	o.Origin = u.Scheme + "://" + u.Host
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Elsewhere == nil {
		o.Elsewhere = func(id string) string { return "loopguard approve " + id }
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          u.Hostname(),
		RPDisplayName: "loopguard",
		RPOrigins:     []string{o.Origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			UserVerification: protocol.VerificationRequired,
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
		},
		AttestationPreference: protocol.PreferNoAttestation,
	})
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s := &Server{o: o, wa: wa, rpID: u.Hostname(), host: u.Host, secure: u.Scheme == "https",
		sessions: map[[32]byte]*session{}, enrolls: map[string]ceremony{}, decisions: map[string]*decisionCeremony{},
		loginKey: key, spent: map[[32]byte]time.Time{}, enrollLimits: map[string]*bucket{}}
	s.routes()
	return s, nil
}

// Origin is where the console is reached.
func (s *Server) Origin() string { return s.o.Origin }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.page)
	m.HandleFunc("GET /enroll", s.page)
	m.HandleFunc("GET /app.js", s.asset)
	m.HandleFunc("GET /app.css", s.asset)
	m.HandleFunc("GET /icon.svg", s.asset)
	m.HandleFunc("GET /api/state", s.apiState)
	m.HandleFunc("GET /api/queue", s.signedIn(s.apiQueue))
	m.HandleFunc("GET /api/events", s.signedIn(s.apiEvents))
	m.HandleFunc("POST /api/enroll/begin", api(s.enrollBegin))
	m.HandleFunc("POST /api/enroll/finish", api(s.enrollFinish))
	m.HandleFunc("POST /api/login/begin", api(s.loginBegin))
	m.HandleFunc("POST /api/login/finish", api(s.loginFinish))
	m.HandleFunc("POST /api/logout", s.logout)
	m.HandleFunc("POST /api/decision/begin", s.signedIn(s.limited(api(s.decisionBegin))))
	m.HandleFunc("POST /api/decision/finish", s.signedIn(s.limited(api(s.decisionFinish))))
	s.mux = m
}

// contentSecurityPolicy allows the console's own script, style and
// connections, and nothing else: no inline script or style, no frames, no
// form posting anywhere, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP checks every request before it is routed: the Host must be
// the console's (a DNS rebinding names another), a request that could
// change anything must come from the console's own page (Origin, Fetch
// metadata, a JSON body), and every answer carries the security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	h.Set("Cache-Control", "no-store")
	if s.secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if r.Host != s.host {
		// DNS rebinding: a page of another name resolved to this address.
		httpError(w, http.StatusMisdirectedRequest, "this console answers as "+s.o.Origin+" only")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.sameOrigin(r, true); err != nil {
			httpError(w, http.StatusForbidden, err.Error())
			return
		}
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "application/json" {
			httpError(w, http.StatusUnsupportedMediaType, "a request body must be application/json")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	} else if strings.HasPrefix(r.URL.Path, "/api/") {
		if err := s.sameOrigin(r, false); err != nil {
			httpError(w, http.StatusForbidden, err.Error())
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// sameOrigin refuses a request another site's page made: one with a
// foreign Origin, or that the browser marks cross-site or same-site (a
// page on another port of the same host is same-site). A state-changing
// request must name its Origin.
func (s *Server) sameOrigin(r *http.Request, mustName bool) error {
	o := r.Header.Get("Origin")
	switch {
	case o != "" && o != s.o.Origin:
		return fmt.Errorf("refused: a request from %q, not from the console's own page", o)
	case o == "" && mustName:
		return errors.New("refused: a request that changes anything must come from the console's own page (no Origin)")
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return nil
	}
	return errors.New("refused: a request from another site's page")
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		httpError(w, http.StatusInternalServerError, "missing page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	for ext, t := range ct {
		if strings.HasSuffix(name, ext) {
			w.Header().Set("Content-Type", t)
		}
	}
	_, _ = w.Write(b)
}

// A sign-in is a random token the page keeps in its memory (and its
// tab's sessionStorage, which belongs to this origin alone: scheme, host
// and port) and sends in the Authorization header. There is no cookie: a
// browser sends a localhost cookie to every port of localhost, so a dev
// server the agent starts on another port would receive it. A page of
// another origin cannot read the token nor make the browser send it.
const bearer = "Bearer "

// newSession signs passkey in and returns the token the page sends.
func (s *Server) newSession(passkey string) (string, error) {
	tok, err := randomString()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.sessions[sha256.Sum256([]byte(tok))] = &session{expires: s.o.Now().Add(sessionTTL), passkey: passkey, limit: decisionLimit()}
	s.mu.Unlock()
	return tok, nil
}

// sessionKey of r: the hash of the token it carries, if any.
func sessionKeyOf(r *http.Request) ([32]byte, bool) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, bearer) || len(h) == len(bearer) {
		return [32]byte{}, false
	}
	return sha256.Sum256([]byte(h[len(bearer):])), true
}

// sessionOf returns the request's sign-in (its key and the session), if
// it is live.
func (s *Server) sessionOf(r *http.Request) ([32]byte, *session, bool) {
	k, ok := sessionKeyOf(r)
	if !ok {
		return k, nil, false
	}
	se, ok := s.live(k)
	return k, se, ok
}

// live returns sign-in key if it still holds: not expired, and its
// passkey not removed (passkey remove, in another process, marks the
// passkey's file; every request and every open event stream reads it).
func (s *Server) live(key [32]byte) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.sessions[key]
	if !ok || !s.o.Now().Before(se.expires) {
		delete(s.sessions, key)
		return nil, false
	}
	if p, err := s.o.Store.Passkey(se.passkey); err != nil || !p.Active() {
		delete(s.sessions, key) // the passkey was removed: its sign-ins end
		return nil, false
	}
	return se, true
}

type sessionKey struct{}

func (s *Server) signedIn(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k, _, ok := s.sessionOf(r)
		if !ok {
			httpError(w, http.StatusUnauthorized, "sign in with your passkey first")
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, k)))
	}
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if k, ok := sessionKeyOf(r); ok {
		s.mu.Lock()
		delete(s.sessions, k)
		s.mu.Unlock()
	}
	writeJSON200(w, map[string]any{"ok": true})
}

// sealLogin wraps a sign-in ceremony into a handle only this server can
// open (HMAC under a key it keeps in memory), so nothing is stored until
// the sign-in succeeds.
func (s *Server) sealLogin(c ceremony) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, s.loginKey)
	m.Write(b)
	return b64.EncodeToString(b) + "." + b64.EncodeToString(m.Sum(nil)), nil
}

// openLogin opens a handle sealLogin made: it is refused when it was
// forged, expired, or spent by a sign-in (claimLogin).
func (s *Server) openLogin(h string) (ceremony, error) {
	var c ceremony
	bad := errors.New("this sign-in was not started here, was used, or took too long: try again")
	body, mac, ok := strings.Cut(h, ".")
	if !ok {
		return c, bad
	}
	b, err1 := b64.DecodeString(body)
	got, err2 := b64.DecodeString(mac)
	if err1 != nil || err2 != nil {
		return c, bad
	}
	m := hmac.New(sha256.New, s.loginKey)
	m.Write(b)
	if !hmac.Equal(got, m.Sum(nil)) || json.Unmarshal(b, &c) != nil || !s.o.Now().Before(c.Expires) {
		return c, bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.spent[sha256.Sum256(b)]; used {
		return c, bad
	}
	return c, nil
}

// claimLogin spends handle h of ceremony c once its assertion verified:
// of two sign-ins with one handle (an authenticator whose counter stays
// 0 signs the same challenge alike) one wins. Only a verified sign-in is
// recorded, so nothing without a passkey fills this.
func (s *Server) claimLogin(h string, c ceremony) error {
	body, _, _ := strings.Cut(h, ".")
	b, _ := b64.DecodeString(body)
	k := sha256.Sum256(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.spent[k]; used {
		return errors.New("this sign-in was used already: try again")
	}
	s.spent[k] = c.Expires // forgotten once it could not be used anyway
	return nil
}

func (s *Server) apiState(w http.ResponseWriter, r *http.Request) {
	_, se, ok := s.sessionOf(r)
	active := 0
	if keys, err := s.o.Store.Passkeys(); err == nil {
		for _, k := range keys {
			if k.Active() {
				active++
			}
		}
	}
	out := map[string]any{"signed_in": ok, "passkeys": active, "origin": s.o.Origin}
	if ok {
		if p, err := s.o.Store.Passkey(se.passkey); err == nil {
			out["passkey"] = p.Name
		}
	}
	writeJSON200(w, out)
}

// readBody decodes a request's JSON body strictly.
func readBody(r *http.Request, v any) error {
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("bad request body: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("bad request body: trailing data")
	}
	return nil
}

func writeJSON200(w http.ResponseWriter, v any) { writeJSONStatus(w, http.StatusOK, v) }

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// httpError answers with {"error": msg}: the page shows msg.
func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSONStatus(w, code, map[string]string{"error": msg})
}

// apiError is an API step's refusal: the page shows msg, with status code.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func refuse(code int, msg string) error { return &apiError{code, msg} }

// api is a JSON endpoint: the body is read strictly into a new Req (a bad
// one is 400), and step's answer is written with 200, its error as
// {"error": ...} with the apiError's status (500 for any other error).
func api[Req any](step func(w http.ResponseWriter, r *http.Request, req *Req) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := readBody(r, &req); err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		out, err := step(w, r, &req)
		if err != nil {
			code := http.StatusInternalServerError
			if ae, ok := err.(*apiError); ok {
				code = ae.code
			}
			httpError(w, code, err.Error())
			return
		}
		writeJSON200(w, out)
	}
}

// put starts a ceremony under key.
func put[V any](s *Server, m map[string]V, key string, v V) {
	s.mu.Lock()
	m[key] = v
	s.mu.Unlock()
}

// take ends the ceremony under key, returning it: each is used once.
func take[V any](s *Server, m map[string]V, key string) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := m[key]
	delete(m, key)
	return v, ok
}

func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return b64.EncodeToString(b), nil
}
