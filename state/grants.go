package state

import (
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

	"github.com/loopguard/loopguard/token"
)

const (
	grantSuffix   = ".grant"
	maxGrantFile  = 64 << 10
	grantFileVers = 1
)

// GrantRecord is a grant file: the token and unsigned notes about it. Only
// the token is trusted; the notes only choose a reason code or a display.
type GrantRecord struct {
	V       int       `json:"v"`
	Token   string    `json:"token"`
	Created time.Time `json:"created"`
	// CallDigest is the exact grant's digest without the target file state.
	CallDigest string `json:"call_digest,omitempty"`
	Pending    string `json:"pending,omitempty"`
	AgentType  string `json:"agent_type,omitempty"`
	// Resembles names what makes another call a plausible retry of the
	// approved one (see hooks/retry.go): it chooses a reason's wording only.
	Resembles []string `json:"resembles,omitempty"`
	// Preset names the preset the grant was minted with (grant --preset),
	// for grants and revoke --preset; the rule itself is in the token.
	Preset string `json:"preset,omitempty"`
	// Shown is when what the approver was shown of the project (the
	// call's warning of what jailed calls changed) was computed: by show,
	// review or the console on this machine, or when the call's record
	// was published for an approval made on another machine; zero:
	// Created. The approval covers the project as of then
	// (hooks.ChangedAfter).
	Shown time.Time `json:"shown,omitzero"`
}

// ApprovedAt is the time as of which the approver saw the project:
// Shown, or Created.
func (r GrantRecord) ApprovedAt() time.Time {
	if !r.Shown.IsZero() && r.Shown.Before(r.Created) {
		return r.Shown
	}
	return r.Created
}

// GrantFile is a grant read from disk.
type GrantFile struct {
	Path   string
	Record GrantRecord
	Grant  *token.Grant // nil when Err is set
	Err    error        // ErrCorrupt or a token parse error
}

func hashKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// exactDir holds the exact grants of one (session, agent, tool).
func (s *Store) exactDir(session, agent, tool string) string {
	return s.path("grants", "exact", hashKey(session, agent, tool))
}

func (s *Store) scopedDir(session string) string {
	if session == token.Any {
		return s.path("grants", "scoped", "any")
	}
	return s.path("grants", "scoped", hashKey(session))
}

// PutGrant stores a minted grant. An exact grant replaces an earlier grant for
// the same call.
func (s *Store) PutGrant(g *token.Grant, rec GrantRecord) (string, error) {
	rec.V = grantFileVers
	rec.Token = g.String()
	if rec.Created.IsZero() {
		rec.Created = time.Now().UTC()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	var dir, name string
	if g.Exact() {
		dir, name = s.exactDir(g.Session, g.Agent, g.Tool), g.ArgHash+grantSuffix
	} else {
		dir, name = s.scopedDir(g.Session), g.ID()+grantSuffix
	}
	if err := writeAtomic(dir, name, data); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// ReadGrant reads and parses one grant file. A file that is partial, not a
// grant file, or whose token does not parse is ErrCorrupt.
func ReadGrant(path string) GrantFile {
	gf := GrantFile{Path: path}
	data, err := readFile(path, maxGrantFile)
	if err != nil {
		gf.Err = err
		return gf
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&gf.Record); err != nil || dec.More() {
		gf.Err = fmt.Errorf("%w: %s is not a grant file", ErrCorrupt, path)
		return gf
	}
	if gf.Record.V != grantFileVers {
		gf.Err = fmt.Errorf("%w: %s has version %d", ErrCorrupt, path, gf.Record.V)
		return gf
	}
	g, err := token.Parse(gf.Record.Token)
	if err != nil {
		gf.Err = fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		return gf
	}
	gf.Grant = g
	return gf
}

// ExactGrant returns the exact grant for this call, or ErrNotFound.
func (s *Store) ExactGrant(session, agent, tool, digest string) (GrantFile, error) {
	p := filepath.Join(s.exactDir(session, agent, tool), digest+grantSuffix)
	gf := ReadGrant(p)
	if errors.Is(gf.Err, ErrNotFound) {
		return gf, ErrNotFound
	}
	return gf, nil
}

// OtherExact lists the unconsumed exact grants of (session, agent, tool).
func (s *Store) OtherExact(session, agent, tool string) ([]GrantFile, error) {
	return readGrants([]GrantFile{}, s.exactDir(session, agent, tool))
}

// readGrants appends every grant file in dir to out.
func readGrants(out []GrantFile, dir string) ([]GrantFile, error) {
	names, err := listNames(dir, grantSuffix)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		out = append(out, ReadGrant(filepath.Join(dir, n)))
	}
	return out, nil
}

func (s *Store) consumedPath(session, agent, tool, digest string) string {
	return s.path("consumed", hashKey(session, agent, tool)+"-"+digest+grantSuffix)
}

// ClaimExact consumes the exact grant for this call. It is a rename(2), so of
// many processes claiming at once exactly one succeeds; the others get
// ErrClaimed.
func (s *Store) ClaimExact(session, agent, tool, digest string) error {
	if err := s.mkdir("consumed"); err != nil {
		return err
	}
	from := filepath.Join(s.exactDir(session, agent, tool), digest+grantSuffix)
	to := s.consumedPath(session, agent, tool, digest)
	if err := os.Rename(from, to); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrClaimed
		}
		return fmt.Errorf("failed to claim grant: %w", err)
	}
	// The consumed file's mtime says when it was used (rename keeps the
	// mint time).
	now := time.Now()
	_ = os.Chtimes(to, now, now)
	return syncDir(filepath.Dir(from))
}

