package state

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/loopguard/loopguard/policy"
)

// Allowed records a call the hook let run, so PostToolUse can compare what
// ran with what was approved. It is a note for detection, not a credential:
// nothing is ever allowed because of it.
type Allowed struct {
	Session    string    `json:"session"`
	Agent      string    `json:"agent"`
	Tool       string    `json:"tool"`
	ToolUseID  string    `json:"tool_use_id"`
	Digest     string    `json:"digest"`
	CallDigest string    `json:"call_digest"`
	Grant      string    `json:"grant"`
	Principal  string    `json:"principal"`
	Time       time.Time `json:"time"`
	// Cwd is the call's cwd when it was allowed: PostToolUse reports the
	// shell's cwd after the call ran, which a cd in it moved.
	Cwd string `json:"cwd,omitempty"`
	// Capability is what the call ran confined to (policy.Capability's
	// name; a chain's widest), "" when it ran unconfined: PostToolUse
	// reads a refusal in its result against it.
	Capability string `json:"capability,omitempty"`
	// Package is a package.json whose hook-run entries the call was
	// judged not to change: PostToolUse checks what the client wrote.
	Package *PackagePin `json:"package,omitempty"`
}

// PackagePin is a package.json as it was before a file tool's call that
// was judged, on loopguard's model of the client's edit, not to change
// the entries of it the project's git hooks run by name (Keys): after the
// call, a file whose entries changed all the same is put back to Before.
type PackagePin struct {
	Path string   `json:"path"`
	Keys []string `json:"keys"`
	// Before is the file's content (nil: there was none). It is kept in a
	// file of its own beside the note (Kept, with its SHA-256), read back
	// with the note: a package.json of 48 KiB and more, kept in the note,
	// made the note one no read takes (the eightieth attack run), and
	// PostToolUse then checked nothing.
	Before []byte `json:"-"`
	Absent bool   `json:"absent,omitempty"`
	Kept   string `json:"kept"`
	SHA256 string `json:"sha256"`
	// Unreadable says why Before could not be read back ("": it was).
	Unreadable string `json:"-"`
}

// pinSuffixAllowed names a package.json kept beside the notes.
const pinSuffixAllowed = ".pkg"

// keepPackage writes pin's Before beside the notes, and names it in pin.
func (s *Store) keepPackage(pin *PackagePin) error {
	if pin.Before == nil {
		pin.Absent = true
		return nil
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	sum := sha256.Sum256(pin.Before)
	pin.Kept, pin.SHA256 = hex.EncodeToString(r[:])+pinSuffixAllowed, hex.EncodeToString(sum[:])
	return writeFile(s.path("allowed"), pin.Kept, pin.Before, false)
}

// readPackage reads back what keepPackage kept, and removes it.
func (s *Store) readPackage(pin *PackagePin) {
	if pin.Absent {
		return
	}
	name := strings.TrimSuffix(pin.Kept, pinSuffixAllowed)
	if _, err := hex.DecodeString(name); err != nil || len(name) != 32 || !strings.HasSuffix(pin.Kept, pinSuffixAllowed) {
		pin.Unreadable = "it is named wrongly"
		return
	}
	p := s.path("allowed", pin.Kept)
	b, err := readFile(p, policy.MaxPackageJSON+1)
	if err != nil {
		pin.Unreadable = err.Error()
		return
	}
	_ = os.Remove(p)
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != pin.SHA256 {
		pin.Unreadable = "it is not what was kept"
		return
	}
	pin.Before = b
}

func (s *Store) allowedName(session, key string) string {
	return hashKey(session, key) + ".json"
}

// NoteAllowed records a under its tool_use_id, for PostToolUse; when the
// host sends no call id, or the call runs rewritten, under the digest of
// what runs too (TakeRan): a host without call ids has only that to
// recognise the call by, and a rewrite is recognised by it when the host
// asks about it again.
func (s *Store) NoteAllowed(a Allowed, rewritten bool) error {
	if a.Package != nil {
		pin := *a.Package
		if err := s.keepPackage(&pin); err != nil {
			return err
		}
		a.Package = &pin
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	// A detection note: atomic (never torn) but not fsynced.
	if a.ToolUseID != "" {
		if err := writeFile(s.path("allowed"), s.allowedName(a.Session, "use:"+a.ToolUseID), data, false); err != nil {
			return err
		}
	}
	if a.ToolUseID == "" || rewritten {
		return writeFile(s.path("allowed"), s.allowedName(a.Session, "ran:"+a.CallDigest), data, false)
	}
	return nil
}

// TakeAllowed returns and removes the record of the call with toolUseID.
func (s *Store) TakeAllowed(session, toolUseID string) (Allowed, error) {
	return s.takeAllowed(session, "use:"+toolUseID)
}

// TakeRan returns and removes the record of a call allowed to run as the
// input whose call digest is callDigest.
func (s *Store) TakeRan(session, callDigest string) (Allowed, error) {
	return s.takeAllowed(session, "ran:"+callDigest)
}

// RanAllowed returns, without removing it, the record of a call allowed to
// run as the input whose call digest is callDigest, and when it was made.
func (s *Store) RanAllowed(session, callDigest string) (Allowed, error) {
	var a Allowed
	data, err := readFile(s.path("allowed", s.allowedName(session, "ran:"+callDigest)), 64<<10)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, ErrCorrupt
	}
	return a, nil
}

func (s *Store) takeAllowed(session, key string) (Allowed, error) {
	var a Allowed
	p := s.path("allowed", s.allowedName(session, key))
	data, err := readFile(p, 64<<10)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return a, ErrCorrupt
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return a, err
	}
	if a.Package != nil {
		s.readPackage(a.Package)
	}
	return a, nil
}

// ConsumedGrant returns the exact grant consumed for this call and when it
// was consumed.
func (s *Store) ConsumedGrant(session, agent, tool, digest string) (GrantFile, time.Time, error) {
	p := s.consumedPath(session, agent, tool, digest)
	fi, err := os.Lstat(p)
	if err != nil {
		return GrantFile{}, time.Time{}, ErrNotFound
	}
	gf := ReadGrant(p)
	return gf, fi.ModTime(), gf.Err
}
