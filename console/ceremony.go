package console

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/loopguard/loopguard/hooks"
)

// user is the console's one WebAuthn account: the human whose agent it
// guards. Every registered, not removed passkey is theirs.
type user struct{ creds []webauthn.Credential }

var userID = func() []byte { s := sha256.Sum256([]byte("loopguard console user")); return s[:16] }()

func (u *user) WebAuthnID() []byte                         { return userID }
func (u *user) WebAuthnName() string                       { return "loopguard" }
func (u *user) WebAuthnDisplayName() string                { return "loopguard approver" }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// theUser loads the active passkeys.
func (s *Server) theUser() (*user, map[string]*Passkey, error) {
	keys, err := s.o.Store.Passkeys()
	if err != nil {
		return nil, nil, err
	}
	u := &user{}
	byID := map[string]*Passkey{}
	for _, k := range keys {
		if k.Active() && k.RPID == s.rpID {
			u.creds = append(u.creds, k.Credential)
			byID[k.ID] = k
		}
	}
	return u, byID, nil
}

// --- registration: only through a link passkey add printed ---

type enrollRequest struct {
	Token      string          `json:"token"`
	Credential json.RawMessage `json:"credential,omitempty"`
}

// enrollLink checks registration link tok and spends a token of its own
// limit: a request without a valid link is refused before any limit.
func (s *Server) enrollLink(tok string) (Enrollment, error) {
	e, err := s.o.Store.Enrollment(tok, s.o.Now())
	if err != nil {
		return e, refuse(http.StatusForbidden, err.Error())
	}
	return e, s.enrollTake(fileKey("enroll\x00" + tok))
}

