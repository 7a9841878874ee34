package token

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Scope values with a fixed meaning. Any other scope is a rule in Claude
// Code's permission grammar (see package scope).
const (
	ScopeCall = "call" // exact, single-use grant for one digest
	Any       = "*"    // wildcard session or agent (scoped grants only), arg_hash of scoped grants
	MainAgent = "main" // agent_id of calls made by the main agent
)

// Limits of the token format.
const (
	MaxFieldLen = 4096
	MaxTokenLen = 16 << 10
	tokenPrefix = "lg1."
	macLabel    = "loopguard grant v1\x00"
	keyIDLen    = 8
)

// Errors returned by Parse and Verify. Each failure class has its own, so a
// parse bug can never pass as a MAC failure or the other way round.
var (
	ErrMalformed    = errors.New("malformed token")
	ErrWrongKey     = errors.New("token was minted under another key")
	ErrBadMAC       = errors.New("token MAC does not verify")
	ErrExpired      = errors.New("token expired")
	ErrWrongSession = errors.New("token is for another session")
	ErrWrongAgent   = errors.New("token is for another agent")
	ErrWrongTool    = errors.New("token is for another tool")
	ErrWrongDigest  = errors.New("token is for another call")
)

// Grant is an approval token: seven fields MACed together.
type Grant struct {
	Principal string
	Agent     string
	Session   string
	Tool      string
	ArgHash   string
	Scope     string
	Expiry    time.Time // whole seconds
	KeyID     string    // hex, names the key the MAC was made with
	MAC       []byte
}

// Exact reports whether g is a single-use grant for one call.
func (g *Grant) Exact() bool { return g.Scope == ScopeCall }

// ID is a short stable name for the grant, derived from its token.
func (g *Grant) ID() string {
	sum := sha256.Sum256([]byte(g.String()))
	return hex.EncodeToString(sum[:6])
}

// Mint fills in the key ID and MAC of g after checking its fields.
func (k *Keys) Mint(g Grant, now time.Time) (Grant, error) {
	msg, err := g.ToSign(k.ID, now)
	if err != nil {
		return Grant{}, err
	}
	g.KeyID = k.ID
	g.MAC = k.macBytes(msg)
	return g, nil
}

// Call is what a grant is verified against: the values of the call about to
// run, never the grant's own.
type Call struct {
	Session string
	Agent   string
	Tool    string
	Digest  string // the call's digest; ignored for scoped grants
}

// Verify checks that g allows call at time now. It recomputes the MAC from
// the grant's principal, scope and expiry with the call's own session, agent,
// tool and digest (or the grant's explicit wildcards, for scoped grants).
func (k *Keys) Verify(g *Grant, call Call, now time.Time) error {
	if err := g.check(); err != nil {
		return err
	}
	if g.KeyID != k.ID {
		return ErrWrongKey
	}
	msg, err := g.SignedFor(call)
	if err != nil {
		return err
	}
	if !hmac.Equal(k.macBytes(msg), g.MAC) {
		return ErrBadMAC
	}
	if !now.Before(g.Expiry) {
		return ErrExpired
	}
	return nil
}

// SignedFor returns the bytes a MAC over g must cover for g to allow call:
// the label and the canonical fields, with the call's own session, agent,
// tool and digest (or the grant's explicit wildcards, for scoped grants) and
// the grant's key ID. It is the one home of that rule for every custody of
// the key (the keyring's Keys, or a Vault Transit key).
func (g *Grant) SignedFor(call Call) ([]byte, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	session, agent, arg := call.Session, call.Agent, call.Digest
	if g.Session != session {
		if g.Exact() || g.Session != Any {
			return nil, ErrWrongSession
		}
		session = Any
	}
	if g.Agent != agent {
		if g.Exact() || g.Agent != Any {
			return nil, ErrWrongAgent
		}
		agent = Any
	}
	if g.Tool != call.Tool {
		return nil, ErrWrongTool
	}
	if !g.Exact() {
		arg = Any
	} else if g.ArgHash != arg {
		return nil, ErrWrongDigest
	}
	return signed(g.Principal, agent, session, call.Tool, arg, g.Scope, g.Expiry, g.KeyID), nil
}

// ToSign checks g's fields for minting under keyID and returns the bytes its
// MAC must cover. Custodies other than the keyring (a Vault Transit key)
// mint with it: they compute the MAC over these bytes and set g.KeyID and
// g.MAC.
func (g *Grant) ToSign(keyID string, now time.Time) ([]byte, error) {
	g.Expiry = time.Unix(g.Expiry.Unix(), 0).UTC()
	if err := g.check(); err != nil {
		return nil, err
	}
	if !g.Expiry.After(now) {
		return nil, errors.New("cannot mint a grant that has already expired")
	}
	if len(keyID) != 2*keyIDLen {
		return nil, fmt.Errorf("%w: bad key id", ErrMalformed)
	}
	return signed(g.Principal, g.Agent, g.Session, g.Tool, g.ArgHash, g.Scope, g.Expiry, keyID), nil
}

