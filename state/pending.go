package state

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Pending call statuses.
const (
	StatusOpen     = "open"
	StatusApproved = "approved"
	StatusDenied   = "denied"
)

// seenEvery is how stale a pending record's Seen time may get before a
// repeat of its call rewrites it.
const seenEvery = 10 * time.Second

const (
	callSuffix     = ".call"
	maxMetaFile    = 256 << 10
	pendingSuffix  = ".json"
	maxPendingFile = 64 << 20
)

// Pending is a call that was denied for lack of a grant, kept so a human can
// review it and approve exactly it.
type Pending struct {
	ID         string    `json:"id"`
	Created    time.Time `json:"created"`
	Seen       time.Time `json:"seen"`
	Event      string    `json:"event"`
	Session    string    `json:"session"`
	Agent      string    `json:"agent"`
	AgentType  string    `json:"agent_type,omitempty"`
	Tool       string    `json:"tool"`
	Cwd        string    `json:"cwd"`
	ProjectDir string    `json:"project_dir,omitempty"`
	Digest     string    `json:"digest"`
	CallDigest string    `json:"call_digest"`
	// Descriptor is the canonical JSON of the call: what the human reviews.
	// It is kept apart, in ID.call, as the exact bytes that were hashed,
	// never re-encoded; the record (ID.json) stays small, so the hook's
	// repeat of a large Write does not read it back.
	Descriptor []byte `json:"-"`
	// Reason is the code the call was denied with (no_grant, chained_command...).
	Reason   string   `json:"reason"`
	Detail   string   `json:"detail,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Planted is the one of Warnings that says what jailed calls and
	// file tools changed in the project since the human's last decision
	// (package hooks, PlantedWarning): it goes stale, and is computed
	// again on each repeat, and when the call is shown and approved.
	Planted string `json:"planted,omitempty"`
	// Related are the places outside the project the call reaches that
	// Planted covers too (package hooks, relatedPlaces): absolute.
	Related []string `json:"related,omitempty"`
	// PlantedAt is when Planted was computed, in this process (the
	// record does not keep it): an approval of what was shown covers the
	// project as of then (package hooks, ApproveWith and ChangedAfter).
	PlantedAt time.Time `json:"-"`
	Status    string    `json:"status"`
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	Grant     string    `json:"grant,omitempty"`
	// Note is the human's reason for a refusal, shown to the model.
	Note string `json:"note,omitempty"`
	// HeldUntil and HolderPID say that a hook in wait mode holds the call
	// (its process id) until then; zero when no hook waits for it.
	HeldUntil time.Time `json:"held_until,omitzero"`
	HolderPID int       `json:"holder_pid,omitempty"`
	// Approved is the pending id of an approved call this one plausibly
	// retries (approved_call_changed, target_state_drift): a display hint,
	// never a decision.
	Approved string `json:"approved,omitempty"`
	// Shown are the input fields that only describe the call (Bash's
	// description: policy.ShownOnly), left out of its digest and shown
	// apart.
	Shown map[string]string `json:"shown,omitempty"`
	// Away says the call was read from another machine's record (the
	// Vault backend's team view): its project is only its cwd, which the
	// agent chose (present.PendingDanger). Never stored.
	Away bool `json:"-"`
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// PendingIDBytes is how much of the call's hash its id keeps: 120 bits, so
// finding two calls with one id (a birthday search, 2^60 hashes) is out of
// reach; 40 bits fell to one in 23 s on a laptop.
const PendingIDBytes = 15

// PendingIDLen is the length of a pending id in characters.
const PendingIDLen = PendingIDBytes * 8 / 5

// legacyIDLen is the length of the 40-bit ids of older versions; records
// under them can still be read and removed, never written.
const legacyIDLen = 8

// ErrIDTaken is a pending id that already holds another call: a record is
// never replaced by a call with another digest.
var ErrIDTaken = errors.New("pending id already holds another call")

// PendingID is the id of a call: the same call in the same session and
// agent always gets the same id, so a retry finds its record.
func PendingID(session, agent, tool, digest string) string {
	sum := sha256.Sum256([]byte(hashKey(session, agent, tool, digest)))
	return idEncoding.EncodeToString(sum[:PendingIDBytes])
}

func validID(id string) bool {
	if len(id) != PendingIDLen && len(id) != legacyIDLen {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz234567", c) {
			return false
		}
	}
	return true
}

// SetPlanted puts w in p.Warnings in place of the planted warning p
// carried (Planted).
func (p *Pending) SetPlanted(w string) {
	if p.Planted != "" {
		if i := slices.Index(p.Warnings, p.Planted); i >= 0 {
			p.Warnings = slices.Delete(slices.Clone(p.Warnings), i, i+1)
		}
	}
	p.Planted = w
	if w != "" {
		p.Warnings = append(slices.Clone(p.Warnings), w)
	}
}

// PutPending writes p. A record that exists already for the same call
// keeps its Created time and a refusal; an approval whose call is back is
// reopened. p is set to the stored record.
func (s *Store) PutPending(p *Pending) error {
	if len(p.ID) != PendingIDLen || !validID(p.ID) {
		return fmt.Errorf("invalid pending id %q", p.ID)
	}
	desc := p.Descriptor
	old, err := s.getMeta(p.ID)
	if err == nil && old.Digest != p.Digest {
		if PendingID(old.Session, old.Agent, old.Tool, old.Digest) == p.ID {
			// Two calls with one id: the first one stays what the human
			// reviews under it.
			return fmt.Errorf("%w: %s holds a call with digest %.12s, not %.12s", ErrIDTaken, p.ID, old.Digest, p.Digest)
		}
		// A record whose digest does not give its id was not written by
		// loopguard: it is replaced by the call that owns the id.
		old, err = nil, ErrNotFound
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		// A record that cannot be read is not overwritten either.
		return err
	}
	if err == nil {
		old.Descriptor = desc
		if old.Status != StatusApproved && old.Reason == p.Reason && p.Seen.Sub(old.Seen) < seenEvery && !p.Seen.Before(old.Seen) &&
			p.HeldUntil.IsZero() && old.Planted == p.Planted && slices.Equal(old.Related, p.Related) {
			// A repeat of a call recorded moments ago: nothing a human
			// needs has changed, so nothing is rewritten.
			*p = *old
			return nil
		}
		old.Seen = p.Seen
		old.Reason = p.Reason
		old.Approved = p.Approved
		old.HeldUntil, old.HolderPID = p.HeldUntil, p.HolderPID
		// What changed in the project is as of this repeat: the
		// eighty-sixth attack run's jailed Makefile rewrite after the
		// hold was named by no warning, the first one kept.
		old.Related = p.Related
		old.SetPlanted(p.Planted)
		if old.Status == StatusApproved {
			// The call came back without a usable approval (used, expired
			// or revoked): it needs a decision again. A refusal sticks.
			old.Status, old.Grant, old.Reason = StatusOpen, "", p.Reason
		}
		*p = *old
	}
	if p.Status == "" {
		p.Status = StatusOpen
	}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	// The call first, then the record that points to it. Neither is
	// fsynced: a pending record is a request for review, and losing it in a
	// power cut costs the agent a retry, never a bypass. A crash may leave a
	// record without its call, or with a call cut short or empty: Approve
	// recomputes the digest from the call's bytes and refuses one that does
	// not match, and the call's next repeat writes it again.
	if cur, err := readFile(s.path("pending", p.ID+callSuffix), maxPendingFile); err != nil || string(cur) != string(desc) {
		if err := writeFile(s.path("pending"), p.ID+callSuffix, desc, false); err != nil {
			return err
		}
	}
	return writeFile(s.path("pending"), p.ID+pendingSuffix, data, false)
}

// GetPending reads one pending record; ErrNotFound when absent.
func (s *Store) GetPending(id string) (*Pending, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: no pending call %q (ids are %d letters and digits, see: loopguard pending)", ErrNotFound, id, PendingIDLen)
	}
	p, err := s.getMeta(id)
	if err != nil {
		return nil, err
	}
	if p.Descriptor, err = readFile(s.path("pending", id+callSuffix), maxPendingFile); err != nil {
		return nil, fmt.Errorf("%w: pending record %s has no call: %v", ErrCorrupt, id, err)
	}
	return p, nil
}

// getMeta reads a pending record without its call.
func (s *Store) getMeta(id string) (*Pending, error) {
	data, err := readFile(s.path("pending", id+pendingSuffix), maxMetaFile)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%w: no pending call %q", ErrNotFound, id)
		}
		return nil, err
	}
	var p Pending
	if err := json.Unmarshal(data, &p); err != nil || p.ID != id {
		return nil, fmt.Errorf("%w: pending record %s", ErrCorrupt, id)
	}
	return &p, nil
}

// ListPending returns every pending record, newest first. Corrupt records
// are returned as errors alongside the good ones.
func (s *Store) ListPending() ([]*Pending, []error) {
	names, err := listNames(s.path("pending"), pendingSuffix)
	if err != nil {
		return nil, []error{err}
	}
	var out []*Pending
	var errs []error
	for _, n := range names {
		p, err := s.GetPending(strings.TrimSuffix(n, pendingSuffix))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seen.After(out[j].Seen) })
	return out, errs
}

// Decide records a human's decision on a pending call.
func (s *Store) Decide(id, status, by, grant string, at time.Time) error {
	p, err := s.getMeta(id)
	if err != nil {
		return err
	}
	p.Status, p.DecidedBy, p.DecidedAt, p.Grant = status, by, at.UTC(), grant
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return writeAtomic(s.path("pending"), id+pendingSuffix, data)
}

// RemovePending deletes a pending record.
func (s *Store) RemovePending(id string) error {
	if !validID(id) {
		return ErrNotFound
	}
	err := removeFile(filepath.Join(s.path("pending"), id+pendingSuffix))
	if rerr := removeFile(filepath.Join(s.path("pending"), id+callSuffix)); err == nil && !errors.Is(rerr, ErrNotFound) {
		err = rerr
	}
	if rerr := removeFile(filepath.Join(s.path("pending"), id+snapshotSuffix)); err == nil && !errors.Is(rerr, ErrNotFound) {
		err = rerr
	}
	if rerr := removePin(filepath.Join(s.path("pending"), id+pinSuffix)); err == nil {
		err = rerr
	}
	if rerr := s.removeWaitEnd(id); err == nil && !errors.Is(rerr, ErrNotFound) {
		err = rerr
	}
	return err
}

// snapshotSuffix names the copy of a pending call's target file.
const snapshotSuffix = ".before"

// MaxSnapshot bounds the copy of a file kept when a call that changes it
// is held or approved: enough for source files; a larger file keeps only
// its digest, and a drift is then told without a diff.
const MaxSnapshot = 1 << 20

// PutSnapshot keeps content, the file pending call id changes as the call
// recorded it (kept when the call is held, and when it is approved), so
// that the call is shown against it should the file change before the
// human decides, and a later target_state_drift can show what changed
// since. It is for display only: the approval covers the file's digest,
// not this copy. CapPending counts it in the session's bytes.
func (s *Store) PutSnapshot(id string, content []byte) error {
	if !validID(id) {
		return fmt.Errorf("invalid pending id %q", id)
	}
	if len(content) > MaxSnapshot {
		return fmt.Errorf("a snapshot of %d bytes is over %d", len(content), MaxSnapshot)
	}
	return writeFile(s.path("pending"), id+snapshotSuffix, content, false)
}

// Snapshot returns what PutSnapshot kept for id; ErrNotFound when nothing.
func (s *Store) Snapshot(id string) ([]byte, error) {
	if !validID(id) {
		return nil, ErrNotFound
	}
	return readFile(s.path("pending", id+snapshotSuffix), MaxSnapshot)
}

// SessionSeen is the last session seen in a project.
type SessionSeen struct {
	Session    string    `json:"session"`
	ProjectDir string    `json:"project_dir"`
	Seen       time.Time `json:"seen"`
}

// NoteSession records session as the latest one seen in projectDir. It writes
// only when the session changed, so the hook's common path only reads.
func (s *Store) NoteSession(projectDir, session string, now time.Time) error {
	name := hashKey(projectDir) + ".json"
	if cur, err := s.LastSession(projectDir); err == nil && cur.Session == session {
		return nil
	}
	data, err := json.Marshal(SessionSeen{Session: session, ProjectDir: projectDir, Seen: now.UTC()})
	if err != nil {
		return err
	}
	return writeAtomic(s.path("sessions"), name, data)
}

// LastSession returns the latest session seen in projectDir.
func (s *Store) LastSession(projectDir string) (SessionSeen, error) {
	var ss SessionSeen
	data, err := readFile(s.path("sessions", hashKey(projectDir)+".json"), 64<<10)
	if err != nil {
		return ss, err
	}
	if err := json.Unmarshal(data, &ss); err != nil || ss.ProjectDir != projectDir {
		return ss, fmt.Errorf("%w: session record for %s", ErrCorrupt, projectDir)
	}
	return ss, nil
}

// Per-session bounds on what the agent can pile up for a human to review.
const (
	MaxPendingPerSession      = 100
	MaxPendingBytesPerSession = 64 << 20
)

// ErrPendingFull is a session whose pending calls are at their bounds with
// none that may go: the call just recorded is taken out again, and the
// hook denies it saying so.
var ErrPendingFull = errors.New("too many pending calls")

// CapPending keeps session's pending calls within MaxPendingPerSession and
// MaxPendingBytesPerSession by removing its oldest open ones. It never
// removes keep (the call just recorded), a decided call (a hook may still
// read it), a call a hook holds now (its hook waits for the human) or one
// a human has open (Pinned). When that is not enough, keep itself goes and
// the error is ErrPendingFull: the call is never kept silently past the
// bounds, nor a held or viewed one lost. It returns the removed records,
// for the audit log.
func (s *Store) CapPending(session, keep string, now time.Time) ([]*Pending, error) {
	names, err := listNames(s.path("pending"), pendingSuffix)
	if err != nil {
		return nil, err
	}
	type rec struct {
		p    *Pending
		size int64
	}
	var mine []rec
	var total, keepSize int64
	for _, n := range names {
		id := strings.TrimSuffix(n, pendingSuffix)
		p, err := s.getMeta(id)
		if err != nil || p.Session != session {
			continue
		}
		var size int64
		for _, suffix := range []string{callSuffix, snapshotSuffix} {
			if fi, err := os.Lstat(s.path("pending", id+suffix)); err == nil {
				size += fi.Size()
			}
		}
		if id == keep {
			keepSize = size
		}
		total += size
		mine = append(mine, rec{p, size})
	}
	within := func(count int) bool {
		return count <= MaxPendingPerSession && total <= MaxPendingBytesPerSession
	}
	if within(len(mine)) {
		return nil, nil
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].p.Created.Before(mine[j].p.Created) })
	var dropped []*Pending
	count := len(mine)
	for _, r := range mine {
		if within(count) {
			break
		}
		if r.p.ID == keep || r.p.Status != StatusOpen || r.p.Held(now) || s.Pinned(r.p.ID, now) {
			continue
		}
		if err := s.RemovePending(r.p.ID); err != nil && !errors.Is(err, ErrNotFound) {
			return dropped, err
		}
		count--
		total -= r.size
		dropped = append(dropped, r.p)
	}
	if within(count) {
		return dropped, nil
	}
	if err := s.RemovePending(keep); err != nil && !errors.Is(err, ErrNotFound) {
		return dropped, err
	}
	total -= keepSize
	return dropped, fmt.Errorf("%w: session %s has %d pending calls (%d bytes of them); each is held by a hook, open before a human, or decided, so none may go to make room", ErrPendingFull, session, count-1, total)
}

// Retell records that the model was told reason about pending call id,
// not what the record says (the hook's deadline answered before its
// decision could): the record takes that reason, and detail says what
// was decided.
func (s *Store) Retell(id, reason, detail string) error {
	p, err := s.getMeta(id)
	if err != nil {
		return err
	}
	if p.Reason == reason {
		return nil
	}
	p.Reason, p.Detail = reason, detail
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return writeFile(s.path("pending"), p.ID+pendingSuffix, data, false)
}
