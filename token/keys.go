package token

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// MasterKeySize is the size of the master key kept in the OS keyring.
const MasterKeySize = 32

// Labels under which subkeys are derived from the master key with HKDF.
// Each use has its own key, so a MAC of one kind can never pass as another.
const (
	LabelGrant = "loopguard v1 grant mac"
	LabelKeyID = "loopguard v1 key id"
	LabelAudit = "loopguard v1 audit seal"
	// LabelTicket keys the tickets the hook issues for the commands it
	// lets run (package ticket): a ticket can never pass as a grant.
	LabelTicket = "loopguard v1 ticket mac"
)

// SubKey derives the 32-byte key for label from the master key.
func SubKey(master []byte, label string) ([]byte, error) {
	if len(master) != MasterKeySize {
		return nil, fmt.Errorf("master key has %d bytes, want %d", len(master), MasterKeySize)
	}
	return hkdf.Key(sha256.New, master, nil, label, 32)
}

// Keys holds the subkeys a grant needs. Build it with NewKeys.
type Keys struct {
	mac    []byte
	ticket []byte
	// ID names the master key without revealing it, so a token minted under
	// an older key is told apart from a tampered one.
	ID string
}

// DeriveKeys derives from the master key everything a holder of it needs:
// the grant keys and the audit log's seal key (the one home of the
// derivation: the engine, the CLI and the benchmarks call it).
func DeriveKeys(master []byte) (*Keys, []byte, error) {
	k, err := NewKeys(master)
	if err != nil {
		return nil, nil, err
	}
	seal, err := SubKey(master, LabelAudit)
	if err != nil {
		return nil, nil, err
	}
	return k, seal, nil
}

// NewKeys derives the grant keys from the master key.
func NewKeys(master []byte) (*Keys, error) {
	mac, err := SubKey(master, LabelGrant)
	if err != nil {
		return nil, err
	}
	id, err := SubKey(master, LabelKeyID)
	if err != nil {
		return nil, err
	}
	ticket, err := SubKey(master, LabelTicket)
	if err != nil {
		return nil, err
	}
	return &Keys{mac: mac, ticket: ticket, ID: hex.EncodeToString(id[:8])}, nil
}

// TicketKey is the key that MACs tickets (LabelTicket).
func (k *Keys) TicketKey() []byte { return k.ticket }
