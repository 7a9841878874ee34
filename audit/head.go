package audit

import (
	"crypto/hmac"
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
	"time"

	"github.com/loopguard/loopguard/fsx"
)

// headLabel separates head MACs from any other MAC made with the seal key.
const headLabel = "loopguard audit head v1\x00"

// SealKeySize is the size of the seal key, token.SubKey(master, token.LabelAudit).
const SealKeySize = 32

// head is the sealed point with its MAC, as stored in the head file.
type head struct {
	point
	MAC string `json:"mac"`
}

// headMAC is HMAC-SHA256(key, label || seq || hash || size) with seq and size
// as 8-byte big-endian integers and hash as its 32 raw bytes.
func headMAC(key []byte, p point) []byte {
	raw, _ := hex.DecodeString(p.Hash) // p.valid() was checked
	m := hmac.New(sha256.New, key)
	m.Write([]byte(headLabel))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(p.Seq))
	m.Write(n[:])
	m.Write(raw)
	binary.BigEndian.PutUint64(n[:], uint64(p.Size))
	m.Write(n[:])
	return m.Sum(nil)
}

func checkKey(key []byte) error {
	if len(key) != SealKeySize {
		return fmt.Errorf("audit seal key has %d bytes, want %d", len(key), SealKeySize)
	}
	return nil
}

// errHeadMalformed is wrapped when the head file exists but cannot be parsed.
var errHeadMalformed = errors.New("head is malformed")

// readHead returns the stored head, nil if there is none.
func (l *Log) readHead() (*head, error) {
	b, err := readSmall(l.path(headName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read audit head: %w", err)
	}
	var h head
	if err := strictUnmarshal(b, &h); err != nil || !h.point.valid() {
		return nil, errHeadMalformed
	}
	return &h, nil
}

// validMAC reports whether h was sealed with key.
func (h *head) validMAC(key []byte) bool {
	got, err := hex.DecodeString(h.MAC)
	if err != nil {
		return false
	}
	return hmac.Equal(got, headMAC(key, h.point))
}

func (l *Log) writeHead(key []byte, p point) error {
	return l.writeHeadAs(key, p, true)
}

// writeHeadAs writes the head; with syncDir false the directory is not
// fsynced after the rename (the head file itself always is, before it):
// a crash may then leave the previous head, which is authentic and behind
// the log, never an empty or torn one.
func (l *Log) writeHeadAs(key []byte, p point, syncDir bool) error {
	b, err := json.Marshal(head{point: p, MAC: hex.EncodeToString(headMAC(key, p))})
	if err != nil {
		return fmt.Errorf("failed to encode audit head: %w", err)
	}
	if err := writeHeadFile(l.path(headName), b, syncDir); err != nil {
		return fmt.Errorf("failed to write audit head: %w", err)
	}
	return nil
}

// AppendSealed appends e and seals the log up to it, in one hold of the
// lock: what Append then Seal do, for the hook's allows, where it is on
// every allowed call. The log is fsynced up to e before the head is
// written, and the head file before its rename; the directory is not
// fsynced after it (Seal does), so a crash can leave the previous head in
// place: it is authentic, and the entries after it are on disk, unsealed
// until the next seal, as AppendNoSync's are.
//
// err is non-nil when e is not durably in the log. sealed is false when e
// is durable but no head vouches for it (the head could not be checked or
// written: ErrTampered, ErrNoHead, a disk error), as after Append alone.
func (l *Log) AppendSealed(e Entry, sealKey []byte) (sealed bool, err error) {
	if err := checkKey(sealKey); err != nil {
		return false, err
	}
	err = l.appending(func(f *os.File, cur point) error {
		p, err := l.appendLocked(f, cur, e, true)
		if err != nil {
			return err
		}
		sealed = l.sealAs(f, sealKey, sealKey, p, true, false) == nil
		return nil
	})
	return sealed && err == nil, err
}

// Seal MACs the current end of the log as the new head. It first checks that
// the old head is authentic and that the entry it vouched for is still in
// place, so it never blesses a log whose sealed part was rewritten; then the
// chain up to the new head is protected by the key. It reads only the head,
// one or two lines, whatever the size of the log. When it
// returns nil, the log is durable (fsynced) up to the head, which covers
// every entry appended before the call: the head is never written ahead of
// its log.
//
// It returns an error wrapping ErrTampered if the head or the sealed part was
// changed, and ErrNoHead if the log has entries but was never sealed (the
// first seal must happen while the log is empty, in loopguard init).
func (l *Log) Seal(sealKey []byte) error {
	return l.Rekey(sealKey, sealKey)
}

// Rekey re-seals the head under newKey after checking it under oldKey, for a
// master key rotation. It makes the same checks as Seal.
func (l *Log) Rekey(oldKey, newKey []byte) error {
	if err := checkKey(oldKey); err != nil {
		return err
	}
	if err := checkKey(newKey); err != nil {
		return err
	}
	return l.appending(func(f *os.File, cur point) error {
		return l.sealLocked(f, oldKey, newKey, cur)
	})
}

// sealLocked writes p as the head under newKey, after checking the old head
// under oldKey. p must not be behind the old head. Call with the lock held.
func (l *Log) sealLocked(f *os.File, oldKey, newKey []byte, p point) error {
	return l.sealAs(f, oldKey, newKey, p, false, true)
}

// sealAs is sealLocked; synced says the log is on disk up to p already
// (AppendSealed), syncDir is writeHeadAs's.
func (l *Log) sealAs(f *os.File, oldKey, newKey []byte, p point, synced, syncDir bool) error {
	if p.Seq > 0 {
		// Make sure p is really the entry there.
		line, err := lineEndingAt(f, p.Size)
		if err != nil {
			return err
		}
		if seq, _, err := parseLink(line); err != nil || seq != p.Seq || hashLine(line) != p.Hash {
			return fmt.Errorf("entry at seq %d is not the one appended: %w", p.Seq, ErrTampered)
		}
	}
	h, err := l.readHead()
	if err != nil {
		if errors.Is(err, errHeadMalformed) {
			return fmt.Errorf("%w: %w", err, ErrTampered)
		}
		return err
	}
	if h == nil {
		if p.Seq != 0 {
			return ErrNoHead
		}
		return l.writeHeadAs(newKey, p, syncDir)
	}
	if !h.validMAC(oldKey) {
		return fmt.Errorf("head MAC invalid: %w", ErrTampered)
	}
	if h.Seq > 0 {
		line, err := lineEndingAt(f, h.Size)
		if err != nil {
			return fmt.Errorf("sealed entry at seq %d is gone: %w", h.Seq, err)
		}
		if seq, _, err := parseLink(line); err != nil || seq != h.Seq || hashLine(line) != h.Hash {
			return fmt.Errorf("sealed entry at seq %d was changed: %w", h.Seq, ErrTampered)
		}
	}
	switch {
	case h.Seq > p.Seq:
		if hmac.Equal(oldKey, newKey) {
			return nil // already sealed further (a concurrent seal)
		}
		p = h.point
	case h.Seq == p.Seq:
		if h.point != p {
			return fmt.Errorf("sealed entry at seq %d was changed: %w", h.Seq, ErrTampered)
		}
		if hmac.Equal(oldKey, newKey) {
			return nil // nothing new to seal
		}
	case p.Size < h.Size:
		return fmt.Errorf("entry at seq %d lies before the sealed entry at seq %d: %w", p.Seq, h.Seq, ErrTampered)
	}
	// The log must be on disk up to p before a head vouching for p is:
	// entries appended with AppendNoSync may still be in the page cache,
	// and a power cut must never leave a head ahead of its log.
	if !synced {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("failed to sync audit log: %w", err)
		}
	}
	return l.writeHeadAs(newKey, p, syncDir)
}

