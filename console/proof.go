package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/loopguard/loopguard/audit"
)

// Proof is a signed decision as the audit log keeps it: the passkey's
// credential id, the statement it signed, and the WebAuthn assertion.
type Proof struct {
	Passkey   string // credential id, base64url
	Signed    string // the statement's canonical encoding
	Assertion string // authenticatorData.clientDataJSON.signature, each base64url
}

// Stamp copies p into audit entry e.
func (p Proof) Stamp(e audit.Entry) audit.Entry {
	e.Passkey, e.Signed, e.Assertion = p.Passkey, p.Signed, p.Assertion
	return e
}

// ProofOf reads the proof of audit entry e; ok is false when e has none.
func ProofOf(e audit.Entry) (p Proof, ok bool) {
	p = Proof{Passkey: e.Passkey, Signed: e.Signed, Assertion: e.Assertion}
	return p, p != Proof{}
}

var b64 = base64.RawURLEncoding

func assertionString(authData, clientData, sig []byte) string {
	return b64.EncodeToString(authData) + "." + b64.EncodeToString(clientData) + "." + b64.EncodeToString(sig)
}

// ErrBadProof is a signed decision that does not verify.
var ErrBadProof = errors.New("the passkey signature does not verify")

// WebAuthn authenticator data flags.
const (
	flagUP = 0x01 // user present
	flagUV = 0x04 // user verified
)

// VerifyProof checks p with the passkey's COSE public key alone: the
// assertion is over p's statement (its challenge), made at the statement's
// origin for its host (the RP ID), with the user present and verified, and
// signed by the key. It returns the statement.
func VerifyProof(p Proof, publicKey []byte) (Statement, error) {
	s, err := ParseStatement([]byte(p.Signed))
	if err != nil {
		return Statement{}, fmt.Errorf("%w: %w", ErrBadProof, err)
	}
	parts := strings.Split(p.Assertion, ".")
	if len(parts) != 3 {
		return s, fmt.Errorf("%w: the assertion is not three base64url parts", ErrBadProof)
	}
	var raw [3][]byte
	for i, part := range parts {
		if raw[i], err = b64.DecodeString(part); err != nil {
			return s, fmt.Errorf("%w: the assertion's part %d: %w", ErrBadProof, i+1, err)
		}
	}
	authData, clientData, sig := raw[0], raw[1], raw[2]
	var cd struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}
	if err := json.Unmarshal(clientData, &cd); err != nil {
		return s, fmt.Errorf("%w: client data: %w", ErrBadProof, err)
	}
	challenge, _ := s.Challenge()
	switch {
	case cd.Type != "webauthn.get":
		return s, fmt.Errorf("%w: client data type %q", ErrBadProof, cd.Type)
	case strings.TrimRight(cd.Challenge, "=") != b64.EncodeToString(challenge):
		return s, fmt.Errorf("%w: the assertion was made for another statement", ErrBadProof)
	case cd.Origin != s.Origin || cd.CrossOrigin:
		return s, fmt.Errorf("%w: made at %q, not at the console's origin %q", ErrBadProof, cd.Origin, s.Origin)
	}
	rp, err := RPID(s.Origin)
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrBadProof, err)
	}
	rpHash := sha256.Sum256([]byte(rp))
	if len(authData) < 37 || !bytes.Equal(authData[:32], rpHash[:]) {
		return s, fmt.Errorf("%w: authenticator data is not for %s", ErrBadProof, rp)
	}
	if authData[32]&flagUP == 0 || authData[32]&flagUV == 0 {
		return s, fmt.Errorf("%w: the user was not verified", ErrBadProof)
	}
	key, err := webauthncose.ParsePublicKey(publicKey)
	if err != nil {
		return s, fmt.Errorf("%w: the public key: %w", ErrBadProof, err)
	}
	cdHash := sha256.Sum256(clientData)
	ok, err := webauthncose.VerifySignature(key, append(append([]byte{}, authData...), cdHash[:]...), sig)
	if err != nil || !ok {
		return s, fmt.Errorf("%w: bad signature", ErrBadProof)
	}
	return s, nil
}

// RPID is the WebAuthn relying party id of a console at origin: its host.
func RPID(origin string) (string, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("origin %q has no host", origin)
	}
	return u.Hostname(), nil
}

// VerifyEntry checks the proof of audit entry e with the passkey's public
// key, and that the entry records what was signed: its pending id and
// digest, its decision (approve for an approve or a grant, deny-pending
// for a deny, grant for the rule granted).
func VerifyEntry(e audit.Entry, publicKey []byte) (Statement, error) {
	p, ok := ProofOf(e)
	if !ok {
		return Statement{}, errors.New("the entry is not signed")
	}
	s, err := VerifyProof(p, publicKey)
	if err != nil {
		return s, err
	}
	switch {
	case e.Pending != "" && e.Pending != s.Pending, e.Digest != "" && e.Digest != s.Digest:
		return s, fmt.Errorf("%w: the entry names another call than the one signed for", ErrBadProof)
	case e.Decision == "approve" && (s.Decision == Approve || s.Decision == Grant):
	case e.Decision == "deny-pending" && s.Decision == Deny && NoteHash(e.Detail) == s.Note:
	case e.Decision == "grant" && s.Decision == Grant && strings.HasSuffix(e.Detail, s.Rule):
	default:
		return s, fmt.Errorf("%w: the entry records %q, the passkey signed %q", ErrBadProof, e.Decision, s.Decision)
	}
	return s, nil
}
