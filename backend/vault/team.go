package vault

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loopguard/loopguard/state"
	"github.com/loopguard/loopguard/token"
)

// Pending calls and approvals cross machines through KV v2, under the
// prefix, each agent machine under its own Vault identity (entity id E,
// given by `loopguard team enroll`):
//
//	pending/E/<id>    E's hook writes the call waiting for a human
//	approvals/E/<id>  an approver writes the grant token, or a refusal
//	claims/E/<grant>  E's hook uses a single-use grant, once (cas=0)
//
// The agent policy is templated on {{identity.entity.id}}: a machine's token
// writes, reads and claims under its own E only, so one machine cannot
// publish under another's name, read the approvals made for it, or claim
// its grants first.
//
// A pending record is what an agent machine says, and an approver trusts
// none of it: TeamGet checks that the record's digest is the digest of its
// call and that its id is the id that call, session and agent give, before
// anything of it is returned; the approver's side computes what it warns
// about from the call itself; what only the agent machine knows (its host
// name, its reason) comes back apart, as AgentSays, for a labelled block.

// ErrNoEntity is a Vault token with no identity of its own: it was not made
// by `loopguard team enroll`, and the agent policy lets it write nothing.
var ErrNoEntity = fmt.Errorf("%w: this machine's Vault token has no identity (entity); enroll the machine with `loopguard team enroll`", ErrDenied)

// entity is this custody's Vault identity, asked once (again after a
// Vault that did not answer).
type entity struct {
	mu  sync.Mutex
	id  string
	err error // ErrNoEntity, kept: the token will not grow one
}

// Entity returns the Vault entity id of the custody's token (the name of
// its directories under pending/, approvals/ and claims/).
func (c *Custody) Entity(ctx context.Context) (string, error) {
	c.ent.mu.Lock()
	defer c.ent.mu.Unlock()
	if c.ent.id != "" || c.ent.err != nil {
		return c.ent.id, c.ent.err
	}
	self, err := c.KV.C.LookupSelf(ctx)
	switch {
	case err != nil:
		return "", err
	case self.EntityID == "" || strings.IndexFunc(self.EntityID, notPathChar) >= 0:
		c.ent.err = ErrNoEntity
		return "", c.ent.err
	}
	c.ent.id = self.EntityID
	return c.ent.id, nil
}

// AgentSays is what an agent machine published about a call that only it
// can know and no one checked: shown in a block labelled as its words,
// never in loopguard's voice, never deciding whether a warning appears.
type AgentSays struct {
	Host       string
	Reason     string
	Detail     string
	Warnings   []string
	ProjectDir string
	AgentType  string
	Created    time.Time
	HeldUntil  time.Time
	// Seen is when, on its own clock, the machine held the call for the
	// version of the record read (the record's seen): its warnings were
	// computed after. An approval carries the Seen of the version its
	// approver was shown (Decide), and the machine dates the approval no
	// later than it: a repeat that publishes the record again, with the
	// same words, moves it (the ninety-fourth attack run).
	Seen time.Time
}

// TeamPending is a pending call published by an agent machine, as the
// approver's side read it.
type TeamPending struct {
	// Key is the record's path under pending/ ("E/<id>"), as listed.
	Key string
	// Machine is the Vault entity that wrote it (its directory: the agent
	// policy lets a token write only under its own), and MachineName the
	// name Vault knows it by ("" when the approver may not read it).
	Machine, MachineName string
	// Written is when Vault stored this version of the record (its own
	// metadata): the order of the team's queue.
	Written time.Time
	// Err is why the record is unreadable (nil when it verified); nothing
	// else of an unreadable record is returned.
	Err error
	// Pending holds only what the checks bind (id, session, agent, tool,
	// digest, the call) and what follows from the call (its cwd, as the
	// project): the rest of the record is in Says.
	Pending *state.Pending
	Says    AgentSays
	// Decision is the latest decision an approver wrote for the record
	// (nil: none); Open says whether it still stands.
	Decision *Decision
}