func (g *Grant) check() error {
	for _, f := range []struct{ name, v string }{
		{"principal", g.Principal}, {"agent_id", g.Agent}, {"session_id", g.Session},
		{"tool", g.Tool}, {"arg_hash", g.ArgHash}, {"scope", g.Scope},
	} {
		if f.v == "" {
			return fmt.Errorf("%w: empty %s", ErrMalformed, f.name)
		}
		if len(f.v) > MaxFieldLen {
			return fmt.Errorf("%w: %s longer than %d bytes", ErrMalformed, f.name, MaxFieldLen)
		}
		if !utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0) {
			return fmt.Errorf("%w: %s is not clean utf-8", ErrMalformed, f.name)
		}
	}
	if g.Exact() {
		if !IsDigest(g.ArgHash) {
			return fmt.Errorf("%w: exact grant needs a sha-256 arg_hash", ErrMalformed)
		}
		if g.Session == Any || g.Agent == Any {
			return fmt.Errorf("%w: exact grant cannot have a wildcard session or agent", ErrMalformed)
		}
	} else if g.ArgHash != Any {
		return fmt.Errorf("%w: scoped grant must have arg_hash %q", ErrMalformed, Any)
	}
	if g.Expiry.Unix() <= 0 {
		return fmt.Errorf("%w: no expiry", ErrMalformed)
	}
	return nil
}

// fields encodes the seven fields and the key ID: each string as a 2-byte
// big-endian length and its bytes, in a fixed order, the expiry as 8 bytes.
func fields(principal, agent, session, tool, arg, scope string, expiry time.Time, keyID string) []byte {
	var b bytes.Buffer
	for _, s := range []string{keyID, principal, agent, session, tool, arg, scope} {
		_ = binary.Write(&b, binary.BigEndian, uint16(len(s)))
		b.WriteString(s)
	}
	_ = binary.Write(&b, binary.BigEndian, uint64(expiry.Unix()))
	return b.Bytes()
}

// signed is the message a grant MAC covers: the label, then the fields with
// the key ID in hex (as Grant.KeyID holds it; the token string carries its
// raw bytes).
func signed(principal, agent, session, tool, arg, scope string, expiry time.Time, keyID string) []byte {
	return append([]byte(macLabel), fields(principal, agent, session, tool, arg, scope, expiry, keyID)...)
}

func (k *Keys) macBytes(msg []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write(msg)
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding.Strict()

// String encodes g as "lg1.<fields>.<mac>", both parts unpadded base64url.
func (g *Grant) String() string {
	kid, _ := hex.DecodeString(g.KeyID)
	raw := fields(g.Principal, g.Agent, g.Session, g.Tool, g.ArgHash, g.Scope, g.Expiry, string(kid))
	return tokenPrefix + b64.EncodeToString(raw) + "." + b64.EncodeToString(g.MAC)
}

// Parse decodes a token string strictly: one version, no whitespace, no
// padding, no trailing bytes, every field checked.
func Parse(s string) (*Grant, error) {
	if len(s) > MaxTokenLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxTokenLen)
	}
	rest, ok := strings.CutPrefix(s, tokenPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: unknown version", ErrMalformed)
	}
	body, mac, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(mac, ".") {
		return nil, fmt.Errorf("%w: want two parts", ErrMalformed)
	}
	raw, err := b64.DecodeString(body)
	if err != nil || b64.EncodeToString(raw) != body {
		return nil, fmt.Errorf("%w: bad base64 in fields", ErrMalformed)
	}
	macBytes, err := b64.DecodeString(mac)
	if err != nil || len(macBytes) != sha256.Size || b64.EncodeToString(macBytes) != mac {
		return nil, fmt.Errorf("%w: bad mac encoding", ErrMalformed)
	}
	var vals [7]string
	r := bytes.NewReader(raw)
	for i := range vals {
		var n uint16
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return nil, fmt.Errorf("%w: truncated fields", ErrMalformed)
		}
		if int(n) > r.Len() {
			return nil, fmt.Errorf("%w: truncated fields", ErrMalformed)
		}
		buf := make([]byte, n)
		_, _ = io.ReadFull(r, buf)
		vals[i] = string(buf)
	}
	var exp uint64
	if err := binary.Read(r, binary.BigEndian, &exp); err != nil {
		return nil, fmt.Errorf("%w: truncated expiry", ErrMalformed)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", ErrMalformed)
	}
	if len(vals[0]) != keyIDLen {
		return nil, fmt.Errorf("%w: bad key id", ErrMalformed)
	}
	if exp == 0 || exp > 1<<62 {
		return nil, fmt.Errorf("%w: bad expiry", ErrMalformed)
	}
	g := &Grant{
		KeyID:     hex.EncodeToString([]byte(vals[0])),
		Principal: vals[1], Agent: vals[2], Session: vals[3],
		Tool: vals[4], ArgHash: vals[5], Scope: vals[6],
		Expiry: time.Unix(int64(exp), 0).UTC(),
		MAC:    macBytes,
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	return g, nil
}