func (s *Server) enrollBegin(_ http.ResponseWriter, _ *http.Request, req *enrollRequest) (any, error) {
	e, err := s.enrollLink(req.Token)
	if err != nil {
		return nil, err
	}
	u, _, err := s.theUser()
	if err != nil {
		return nil, err
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range u.creds {
		exclude = append(exclude, c.Descriptor())
	}
	opts, data, err := s.wa.BeginRegistration(u, webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, err
	}
	put(s, s.enrolls, req.Token, ceremony{Data: *data, Expires: s.o.Now().Add(ceremonyTTL)})
	return map[string]any{"options": opts, "name": e.Name}, nil
}

func (s *Server) enrollFinish(_ http.ResponseWriter, _ *http.Request, req *enrollRequest) (any, error) {
	if _, err := s.enrollLink(req.Token); err != nil {
		return nil, err
	}
	c, ok := take(s, s.enrolls, req.Token)
	if !ok || !s.o.Now().Before(c.Expires) {
		return nil, refuse(http.StatusForbidden, "no registration was started with this link, or it took too long: reload the link")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(req.Credential)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the passkey's answer is malformed: "+errText(err))
	}
	u, _, err := s.theUser()
	if err != nil {
		return nil, err
	}
	cred, err := s.wa.CreateCredential(u, c.Data, parsed)
	if err != nil {
		return nil, refuse(http.StatusForbidden, "the passkey was not accepted: "+errText(err))
	}
	if !cred.Flags.UserVerified {
		return nil, refuse(http.StatusForbidden, "the passkey did not verify you (PIN, fingerprint or face): it cannot sign decisions")
	}
	// Spent only now, and only once: of two uses of one link, one wins.
	e, err := s.o.Store.ClaimEnrollment(req.Token, s.o.Now())
	if err != nil {
		return nil, refuse(http.StatusForbidden, err.Error())
	}
	pk := &Passkey{ID: b64.EncodeToString(cred.ID), Name: e.Name, RPID: s.rpID, Created: s.o.Now().UTC(), Credential: *cred}
	if err := s.o.Store.PutPasskey(pk); err != nil {
		return nil, err
	}
	if s.o.OnRegistered != nil {
		s.o.OnRegistered(pk)
	}
	return map[string]any{"ok": true, "name": pk.Name, "id": pk.ID}, nil
}

// --- sign-in: a passkey assertion over a random challenge ---

type loginRequest struct {
	Handle     string          `json:"handle,omitempty"`
	Credential json.RawMessage `json:"credential,omitempty"`
}

func (s *Server) loginBegin(_ http.ResponseWriter, _ *http.Request, _ *loginRequest) (any, error) {
	u, _, err := s.theUser()
	if err != nil {
		return nil, err
	}
	if len(u.creds) == 0 {
		return nil, refuse(http.StatusConflict, "no passkey is registered: run loopguard passkey add in your own terminal and open the link it prints")
	}
	opts, data, err := s.wa.BeginLogin(u, webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, err
	}
	h, err := s.sealLogin(ceremony{Data: *data, Expires: s.o.Now().Add(ceremonyTTL)})
	if err != nil {
		return nil, err
	}
	return map[string]any{"handle": h, "options": opts}, nil
}

func (s *Server) loginFinish(_ http.ResponseWriter, _ *http.Request, req *loginRequest) (any, error) {
	c, err := s.openLogin(req.Handle)
	if err != nil {
		return nil, refuse(http.StatusForbidden, err.Error())
	}
	pk, _, err := s.verifyAssertion(c.Data, req.Credential)
	if err != nil {
		return nil, refuse(http.StatusForbidden, err.Error())
	}
	if err := s.claimLogin(req.Handle, c); err != nil {
		return nil, refuse(http.StatusForbidden, err.Error())
	}
	tok, err := s.newSession(pk.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "passkey": pk.Name, "session": tok}, nil
}

// verifyAssertion checks an assertion against a ceremony's session data
// (challenge, origin, RP ID, user verification, a registered passkey, a
// counter that did not go back) and records the passkey's use.
func (s *Server) verifyAssertion(data webauthn.SessionData, raw json.RawMessage) (*Passkey, *protocol.ParsedCredentialAssertionData, error) {
	if len(raw) == 0 {
		return nil, nil, errors.New("refused: no passkey signature")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(raw)
	if err != nil {
		return nil, nil, errors.New("refused: the passkey's answer is malformed: " + errText(err))
	}
	// One at a time from the counter's read to its write: two assertions
	// verified at once would both pass against the same counter, and the
	// one written last could set it back.
	s.verifyMu.Lock()
	defer s.verifyMu.Unlock()
	u, byID, err := s.theUser()
	if err != nil {
		return nil, nil, err
	}
	cred, err := s.wa.ValidateLogin(u, data, parsed)
	if err != nil {
		return nil, nil, errors.New("refused: the passkey signature does not verify: " + errText(err))
	}
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return nil, nil, errors.New("refused: the passkey did not verify you")
	}
	if cred.Authenticator.CloneWarning {
		return nil, nil, errors.New("refused: the passkey's counter went back (a cloned authenticator?)")
	}
	pk := byID[b64.EncodeToString(cred.ID)]
	if pk == nil {
		return nil, nil, errors.New("refused: not a registered passkey")
	}
	pk.Credential.Authenticator.SignCount = cred.Authenticator.SignCount
	pk.LastUsed = s.o.Now().UTC()
	if err := s.o.Store.PutPasskey(pk); err != nil {
		return nil, nil, err
	}
	return pk, parsed, nil
}

// --- decisions: an assertion over the exact statement ---

type decisionRequest struct {
	Nonce      string          `json:"nonce,omitempty"`
	ID         string          `json:"id"`
	Digest     string          `json:"digest"`
	View       string          `json:"view"`
	Decision   string          `json:"decision"`
	Rule       string          `json:"rule,omitempty"`
	Note       string          `json:"note,omitempty"`
	Credential json.RawMessage `json:"credential,omitempty"`
}

type decisionCeremony struct {
	st      Statement
	note    string
	data    webauthn.SessionData
	session [32]byte
	expires time.Time
}

func (req decisionRequest) decision() Decision {
	return Decision{Kind: req.Decision, Rule: req.Rule, Note: req.Note}
}

// current checks that call req.ID is still open and is the call the page
// showed (its digest), shown as the page showed it (its view: the
// rendering, warnings included, and the rule offered), and, for a grant,
// that the rule is still the one offered.
func (s *Server) current(r *http.Request, req decisionRequest) (Call, int, error) {
	c, err := s.o.Backend.Get(r.Context(), req.ID)
	if errors.Is(err, ErrNotOpen) {
		return Call{}, http.StatusConflict, err
	}
	if err != nil {
		return Call{}, http.StatusNotFound, err
	}
	if c.Pending.Digest != req.Digest {
		return Call{}, http.StatusConflict, fmt.Errorf("refused: the call changed since the page showed it (digest %.12s, shown %.12s): look at it again", c.Pending.Digest, req.Digest)
	}
	// The rendering changes with no change of digest (its warning of
	// what changed in the project since the last decision): a click that
	// lands before the page redraws is refused, not taken for what the
	// human did not see.
	v := s.viewOf(c)
	if v.View != req.View {
		return Call{}, http.StatusConflict, errors.New("refused: what the page showed of the call changed since (its warning of what changed in the project, or its rendering): look at it again")
	}
	// The decision covers the project as of when the page was first
	// given this view (package hooks, ApproveWith); a view this server
	// never gave a page is no view a human saw.
	at, ok := s.firstShown(req.ID, req.View)
	if !ok {
		return Call{}, http.StatusConflict, errors.New("refused: this console never showed the call as the page has it: look at it again")
	}
	if c.Pending.PlantedAt.IsZero() || at.Before(c.Pending.PlantedAt) {
		c.Pending.PlantedAt = at
	}
	if req.Decision != Deny && v.TooLong != "" {
		// What is approved is what the page could show whole.
		return Call{}, http.StatusConflict, errors.New("refused: " + v.TooLong)
	}
	switch req.Decision {
	case Grant:
		if v.Rule == "" {
			return Call{}, http.StatusConflict, errors.New("no rule is offered for this call: " + v.NoRule)
		}
		if v.Rule != req.Rule {
			return Call{}, http.StatusConflict, errors.New("refused: the rule offered changed since the page showed it: look at it again")
		}
	case Approve, Deny:
		if req.Rule != "" {
			return Call{}, http.StatusBadRequest, errors.New("only a grant names a rule")
		}
	default:
		return Call{}, http.StatusBadRequest, fmt.Errorf("unknown decision %q", req.Decision)
	}
	if req.Note != "" && req.Decision != Deny {
		return Call{}, http.StatusBadRequest, errors.New("only a deny carries a note")
	}
	if len(req.Note) > hooks.MaxNote {
		return Call{}, http.StatusBadRequest, fmt.Errorf("the note is %d bytes; at most %d", len(req.Note), hooks.MaxNote)
	}
	return c, 0, nil
}

func (s *Server) decisionBegin(_ http.ResponseWriter, r *http.Request, req *decisionRequest) (any, error) {
	if _, code, err := s.current(r, *req); err != nil {
		return nil, refuse(code, err.Error())
	}
	nonce, err := randomString()
	if err != nil {
		return nil, err
	}
	st := Statement{V: statementVersion, Origin: s.o.Origin, Pending: req.ID, Digest: req.Digest, View: req.View, Decision: req.Decision,
		Rule: req.Rule, Note: NoteHash(req.Note), Nonce: nonce}
	challenge, err := st.Challenge()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, err.Error())
	}
	u, _, err := s.theUser()
	if err != nil {
		return nil, err
	}
	opts, data, err := s.wa.BeginLogin(u, webauthn.WithChallenge(challenge), webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, refuse(http.StatusConflict, errText(err))
	}
	put(s, s.decisions, nonce, &decisionCeremony{st: st, note: req.Note, data: *data, session: r.Context().Value(sessionKey{}).([32]byte),
		expires: s.o.Now().Add(ceremonyTTL)})
	return map[string]any{"nonce": nonce, "options": opts}, nil
}

