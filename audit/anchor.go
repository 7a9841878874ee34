package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The anchor ties the log, and the state directory it lives in, to a record
// kept outside that directory (in the OS keyring, beside the key: package
// keyring stores it, this package makes and checks it). A state directory
// that was removed (and made again, empty, by the next hook), replaced by
// another, or rolled back to an older copy carries its own head and seal
// along, so the head alone cannot tell; the anchor can:
//
//   - the directory's identity: 16 random bytes in the file "id" beside
//     the log, written once when loopguard sets the directory up (init), and
//     named by the anchor;
//   - a sealed point of the log (seq, hash of that line, size up to it),
//     written whenever a command that holds the key seals: the log must
//     still hold that very line where the anchor says.
//
// The record is MACed with the seal key under a label of its own.

// idName is the file holding the identity of the state directory.
const idName = "id"

// idLen is the identity's length in bytes (hex in the file).
const idLen = 16

// anchorLabel separates anchor MACs from any other MAC made with the seal key.
const anchorLabel = "loopguard audit anchor v1\x00"

// anchorVersion is the record's format.
const anchorVersion = 1

// ReasonStateLost is the reason code of a state directory that is not the
// one its anchor names (the hook's deny, doctor's failure).
const ReasonStateLost = "state_lost"

// anchorRecord is the record, as stored.
type anchorRecord struct {
	V  int    `json:"v"`
	ID string `json:"id"`
	point
	MAC string `json:"mac"`
}

// anchorMAC is HMAC-SHA256(key, label || id || seq || hash || size), with
// id and hash as raw bytes and seq and size as 8-byte big-endian integers.
func anchorMAC(key []byte, id string, p point) []byte {
	rawID, _ := hex.DecodeString(id)
	rawHash, _ := hex.DecodeString(p.Hash)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(anchorLabel))
	m.Write(rawID)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(p.Seq))
	m.Write(n[:])
	m.Write(rawHash)
	binary.BigEndian.PutUint64(n[:], uint64(p.Size))
	m.Write(n[:])
	return m.Sum(nil)
}

func validID(id string) bool {
	b, err := hex.DecodeString(id)
	return err == nil && len(b) == idLen && hex.EncodeToString(b) == id
}

// ID returns the identity of the state directory the log lives in: "" when
// it has none (set up before identities, or made again after it was
// removed).
func (l *Log) ID() (string, error) {
	b, err := readSmall(l.path(idName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("failed to read the state directory's identity: %w", err)
	}
	id := strings.TrimSuffix(string(b), "\n")
	if !validID(id) {
		return "", fmt.Errorf("the state directory's identity %s is malformed", l.path(idName))
	}
	return id, nil
}

// NewID gives the state directory a fresh random identity, replacing any:
// for loopguard init of a directory that has none, and for taking a lost
// one on (restart --accept-loss).
func (l *Log) NewID() (string, error) {
	b := make([]byte, idLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("failed to make the state directory's identity: %w", err)
	}
	id := hex.EncodeToString(b)
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return "", fmt.Errorf("failed to create audit directory: %w", err)
	}
	if err := writeAtomic(l.path(idName), []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("failed to write the state directory's identity: %w", err)
	}
	return id, nil
}

// Kept reports, with two lstats and no key, whether the log's directory is
// one loopguard set up: it has an identity, or (set up before identities)
// a sealed head. A state directory the hook made again after it was
// removed has neither: the hook never writes the first head.
func (l *Log) Kept() bool {
	for _, name := range []string{idName, headName} {
		if _, err := os.Lstat(l.path(name)); err == nil {
			return true
		}
	}
	return false
}

// Anchor returns the record of the log's sealed head and the directory's
// identity, under sealKey: what the keyring keeps. The head must verify
// under sealKey; the directory must have an identity.
func (l *Log) Anchor(sealKey []byte) (string, error) {
	if err := checkKey(sealKey); err != nil {
		return "", err
	}
	id, err := l.ID()
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", errors.New("the state directory has no identity to anchor")
	}
	h, err := l.readHead()
	if err != nil {
		return "", err
	}
	p := startPoint
	if h != nil {
		if !h.validMAC(sealKey) {
			return "", fmt.Errorf("head MAC invalid: %w", ErrTampered)
		}
		p = h.point
	}
	return encodeAnchor(sealKey, id, p)
}

// StartAnchor is the record of the identity id at the start of a chain,
// which every log holds: written before Restart, so that a hook that checks
// between the two finds the log it sees named.
func StartAnchor(sealKey []byte, id string) (string, error) {
	if err := checkKey(sealKey); err != nil {
		return "", err
	}
	if !validID(id) {
		return "", errors.New("malformed state directory identity")
	}
	return encodeAnchor(sealKey, id, startPoint)
}

