package vault

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loopguard/loopguard/token"
)

// Transit mints and verifies grants with a Transit HMAC key (type hmac, or
// any key transit/hmac accepts, with sha2-256). The key never leaves Vault.
type Transit struct {
	C     *Client
	Mount string // "transit"
	Key   string // "loopguard"
}

// keyIDLabel separates Vault key IDs from keyring ones.
const keyIDLabel = "loopguard vault transit key\x00"

// KeyID names version of the Transit key in a token's 8-byte key ID: four
// bytes that name the mount and key, then the version, big-endian. A token
// minted under another key or version is told apart from a tampered one, and
// rotation works: the hook verifies with the version the token names.
func (t *Transit) KeyID(version uint32) string {
	sum := sha256.Sum256([]byte(keyIDLabel + t.Mount + "/" + t.Key))
	var b [8]byte
	copy(b[:4], sum[:4])
	binary.BigEndian.PutUint32(b[4:], version)
	return hex.EncodeToString(b[:])
}

// version returns the key version a key ID names, or false when the key ID
// names another key.
func (t *Transit) version(keyID string) (uint32, bool) {
	b, err := hex.DecodeString(keyID)
	if err != nil || len(b) != 8 {
		return 0, false
	}
	v := binary.BigEndian.Uint32(b[4:])
	return v, v > 0 && t.KeyID(v) == keyID
}

func (t *Transit) path(op string) string {
	return t.Mount + "/" + op + "/" + url.PathEscape(t.Key)
}

// LatestVersion reads the key's latest version (the approver's policy
// allows reading the key's metadata, never exporting it).
func (t *Transit) LatestVersion(ctx context.Context) (uint32, error) {
	var out struct {
		Data struct {
			LatestVersion uint32 `json:"latest_version"`
		} `json:"data"`
	}
	if err := t.C.Do(ctx, http.MethodGet, t.Mount+"/keys/"+url.PathEscape(t.Key), nil, &out); err != nil {
		return 0, err
	}
	if out.Data.LatestVersion == 0 {
		return 0, fmt.Errorf("vault transit key %s/%s has no version", t.Mount, t.Key)
	}
	return out.Data.LatestVersion, nil
}

// Mint has Vault MAC g under the key's latest version. It needs a token
// whose policy allows transit/hmac: an approver's, never the hook's.
func (t *Transit) Mint(ctx context.Context, g token.Grant, now time.Time) (token.Grant, error) {
	ver, err := t.LatestVersion(ctx)
	if err != nil {
		return token.Grant{}, err
	}
	return t.MintVersion(ctx, g, ver, now)
}

// MintVersion is Mint under one key version.
func (t *Transit) MintVersion(ctx context.Context, g token.Grant, ver uint32, now time.Time) (token.Grant, error) {
	kid := t.KeyID(ver)
	msg, err := g.ToSign(kid, now)
	if err != nil {
		return token.Grant{}, err
	}
	var out struct {
		Data struct {
			HMAC string `json:"hmac"`
		} `json:"data"`
	}
	body := map[string]any{"input": base64.StdEncoding.EncodeToString(msg), "algorithm": "sha2-256", "key_version": ver}
	if err := t.C.Do(ctx, http.MethodPost, t.path("hmac"), body, &out); err != nil {
		return token.Grant{}, err
	}
	mac, err := parseHMAC(out.Data.HMAC, ver)
	if err != nil {
		return token.Grant{}, err
	}
	g.KeyID, g.MAC = kid, mac
	return g, nil
}

// parseHMAC reads "vault:v<ver>:<base64 of 32 bytes>".
func parseHMAC(s string, ver uint32) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, "vault:v"+strconv.FormatUint(uint64(ver), 10)+":")
	if !ok {
		return nil, fmt.Errorf("vault transit returned an hmac for another key version")
	}
	mac, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || len(mac) != sha256.Size {
		return nil, fmt.Errorf("vault transit returned an hmac that is not 32 bytes of base64")
	}
	return mac, nil
}

// Verify checks that g allows call at time now, as token.Keys.Verify does,
// with the MAC checked by transit/verify under the key version g names. A
// grant that does not verify is token.ErrBadMAC (or another token error); a
// Vault that gives no answer is an *Error (see Reason).
func (t *Transit) Verify(ctx context.Context, g *token.Grant, call token.Call, now time.Time) error {
	msg, err := g.SignedFor(call)
	if err != nil {
		return err
	}
	ver, ok := t.version(g.KeyID)
	if !ok {
		return token.ErrWrongKey
	}
	var out struct {
		Data struct {
			Valid *bool `json:"valid"`
		} `json:"data"`
	}
	body := map[string]any{
		"input":     base64.StdEncoding.EncodeToString(msg),
		"hmac":      "vault:v" + strconv.FormatUint(uint64(ver), 10) + ":" + base64.StdEncoding.EncodeToString(g.MAC),
		"algorithm": "sha2-256",
	}
	if err := t.C.Do(ctx, http.MethodPost, t.path("verify"), body, &out); err != nil {
		return err
	}
	if out.Data.Valid == nil {
		return &Error{Op: "POST " + t.path("verify"), Msg: "answer has no valid field", kind: ErrUnavailable}
	}
	if !*out.Data.Valid {
		return token.ErrBadMAC
	}
	if !now.Before(g.Expiry) {
		return token.ErrExpired
	}
	return nil
}

// probeInput is what the probes below MAC: never a grant's message (those
// start with the token package's label).
var probeInput = base64.StdEncoding.EncodeToString([]byte("loopguard doctor probe: not a grant"))

// CanMint asks Vault to MAC a probe with the key: true when it did (this
// token could mint grants), false when Vault refused with 403. Any other
// answer is an error.
func (t *Transit) CanMint(ctx context.Context) (bool, error) {
	err := t.C.Do(ctx, http.MethodPost, t.path("hmac"), map[string]any{"input": probeInput, "algorithm": "sha2-256"}, nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrDenied):
		return false, nil
	}
	return false, err
}

// CanVerify checks that the token may call transit/verify with the key (a
// probe MAC that Vault answers as not valid).
func (t *Transit) CanVerify(ctx context.Context) error {
	var out struct {
		Data struct {
			Valid *bool `json:"valid"`
		} `json:"data"`
	}
	body := map[string]any{"input": probeInput, "algorithm": "sha2-256",
		"hmac": "vault:v1:" + base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))}
	if err := t.C.Do(ctx, http.MethodPost, t.path("verify"), body, &out); err != nil {
		return err
	}
	if out.Data.Valid == nil || *out.Data.Valid {
		return fmt.Errorf("vault transit/verify gave an unexpected answer to the probe")
	}
	return nil
}