// Restart sets the current log aside and starts a new, sealed, empty one:
// log.jsonl becomes log-<UTC time>.jsonl in the same directory (head and tail
// likewise), then the new empty log is sealed under sealKey. It is how a
// person moves on after Verify found problems, keeping the damaged log as
// evidence; it holds the lock, so no append falls between the two logs. It
// returns the name the old log was given ("" if there was none).
func (l *Log) Restart(sealKey []byte) (string, error) {
	if err := checkKey(sealKey); err != nil {
		return "", err
	}
	archived := ""
	err := l.exclusive(func() error {
		var err error
		archived, err = l.restartLocked(sealKey)
		return err
	})
	return archived, err
}

// restartLocked is Restart with the log locked.
func (l *Log) restartLocked(sealKey []byte) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	archived := ""
	for _, name := range []string{logName, headName, tailName} {
		ext := filepath.Ext(name)
		to := l.path(strings.TrimSuffix(name, ext) + "-" + stamp + ext)
		if err := os.Rename(l.path(name), to); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return archived, fmt.Errorf("failed to set the audit log aside: %w", err)
		}
		if name == logName {
			archived = to
		}
	}
	if err := fsx.SyncDir(l.dir); err != nil {
		return archived, fmt.Errorf("failed to set the audit log aside: %w", err)
	}
	f, err := os.OpenFile(l.path(logName), os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return archived, fmt.Errorf("failed to create the audit log: %w", err)
	}
	f.Close()
	return archived, l.writeHead(sealKey, startPoint)
}

// Started reports whether the log has entries or a head: a chain that only
// the key it was sealed under can continue. A new key (after the old one
// was purged) starts a new chain with Restart instead of sealing this one.
func (l *Log) Started() bool {
	if fi, err := os.Lstat(l.path(logName)); err == nil && fi.Size() > 0 {
		return true
	}
	_, err := os.Lstat(l.path(headName))
	return err == nil
}

// SetAside lists the logs Restart set aside in the log's directory, oldest
// first: earlier chains, kept as evidence, that Verify does not check.
func (l *Log) SetAside() []string {
	names, _ := filepath.Glob(l.path(strings.TrimSuffix(logName, filepath.Ext(logName)) + "-*" + filepath.Ext(logName)))
	return names
}
