package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
)

// Store keeps the console's files in one directory, inside loopguard's
// state directory (which the hook denies to every tool call, and Claude
// Code's sandbox mounts unreadable): the passkeys, the one-time
// registration links, and where the running server listens.
type Store struct {
	Dir string
}

// DirIn is the console's directory inside the state directory.
func DirIn(stateDir string) string { return filepath.Join(stateDir, policy.ConsoleDir) }

const maxFile = 64 << 10

// Passkey is a registered passkey: its public key and what it is called.
// A removed passkey is kept, marked, so that the decisions it signed can
// still be verified.
type Passkey struct {
	ID         string              `json:"id"` // credential id, base64url
	Name       string              `json:"name"`
	RPID       string              `json:"rp_id"`
	Created    time.Time           `json:"created"`
	LastUsed   time.Time           `json:"last_used,omitzero"`
	Removed    time.Time           `json:"removed,omitzero"`
	Credential webauthn.Credential `json:"credential"`
}

// Active reports whether the passkey may sign.
func (p *Passkey) Active() bool { return p.Removed.IsZero() }

func (s *Store) path(parts ...string) string {
	return filepath.Join(append([]string{s.Dir}, parts...)...)
}

func (s *Store) mkdir(sub string) error {
	if err := os.MkdirAll(s.path(sub), 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", s.path(sub), err)
	}
	return nil
}

func fileKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

func readJSON(path string, v any) error {
	b, err := fsx.ReadRegular(path, maxFile, fsx.NoFollow)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFile(path, append(b, '\n'), 0o600, true)
}

// PutPasskey stores p (a new passkey, or one whose counter moved).
func (s *Store) PutPasskey(p *Passkey) error {
	if err := s.mkdir("passkeys"); err != nil {
		return err
	}
	return writeJSON(s.path("passkeys", fileKey(p.ID)+".json"), p)
}

// Passkeys lists every passkey, removed ones included, oldest first.
func (s *Store) Passkeys() ([]*Passkey, error) {
	ents, err := os.ReadDir(s.path("passkeys"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Passkey
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := &Passkey{}
		if err := readJSON(s.path("passkeys", e.Name()), p); err != nil {
			return nil, err
		}
		if fileKey(p.ID)+".json" != e.Name() {
			return nil, fmt.Errorf("passkey file %s does not hold the passkey it is named for", e.Name())
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Passkey returns the passkey with credential id (base64url).
func (s *Store) Passkey(id string) (*Passkey, error) {
	p := &Passkey{}
	if err := readJSON(s.path("passkeys", fileKey(id)+".json"), p); err != nil {
		return nil, err
	}
	if p.ID != id {
		return nil, fmt.Errorf("passkey file for %s holds another passkey", id)
	}
	return p, nil
}

// ResolvePasskey finds the one passkey whose id starts with prefix.
func (s *Store) ResolvePasskey(prefix string) (*Passkey, error) {
	all, err := s.Passkeys()
	if err != nil {
		return nil, err
	}
	var hits []*Passkey
	for _, p := range all {
		if p.ID == prefix {
			return p, nil
		}
		if len(prefix) >= 4 && strings.HasPrefix(p.ID, prefix) {
			hits = append(hits, p)
		}
	}
	switch len(hits) {
	case 0:
		return nil, fmt.Errorf("no passkey %q (loopguard passkey list shows them)", prefix)
	case 1:
		return hits[0], nil
	}
	return nil, fmt.Errorf("%q names %d passkeys; give more of the id", prefix, len(hits))
}

// Enrollment is a one-time registration link, as stored: only the hash of
// its secret is kept.
type Enrollment struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Errors of a registration link.
var (
	ErrLinkUnknown = errors.New("this registration link is not valid: run loopguard passkey add again")
	ErrLinkUsed    = errors.New("this registration link was used already: run loopguard passkey add again")
	ErrLinkExpired = errors.New("this registration link has expired: run loopguard passkey add again")
)

// MaxEnrollTTL bounds how long a registration link stays valid.
const MaxEnrollTTL = 30 * time.Minute

// NewEnrollment makes a one-time registration link secret for a passkey
// called name, valid for ttl. Only its hash is stored.
func (s *Store) NewEnrollment(name string, ttl time.Duration, now time.Time) (string, Enrollment, error) {
	if ttl <= 0 || ttl > MaxEnrollTTL {
		return "", Enrollment{}, fmt.Errorf("a registration link lasts between 1s and %s", MaxEnrollTTL)
	}
	if err := CheckName(name); err != nil {
		return "", Enrollment{}, err
	}
	if err := s.mkdir("enroll"); err != nil {
		return "", Enrollment{}, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", Enrollment{}, err
	}
	tok := b64.EncodeToString(secret)
	e := Enrollment{Name: name, Created: now.UTC(), Expires: now.Add(ttl).UTC()}
	if err := writeJSON(s.enrollPath(tok), e); err != nil {
		return "", Enrollment{}, err
	}
	return tok, e, nil
}

func (s *Store) enrollPath(tok string) string {
	sum := sha256.Sum256([]byte("loopguard enrollment\x00" + tok))
	return s.path("enroll", hex.EncodeToString(sum[:])+".json")
}

// Enrollment checks registration link secret tok: unknown, used or
// expired links are refused.
func (s *Store) Enrollment(tok string, now time.Time) (Enrollment, error) {
	var e Enrollment
	if len(tok) != 43 {
		return e, ErrLinkUnknown
	}
	p := s.enrollPath(tok)
	if err := readJSON(p, &e); err != nil {
		if _, uerr := os.Lstat(p + ".used"); uerr == nil {
			return e, ErrLinkUsed
		}
		return e, ErrLinkUnknown
	}
	if !now.Before(e.Expires) {
		return e, ErrLinkExpired
	}
	return e, nil
}

// ClaimEnrollment spends link tok: of any number of callers exactly one
// wins (a rename), and only before it expires.
func (s *Store) ClaimEnrollment(tok string, now time.Time) (Enrollment, error) {
	e, err := s.Enrollment(tok, now)
	if err != nil {
		return e, err
	}
	p := s.enrollPath(tok)
	if err := os.Rename(p, p+".used"); err != nil {
		return e, ErrLinkUsed
	}
	return e, nil
}

// CheckName accepts a passkey's name: printable, at most 64 bytes.
func CheckName(name string) error {
	if name == "" || len(name) > 64 || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return errors.New("a passkey's name is 1 to 64 printable characters")
	}
	return nil
}

// ServerInfo is where a running console listens, for passkey add's link.
type ServerInfo struct {
	Origin  string    `json:"origin"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// PutServer records where this console listens.
func (s *Store) PutServer(i ServerInfo) error {
	if err := s.mkdir("."); err != nil {
		return err
	}
	return writeJSON(s.path("server.json"), i)
}

// Server returns where the last console started listened.
func (s *Store) Server() (ServerInfo, error) {
	var i ServerInfo
	err := readJSON(s.path("server.json"), &i)
	return i, err
}