// WithdrawnAt is the time a withdrawn exact grant's consumed file is
// stamped with (WithdrawExact): never a use's.
var WithdrawnAt = time.Unix(0, 0)

// WithdrawExact takes the exact grant for this call out of use without
// its call having run: it is moved where a used one goes (so that the
// same approval, fetched again from Vault, is not taken a second time)
// and stamped WithdrawnAt (so that nothing reads it as used a moment
// ago). The hook withdraws an approval whose project changed after it
// (hooks.ChangedAfter); ErrClaimed when there was none to withdraw.
func (s *Store) WithdrawExact(session, agent, tool, digest string) error {
	if err := s.mkdir("consumed"); err != nil {
		return err
	}
	// Stamped before it moves: a consumed file's time is when it was used
	// (justConsumed lets the call's permission request through for two
	// minutes after), and a rename keeps the time of the approval.
	from := filepath.Join(s.exactDir(session, agent, tool), digest+grantSuffix)
	if err := os.Chtimes(from, WithdrawnAt, WithdrawnAt); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrClaimed
		}
		return fmt.Errorf("failed to withdraw grant: %w", err)
	}
	if err := os.Rename(from, s.consumedPath(session, agent, tool, digest)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrClaimed
		}
		return fmt.Errorf("failed to withdraw grant: %w", err)
	}
	return syncDir(filepath.Dir(from))
}

// Withdrawn reports whether the exact grant for this call was withdrawn
// (WithdrawExact) and not used since.
func (s *Store) Withdrawn(session, agent, tool, digest string) bool {
	fi, err := os.Lstat(s.consumedPath(session, agent, tool, digest))
	return err == nil && fi.ModTime().Equal(WithdrawnAt)
}

// Consumed reports whether an exact grant for this call was used already.
func (s *Store) Consumed(session, agent, tool, digest string) bool {
	_, err := os.Lstat(s.consumedPath(session, agent, tool, digest))
	return err == nil
}

// ScopedGrants returns the scoped grants that may apply to session: those
// bound to it and those minted for any session.
func (s *Store) ScopedGrants(session string) ([]GrantFile, error) {
	out, err := readGrants(nil, s.scopedDir(session))
	if err != nil {
		return nil, err
	}
	return readGrants(out, s.scopedDir(token.Any))
}

// AllGrants lists every unconsumed grant, newest first.
func (s *Store) AllGrants() ([]GrantFile, error) {
	var out []GrantFile
	for _, kind := range []string{"exact", "scoped"} {
		root := s.path("grants", kind)
		subs, err := os.ReadDir(root)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, sub := range subs {
			if !sub.IsDir() {
				continue
			}
			if out, err = readGrants(out, filepath.Join(root, sub.Name())); err != nil {
				return nil, err
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Record.Created.After(out[j].Record.Created) })
	return out, nil
}

// RemoveGrant deletes a grant file (revoke). Only paths inside the store's
// grants directory are accepted.
func (s *Store) RemoveGrant(path string) error {
	rel, err := filepath.Rel(s.path("grants"), path)
	if err != nil || strings.HasPrefix(rel, "..") || !strings.HasSuffix(path, grantSuffix) {
		return fmt.Errorf("not a grant file of this store: %s", path)
	}
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrNotFound
		}
		return err
	}
	return syncDir(filepath.Dir(path))
}
