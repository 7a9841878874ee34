package console

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
)

// softKey is a passkey held in the test's memory: it signs assertions as
// an authenticator that verified its user does (user present and
// verified, a counter that goes up), so the console's decisions can be
// tested without a browser. browser_test.go signs with Chromium's.
type softKey struct {
	id    []byte
	key   *ecdsa.PrivateKey
	count uint32
}

func newSoftKey(t *testing.T) *softKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &softKey{id: id, key: k}
}

// public is the key as a passkey's record keeps it (COSE).
func (k *softKey) public(t *testing.T) []byte {
	t.Helper()
	pub, err := k.key.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	raw := pub.Bytes() // 0x04 || X || Y
	b, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: raw[1:33], YCoord: raw[33:]})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// register stores k as a passkey of tc's console for localhost.
func (k *softKey) register(t *testing.T, tc *testConsole) *Passkey {
	t.Helper()
	cred := webauthn.Credential{ID: k.id, PublicKey: k.public(t), AttestationType: "none",
		Flags: webauthn.CredentialFlags{UserPresent: true, UserVerified: true}}
	pk := &Passkey{ID: b64.EncodeToString(k.id), Name: "soft", RPID: "localhost", Created: time.Now().UTC(), Credential: cred}
	if err := tc.store.PutPasskey(pk); err != nil {
		t.Fatal(err)
	}
	return pk
}

// assert signs challenge at origin: authenticator data, client data and
// the signature, as a browser hands them to the page.
func (k *softKey) assert(t *testing.T, origin string, challenge []byte) (authData, clientData, sig []byte) {
	t.Helper()
	rp, err := RPID(origin)
	if err != nil {
		t.Fatal(err)
	}
	k.count++
	rpHash := sha256.Sum256([]byte(rp))
	authData = binary.BigEndian.AppendUint32(append(rpHash[:], flagUP|flagUV), k.count)
	clientData, _ = json.Marshal(map[string]any{"type": "webauthn.get", "challenge": b64.EncodeToString(challenge), "origin": origin,
		"crossOrigin": false})
	cdHash := sha256.Sum256(clientData)
	sum := sha256.Sum256(append(append([]byte{}, authData...), cdHash[:]...))
	if sig, err = ecdsa.SignASN1(rand.Reader, k.key, sum[:]); err != nil {
		t.Fatal(err)
	}
	return authData, clientData, sig
}

// credential is k's answer to challenge, as the page sends it.
func (k *softKey) credential(t *testing.T, origin string, challenge []byte) json.RawMessage {
	t.Helper()
	authData, clientData, sig := k.assert(t, origin, challenge)
	b, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"response": map[string]string{"clientDataJSON": b64.EncodeToString(clientData), "authenticatorData": b64.EncodeToString(authData),
			"signature": b64.EncodeToString(sig)},
		"clientExtensionResults": map[string]any{}})
	return b
}