func (s *Server) decisionFinish(_ http.ResponseWriter, r *http.Request, req *decisionRequest) (any, error) {
	if len(req.Credential) == 0 {
		return nil, refuse(http.StatusForbidden, "refused: a decision must be signed with your passkey")
	}
	// One use: a replayed assertion finds its nonce gone.
	dc, _ := take(s, s.decisions, req.Nonce)
	if dc == nil || !s.o.Now().Before(dc.expires) || dc.session != r.Context().Value(sessionKey{}).([32]byte) {
		return nil, refuse(http.StatusForbidden, "refused: this decision was not started on this page, was used already, or took too long: decide again")
	}
	st := dc.st
	if req.ID != st.Pending || req.Digest != st.Digest || req.View != st.View || req.Decision != st.Decision || req.Rule != st.Rule || req.Note != dc.note {
		return nil, refuse(http.StatusForbidden, "refused: the signature was made for another decision")
	}
	pk, parsed, err := s.verifyAssertion(dc.data, req.Credential)
	if err != nil {
		return nil, refuse(http.StatusForbidden, err.Error())
	}
	signed, err := st.Encode()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, err.Error())
	}
	resp := parsed.Raw.AssertionResponse
	proof := Proof{Passkey: pk.ID, Signed: string(signed),
		Assertion: assertionString(resp.AuthenticatorData, resp.ClientDataJSON, resp.Signature)}
	// What is logged must verify with the public key alone.
	if _, err := VerifyProof(proof, pk.Credential.PublicKey); err != nil {
		return nil, refuse(http.StatusForbidden, "refused: "+err.Error())
	}
	c, code, err := s.current(r, *req)
	if err != nil {
		return nil, refuse(code, err.Error())
	}
	msg, err := s.o.Backend.Decide(r.Context(), c, req.decision(), proof)
	if err != nil {
		return nil, refuse(http.StatusConflict, err.Error())
	}
	return map[string]any{"ok": true, "message": msg, "passkey": pk.Name}, nil
}

// errText is a protocol error with its details, for the page.
func errText(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return pe.Details + " (" + pe.DevInfo + ")"
	}
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return err.Error()
}