func encodeAnchor(key []byte, id string, p point) (string, error) {
	b, err := json.Marshal(anchorRecord{V: anchorVersion, ID: id, point: p, MAC: hex.EncodeToString(anchorMAC(key, id, p))})
	return string(b), err
}

// AnchorInfo is what an anchor record says, for people.
type AnchorInfo struct {
	ID  string // the state directory's identity
	Seq int    // the sealed entry it names (0: the start of a chain)
}

// CheckAnchor checks that the log, and the state directory it lives in,
// is the one rec (the keyring's anchor) names, under sealKey: the record
// is authentic, the directory's identity is the one it names, and the log
// still holds the sealed line it names, where it names it. It costs an
// lstat, the id file and one line of the log. Anything else is a
// *LostError.
func (l *Log) CheckAnchor(sealKey []byte, rec string) (AnchorInfo, error) {
	if err := checkKey(sealKey); err != nil {
		return AnchorInfo{}, err
	}
	lost := func(why string) (AnchorInfo, error) {
		return AnchorInfo{}, &LostError{Dir: filepath.Dir(l.dir), Why: why}
	}
	var a anchorRecord
	if err := strictUnmarshal([]byte(rec), &a); err != nil || a.V != anchorVersion || !validID(a.ID) || !a.point.valid() {
		return lost("the keyring's anchor of it is not a valid record")
	}
	got, err := hex.DecodeString(a.MAC)
	if err != nil || !hmac.Equal(got, anchorMAC(sealKey, a.ID, a.point)) {
		return lost("the keyring's anchor of it was not made under this key")
	}
	info := AnchorInfo{ID: a.ID, Seq: a.Seq}
	id, err := l.ID()
	switch {
	case err != nil:
		return lost(err.Error())
	case id == "":
		return lost("it holds no identity: it was removed, and made again empty")
	case id != a.ID:
		return lost(fmt.Sprintf("it is another state directory (identity %s) than the one anchored (%s): it was replaced", short(id), short(a.ID)))
	}
	if a.Seq == 0 {
		return info, nil
	}
	f, _, err := l.openLog()
	if err != nil {
		return AnchorInfo{}, err
	}
	if f == nil {
		return lost(fmt.Sprintf("its audit log is gone; the anchor names entry %d", a.Seq))
	}
	defer f.Close()
	line, err := lineEndingAt(f, a.Size)
	if err == nil {
		var seq int
		if seq, _, err = parseLink(line); err == nil && (seq != a.Seq || hashLine(line) != a.Hash) {
			err = ErrTampered
		}
	}
	if err != nil {
		return lost(fmt.Sprintf("its audit log no longer holds entry %d as it was sealed when the anchor was written: it was restored from an older copy, or cut", a.Seq))
	}
	return info, nil
}

func short(id string) string { return id[:8] }

// ErrStateLost is wrapped by every LostError (errors.Is).
var ErrStateLost = errors.New("the state directory is not the one loopguard anchored")

// LostError is a state directory that is not the one the keyring's anchor
// names: removed (and made again empty), replaced, or rolled back. Every
// grant, pending call and audit entry it held since is gone from it; the
// hook denies every call (ReasonStateLost) until a human puts it back or
// accepts the loss.
type LostError struct {
	Dir string // the state directory
	Why string
}

func (e *LostError) Error() string {
	return fmt.Sprintf("the state directory %s is not the one loopguard anchored in the keyring: %s. The grants, pending calls and audit entries it held are not there", e.Dir, e.Why)
}

// Hint tells a person what to do.
func (e *LostError) Hint() string {
	return "if you removed, replaced or restored it yourself, put the directory back as it was, or accept the loss at your own terminal: loopguard audit restart --accept-loss\n" +
		"(it sets what is there aside, gives the directory a new identity and anchors it again; `loopguard doctor` shows what is missing)"
}

// Reason is the reason code the hook denies with.
func (e *LostError) Reason() string { return ReasonStateLost }

// Is reports whether target is ErrStateLost.
func (e *LostError) Is(target error) bool { return target == ErrStateLost }

// anchorLockName is the lock the writers of the anchor share (not the
// log's: the hook appends under that one, and the anchor's writer waits
// on the keyring).
const anchorLockName = "anchor.lock"

// AnchorLocked runs fn holding the anchor's lock, across processes: the
// commands that write the anchor (a seal's, a restart's) take it, so that
// an anchor made from a head read before a restart is never written after
// the restart's.
func (l *Log) AnchorLocked(fn func() error) error {
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("failed to create audit directory: %w", err)
	}
	f, err := os.OpenFile(l.path(anchorLockName), os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return fmt.Errorf("failed to open the anchor's lock: %w", err)
	}
	defer f.Close() // closing the file releases the lock
	if err := flock(f); err != nil {
		return fmt.Errorf("failed to lock the anchor: %w", err)
	}
	return fn()
}
