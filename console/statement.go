package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/loopguard/loopguard/token"
)

// Decisions a human can sign.
const (
	Approve = "approve" // approve the exact call once
	Grant   = "grant"   // approve it once and grant Rule
	Deny    = "deny"    // refuse it, with Note for the model
)

// statementVersion names the encoding below, the one the server issues;
// a verifier refuses any other but statementV1.
const statementVersion = "loopguard.console.decision.v2"

// statementV1 is the encoding before View: the same fields, in the same
// order, without it. The audit log keeps statements signed then, and
// audit verify checks them.
const statementV1 = "loopguard.console.decision.v1"

// maxStatement bounds an encoded statement: it is signed and logged whole
// (a rule or note that would make it longer is refused, never cut).
const maxStatement = 2048

// Statement is what one passkey assertion decides: its SHA-256 over the
// canonical encoding is the WebAuthn challenge.
type Statement struct {
	V        string `json:"v"`
	Origin   string `json:"origin"`         // the console's origin (the passkey is bound to its host)
	Pending  string `json:"pending"`        // the pending id
	Digest   string `json:"digest"`         // the call's digest as the page showed it
	View     string `json:"view,omitempty"` // SHA-256 hex of what the page showed of the call (v2; none in v1)
	Decision string `json:"decision"`       // Approve, Grant or Deny
	Rule     string `json:"rule"`           // the rule granted (Grant), else ""
	Note     string `json:"note"`           // SHA-256 hex of the note shown to the model (Deny with a note), else ""
	Nonce    string `json:"nonce"`          // the server's, one per decision
}

// NoteHash is how a statement names a deny's note.
func NoteHash(note string) string {
	if note == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(note))
	return hex.EncodeToString(sum[:])
}

// Encode returns the canonical encoding (the fields in their fixed order,
// as encoding/json writes them, HTML characters escaped).
func (s Statement) Encode() ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if len(b) > maxStatement {
		return nil, fmt.Errorf("the decision is too long to sign (%d bytes, at most %d)", len(b), maxStatement)
	}
	return b, nil
}

// Challenge is the WebAuthn challenge for s.
func (s Statement) Challenge() ([]byte, error) {
	b, err := s.Encode()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

func (s Statement) check() error {
	switch {
	case s.V == statementV1 && s.View != "":
		return errors.New("a v1 statement names no view")
	case s.V == statementVersion && !token.IsDigest(s.View):
		return errors.New("statement view is not a SHA-256")
	case s.V != statementVersion && s.V != statementV1:
		return fmt.Errorf("statement version %q, want %q", s.V, statementVersion)
	case s.Origin == "" || s.Pending == "" || s.Nonce == "":
		return errors.New("statement without its origin, pending id or nonce")
	case !token.IsDigest(s.Digest):
		return errors.New("statement digest is not a SHA-256")
	case s.Note != "" && !token.IsDigest(s.Note):
		return errors.New("statement note is not a SHA-256")
	}
	switch s.Decision {
	case Approve, Deny:
		if s.Rule != "" {
			return errors.New("only a grant names a rule")
		}
	case Grant:
		if s.Rule == "" {
			return errors.New("a grant names its rule")
		}
	default:
		return fmt.Errorf("unknown decision %q", s.Decision)
	}
	if s.Note != "" && s.Decision != Deny {
		return errors.New("only a deny carries a note")
	}
	return nil
}

// ParseStatement reads a statement from its canonical encoding; any other
// encoding of the same fields is refused.
func ParseStatement(b []byte) (Statement, error) {
	var s Statement
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Statement{}, fmt.Errorf("statement: %w", err)
	}
	again, err := s.Encode()
	if err != nil {
		return Statement{}, err
	}
	if !bytes.Equal(again, b) {
		return Statement{}, errors.New("statement is not in its canonical encoding")
	}
	return s, nil
}