// Decision is the latest answer an approver wrote for a published call
// (approvals/E/<id>), as Vault holds it and as the approver's side reads
// its effect: whether the machine used the grant (its claim, which only
// its hook writes), whether the grant expired.
type Decision struct {
	// Version is the answer's KV version: the next decision is written
	// with check-and-set on it, so it is written once.
	Version int
	// Written is when Vault wrote it (its clock).
	Written time.Time
	// Principal is who decided; Token the grant of an approval ("" for a
	// refusal).
	Principal, Token string
	Denied           bool
	// Used: the machine claimed the approval's grant. Void: the grant
	// can no longer run the call (expired, or no grant at all).
	Used, Void bool
	// SpentAt is when the approval was spent: Vault's time of the claim,
	// the grant's expiry, or Written for a decision with no grant.
	SpentAt time.Time
}

// Spent reports an approval that can no longer run its call: used once,
// or void.
func (d *Decision) Spent() bool { return d != nil && !d.Denied && (d.Used || d.Void) }

// Open reports whether tp waits for a decision: none was written, or the
// approval written was spent before its machine published the call again
// (its agent asks for it again: a used approval does not block a new one).
// A record written again after the decision but before the approval was
// spent (the hook still waiting) does not open it. A refusal stands.
func (tp *TeamPending) Open() bool {
	d := tp.Decision
	return d == nil || (d.Spent() && tp.Written.After(d.SpentAt))
}

// ErrDecided is a decision refused because another stands: written by
// another approver first, or still in force.
var ErrDecided = errors.New("the call was decided already")

// DecidedError is ErrDecided with the decision that stands.
type DecidedError struct{ Decision *Decision }

func (e *DecidedError) Error() string { return ErrDecided.Error() }
func (e *DecidedError) Unwrap() error { return ErrDecided }

// The approver's reader bounds what one machine can make it read. Vault
// bounds neither the size nor the number of records a token writes under
// its own directory (an ACL names parameters, not their sizes), so the
// reader does, per machine: a record larger than it reads is flagged, past
// a number of records or of bytes the rest of that machine's records are
// not read (one line says how many), and records older than PendingTTL
// are expired and deleted. One machine's records never keep another
// machine's calls from being read.
const (
	// MaxRecordBytes bounds one published record (the call, the record
	// and the host, as JSON): Publish refuses more, and a record Vault
	// answers with more than maxResponse for is flagged unread.
	MaxRecordBytes = maxResponse - 16<<10
	// MaxRecordsPerMachine is how many of one machine's records a listing
	// reads.
	MaxRecordsPerMachine = 256
	// maxBytesPerMachine is how many bytes of one machine's records a
	// listing reads.
	maxBytesPerMachine = 16 << 20
	// maxUnreadablePerMachine is how many of one machine's unreadable
	// records are listed one by one; the rest are counted on one line.
	maxUnreadablePerMachine = 8
	// PendingTTL is how long a published record is shown after Vault
	// wrote it: a hook that still holds its call publishes it again.
	PendingTTL = 24 * time.Hour
)

// maxRecordFields bounds the agent's free text kept from a record.
const (
	maxSaysText     = 2048
	maxSaysWarnings = 32
)

// Publish puts p where approvers see it, under this machine's identity.
func (c *Custody) Publish(ctx context.Context, p *state.Pending) error {
	e, err := c.Entity(ctx)
	if err != nil {
		return err
	}
	rec, err := json.Marshal(p)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	data := map[string]any{"host": host, "record": string(rec), "call": base64.StdEncoding.EncodeToString(p.Descriptor)}
	if b, err := json.Marshal(data); err != nil || len(b) > MaxRecordBytes {
		return fmt.Errorf("the call is too large to publish to approvers (%d bytes as a record, at most %d): approve it on this machine", len(b), MaxRecordBytes)
	}
	return c.KV.Put(ctx, "pending/"+e+"/"+p.ID, data)
}

// Fetch returns the latest approval an approver wrote for this machine's
// pending id: a grant token, or the name of who refused the call. Both are
// "" when there is none yet. The hook judges the token (a grant it used
// already is no approval). shown is the Seen of the record's version the
// approver was shown (AgentSays.Seen, this machine's clock), zero when the
// approval does not say.
func (c *Custody) Fetch(ctx context.Context, id string) (tok, deniedBy string, shown time.Time, err error) {
	e, err := c.Entity(ctx)
	if err != nil {
		return "", "", time.Time{}, err
	}
	m, err := c.KV.Get(ctx, "approvals/"+e+"/"+id)
	if errors.Is(err, ErrNotFound) {
		return "", "", time.Time{}, nil
	}
	if err != nil {
		return "", "", time.Time{}, err
	}
	tok, _ = m["token"].(string)
	deniedBy, _ = m["denied_by"].(string)
	if s, _ := m["shown"].(string); s != "" {
		shown, _ = time.Parse(time.RFC3339Nano, s)
	}
	return tok, deniedBy, shown, nil
}

// Answer returns the decision that stands on the record at key ("E/<id>"):
// a grant token, or who refused the call; both "" when the call is open
// (TeamPending.Open).
func (c *Custody) Answer(ctx context.Context, key string) (tok, deniedBy string, err error) {
	tp, err := c.TeamGet(ctx, key)
	if err != nil || tp.Open() {
		return "", "", err
	}
	if d := tp.Decision; d.Denied {
		return "", d.Principal, nil
	}
	return tp.Decision.Token, "", nil
}

// decision reads the latest decision on the record at key ("E/<id>"), nil
// when there is none, and whether its grant was used (the machine's claim)
// or can no longer be.
func (c *Custody) decision(ctx context.Context, key string, now time.Time) (*Decision, error) {
	m, v, err := c.KV.GetMeta(ctx, "approvals/"+key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d := &Decision{Version: v.N, Written: v.Written}
	d.Principal, _ = m["principal"].(string)
	d.Token, _ = m["token"].(string)
	if by, _ := m["denied_by"].(string); by != "" {
		d.Denied, d.Principal = true, by
		return d, nil
	}
	g, err := token.Parse(d.Token)
	if d.Token == "" || err != nil || !g.Exact() {
		d.Void, d.SpentAt = true, d.Written
		return d, nil
	}
	e, _, _ := strings.Cut(key, "/")
	switch _, claimed, err := c.KV.GetVersion(ctx, "claims/"+e+"/"+g.ID()); {
	case err == nil:
		d.Used, d.SpentAt = true, claimed
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if d.Void = !now.Before(g.Expiry); d.Void && !d.Used {
		d.SpentAt = g.Expiry
	}
	return d, nil
}

// TeamKeys lists the keys of the records published across the team
// ("E/<id>"); a key that is not under a machine's directory (a record of
// an older layout) is listed as it is, and reads as unreadable. A machine
// whose directory is too large to list is left out (TeamList says so).
func (c *Custody) TeamKeys(ctx context.Context) ([]string, error) {
	top, err := c.KV.List(ctx, "pending")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, t := range top {
		e, dir := strings.CutSuffix(t, "/")
		if !dir {
			keys = append(keys, t)
			continue
		}
		ids, err := c.KV.List(ctx, "pending/"+e)
		switch {
		case errors.Is(err, errBadPath):
			keys = append(keys, t)
			continue
		case errors.Is(err, ErrTooLarge):
			continue
		case err != nil:
			return nil, err
		}
		for _, id := range ids {
			keys = append(keys, e+"/"+id)
		}
	}
	return keys, nil
}

// TeamList returns the records published across the team, the ones that
// verified (with the decision written for each) and the unreadable ones
// (Err set), newest first by Vault's own time of writing. Each machine's
// records are read within its bounds (MaxRecordsPerMachine, bytes,
// MaxRecordBytes); what a machine published past them is one unreadable
// line under its key "E/", and its expired records are deleted.
func (c *Custody) TeamList(ctx context.Context) ([]TeamPending, error) {
	top, err := c.KV.List(ctx, "pending")
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	now := time.Now()
	var out []TeamPending
	for _, t := range top {
		e, dir := strings.CutSuffix(t, "/")
		if !dir {
			tp, err := c.teamGet(ctx, t, names)
			if err != nil {
				return nil, err
			}
			out = append(out, *tp)
			continue
		}
		tps, err := c.machineList(ctx, e, names, now)
		if err != nil {
			return nil, err
		}
		out = append(out, tps...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Written.After(out[j].Written) })
	return out, nil
}

// machineList reads machine e's records within its bounds.
func (c *Custody) machineList(ctx context.Context, e string, names map[string]string, now time.Time) ([]TeamPending, error) {
	flag := func(format string, a ...any) TeamPending {
		tp := TeamPending{Key: e + "/", Machine: e, Err: fmt.Errorf(format, a...)}
		tp.MachineName = c.nameOf(ctx, e, names)
		return tp
	}
	ids, err := c.KV.List(ctx, "pending/"+e)
	switch {
	case errors.Is(err, errBadPath):
		return []TeamPending{{Key: e + "/", Err: errors.New("not under an agent machine's identity (a record of an older layout, or not loopguard's)")}}, nil
	case errors.Is(err, ErrTooLarge):
		return []TeamPending{flag("this machine published more records than can be listed (over %d bytes of names): none is shown; an administrator deletes them (vault kv metadata delete)", maxResponse)}, nil
	case err != nil:
		return nil, err
	}
	var out []TeamPending
	var read, bytes, unreadable int
	for _, id := range ids {
		if read == MaxRecordsPerMachine || bytes >= maxBytesPerMachine {
			break
		}
		read++
		key := e + "/" + id
		tp, n, err := c.teamRead(ctx, key, names)
		if err != nil {
			return nil, err
		}
		if tp.Machine == "" {
			// A record nested under e's directory is e's all the same.
			tp.Machine, tp.MachineName = e, c.nameOf(ctx, e, names)
		}
		bytes += n
		if c.expire(ctx, tp, now) {
			continue
		}
		if tp.Err != nil {
			if unreadable++; unreadable > maxUnreadablePerMachine {
				continue
			}
		} else if tp.Decision, err = c.decision(ctx, key, now); err != nil {
			return nil, err
		}
		out = append(out, *tp)
	}
	if n := unreadable - maxUnreadablePerMachine; n > 0 {
		out = append(out, flag("%d more unreadable records of this machine not listed", n))
	}
	if rest := len(ids) - read; rest > 0 {
		out = append(out, flag("this machine published %d records; %d of them (or %d bytes) are read per listing: the other %d are not shown (records expire %s after Vault wrote them)",
			len(ids), MaxRecordsPerMachine, maxBytesPerMachine, rest, PendingTTL))
	}
	return out, nil
}

// expire says whether tp's record expired (Vault wrote it more than
// PendingTTL ago), and deletes an expired one, all its versions (the
// approver's policy lets it delete a record, never write one; a deletion
// refused leaves it unshown all the same). A record Vault would not answer
// with (too large) is judged by its metadata.
func (c *Custody) expire(ctx context.Context, tp *TeamPending, now time.Time) bool {
	written := tp.Written
	if written.IsZero() && errors.Is(tp.Err, errRecordTooLarge) {
		written, _ = c.KV.Written(ctx, "pending/"+tp.Key)
	}
	ttl := c.RecordTTL
	if ttl <= 0 {
		ttl = PendingTTL
	}
	if written.IsZero() || now.Sub(written) <= ttl {
		return false
	}
	_ = c.KV.Destroy(ctx, "pending/"+tp.Key)
	return true
}

// TeamGet reads and verifies the record at key ("E/<id>") and the
// decision written for it. A record that does not verify comes back with
// Err set and nothing else of it but the decision; an error is Vault's (no
// answer, no permission).
func (c *Custody) TeamGet(ctx context.Context, key string) (*TeamPending, error) {
	tp, err := c.teamGet(ctx, key, map[string]string{})
	if err != nil {
		return nil, err
	}
	if tp.Machine != "" {
		if tp.Decision, err = c.decision(ctx, key, time.Now()); err != nil {
			return nil, err
		}
	}
	return tp, nil
}

func (c *Custody) teamGet(ctx context.Context, key string, names map[string]string) (*TeamPending, error) {
	tp, _, err := c.teamRead(ctx, key, names)
	return tp, err
}

// teamRead reads and verifies the record at key, and says how many bytes
// of it were read.
func (c *Custody) teamRead(ctx context.Context, key string, names map[string]string) (*TeamPending, int, error) {
	tp := &TeamPending{Key: key}
	e, id, ok := strings.Cut(key, "/")
	if !ok || strings.Contains(id, "/") {
		tp.Err = errors.New("not under an agent machine's identity (a record of an older layout, or not loopguard's)")
		return tp, 0, nil
	}
	tp.Machine = e
	tp.MachineName = c.nameOf(ctx, e, names)
	m, written, err := c.KV.GetVersion(ctx, "pending/"+key)
	switch {
	case errors.Is(err, errBadPath):
		tp.Err = errors.New("its key is not a pending id")
		return tp, 0, nil
	case errors.Is(err, ErrNotFound):
		tp.Err = errors.New("it was deleted")
		return tp, 0, nil
	case errors.Is(err, ErrTooLarge):
		tp.Err = errRecordTooLarge
		return tp, maxResponse, nil
	case err != nil:
		return nil, 0, err
	}
	tp.Written = written
	n := 0
	for _, v := range m {
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	if tp.Pending, tp.Says, tp.Err = VerifyRecord(id, m); tp.Err == nil {
		// Its age is Vault's, not what the record claims.
		tp.Pending.Created, tp.Pending.Seen = written, written
	}
	return tp, n, nil
}

// nameOf is machineName, asked once per listing.
func (c *Custody) nameOf(ctx context.Context, e string, names map[string]string) string {
	if name, ok := names[e]; ok {
		return name
	}
	names[e] = c.machineName(ctx, e)
	return names[e]
}

// machineName is the name Vault knows entity e by: the alias `team
// enroll` gave it, or the entity's own name ("" when the approver's token
// may not read identities).
func (c *Custody) machineName(ctx context.Context, e string) string {
	var out struct {
		Data struct {
			Name    string `json:"name"`
			Aliases []struct {
				Name      string `json:"name"`
				MountType string `json:"mount_type"`
			} `json:"aliases"`
		} `json:"data"`
	}
	if err := c.KV.C.Do(ctx, http.MethodGet, "identity/entity/id/"+e, nil, &out); err != nil {
		return ""
	}
	for _, a := range out.Data.Aliases {
		if a.MountType == "token" && a.Name != "" {
			return a.Name
		}
	}
	if !autoEntity.MatchString(out.Data.Name) {
		return out.Data.Name
	}
	return ""
}

// Reasons a published record is unreadable. They name the check that
// failed, never the record's contents.
var (
	errRecordShape  = errors.New("it does not decode as a pending call")
	errRecordDigest = errors.New("its digest is not the digest of its call")
	errRecordID     = errors.New("its id is not the id of its call, session, agent and tool")
	errRecordTool   = errors.New("its tool is not its call's tool")
	// errRecordTooLarge: MaxRecordBytes, as the reader reads it.
	errRecordTooLarge = fmt.Errorf("it is larger than %d bytes, the most a record may be: not read", maxResponse)
)

// VerifyRecord checks the KV data m published under pending id id and
// returns what an approver may show: the pending call built from what the
// checks bind (the call's canonical bytes, whose digest must be the
// record's digest; session, agent, tool and digest, which must give id)
// and from the call itself (its cwd, which is also the project); and,
// apart, what the agent machine says. A record that fails a check is an
// error and nothing of it is returned.
func VerifyRecord(id string, m map[string]any) (*state.Pending, AgentSays, error) {
	rec, _ := m["record"].(string)
	call, _ := m["call"].(string)
	var r state.Pending
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		return nil, AgentSays{}, errRecordShape
	}
	desc, err := base64.StdEncoding.DecodeString(call)
	if err != nil || len(desc) == 0 {
		return nil, AgentSays{}, errRecordShape
	}
	if token.DigestOf(desc) != r.Digest {
		return nil, AgentSays{}, errRecordDigest
	}
	if r.ID != id || state.PendingID(r.Session, r.Agent, r.Tool, r.Digest) != id {
		return nil, AgentSays{}, errRecordID
	}
	v, err := token.Decode(desc)
	if err != nil {
		return nil, AgentSays{}, errRecordShape
	}
	dm, _ := v.(map[string]any)
	tool, _ := dm["tool"].(string)
	cwd, _ := dm["cwd"].(string)
	if tool != r.Tool {
		return nil, AgentSays{}, errRecordTool
	}
	p := &state.Pending{
		ID: id, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Digest: r.Digest, Descriptor: desc,
		Cwd: cwd, ProjectDir: cwd, Status: state.StatusOpen, Away: true,
	}
	host, _ := m["host"].(string)
	says := AgentSays{Host: clip(host), Reason: clip(r.Reason), Detail: clip(r.Detail), ProjectDir: clip(r.ProjectDir),
		AgentType: clip(r.AgentType), Created: r.Created, HeldUntil: r.HeldUntil, Seen: r.Seen}
	for i, w := range r.Warnings {
		if i == maxSaysWarnings {
			says.Warnings = append(says.Warnings, fmt.Sprintf("(%d more not shown)", len(r.Warnings)-i))
			break
		}
		says.Warnings = append(says.Warnings, clip(w))
	}
	return p, says, nil
}

// clip bounds one of the agent's strings.
func clip(s string) string {
	if len(s) > maxSaysText {
		return s[:maxSaysText] + "..."
	}
	return s
}

// Decide records an approver's decision on the record at key ("E/<id>"): a
// grant token, or a refusal by principal. Only machine E reads it. An
// approval carries shown, the Seen of the record's version the approver
// was shown (AgentSays.Seen; zero: not said): its machine dates the
// approval no later than that (Fetch). It is
// written once: only while no decision stands (TeamPending.Open), with
// check-and-set on the version read, so of approvers deciding at once one
// wins; the others, and a decision over one that stands, get a
// *DecidedError naming the decision that stands.
func (c *Custody) Decide(ctx context.Context, key, tok, principal string, shown, now time.Time) error {
	tp, err := c.TeamGet(ctx, key)
	if err != nil {
		return err
	}
	if !tp.Open() {
		return &DecidedError{Decision: tp.Decision}
	}
	prev := 0
	if tp.Decision != nil {
		prev = tp.Decision.Version
	}
	data := map[string]any{"principal": principal, "time": now.UTC().Format(time.RFC3339)}
	if tok != "" {
		data["token"] = tok
		if !shown.IsZero() {
			data["shown"] = shown.UTC().Format(time.RFC3339Nano)
		}
	} else {
		data["denied_by"] = principal
	}
	err = c.KV.PutCAS(ctx, "approvals/"+key, data, prev)
	if errors.Is(err, ErrCASMismatch) {
		d, _ := c.decision(ctx, key, now)
		return &DecidedError{Decision: d}
	}
	return err
}

// Enrolled is an agent machine's new Vault identity and token.
type Enrolled struct {
	Token    string
	EntityID string
	Name     string
}

// Enroll makes the token of agent machine name (an administrator's client
// c, with the enroll policy): through the token role AgentRole, with the
// entity alias name, so the token has an identity of its own and the agent
// policy's paths are that machine's. Enrolling a name again makes another
// token of the same identity.
func Enroll(ctx context.Context, c *Client, name string, ttl time.Duration) (*Enrolled, error) {
	if name == "" || len(name) > 64 || strings.IndexFunc(name, notPathChar) >= 0 {
		return nil, fmt.Errorf("machine name %q: want 1 to 64 letters, digits, '.', '-', '_'", name)
	}
	var out struct {
		Auth struct {
			ClientToken string   `json:"client_token"`
			EntityID    string   `json:"entity_id"`
			Policies    []string `json:"token_policies"`
		} `json:"auth"`
	}
	body := map[string]any{"entity_alias": name, "display_name": name, "ttl": ttl.String(), "policies": []string{"loopguard-agent"}}
	if err := c.Do(ctx, http.MethodPost, "auth/token/create/"+AgentRole, body, &out); err != nil {
		return nil, err
	}
	if out.Auth.ClientToken == "" || out.Auth.EntityID == "" {
		return nil, &Error{Op: "enroll", Msg: "Vault made a token without an identity (is the role's allowed_entity_aliases set?)", kind: ErrUnavailable}
	}
	return &Enrolled{Token: out.Auth.ClientToken, EntityID: out.Auth.EntityID, Name: name}, nil
}
